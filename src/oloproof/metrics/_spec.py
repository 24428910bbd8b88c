"""Metric names and cutoffs, parsed in one place.

A metric is written either as ``name@k`` (``ndcg@10``) or in the criterion form
``name_at_k`` (``ndcg_at_10``); metrics without a cutoff are written as their bare
name (``fidelity``, ``r_precision``). Parsing ignores surrounding whitespace and
letter case. The SDK output name ``top{k}_max_relevance`` is accepted as
``max_relevance@k``.

``r_precision`` takes no cutoff: trec_eval's ``Rprec`` cuts each query at its own
number of relevant units ``R``, so a fixed ``k`` would make it another metric.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from oloproof._exceptions import ConfigError

__all__ = [
    "CUTOFF_METRICS",
    "METRIC_NAMES",
    "PLAIN_METRICS",
    "MetricSpec",
    "parse_metric",
]

#: Metrics that need a cutoff ``k``.
CUTOFF_METRICS: frozenset[str] = frozenset(
    {"hit_rate", "recall", "precision", "mrr", "map", "ndcg", "xdcg", "max_relevance"}
)
#: Metrics that take no cutoff: R-precision (cut at each query's own ``R``) and
#: those of the ``document_retrieval`` composite.
PLAIN_METRICS: frozenset[str] = frozenset(
    {"r_precision", "fidelity", "holes", "holes_ratio", "top1_relevance"}
)
#: Every metric name :func:`parse_metric` knows.
METRIC_NAMES: frozenset[str] = CUTOFF_METRICS | PLAIN_METRICS

_AT_FORM = re.compile(r"^(?P<name>[a-z0-9_]+?)(?:@|_at_)(?P<k>.*)$")
_SDK_MAX_RELEVANCE = re.compile(r"^top(?P<k>[0-9]+)_max_relevance$")


def _known() -> str:
    return ", ".join(sorted(METRIC_NAMES))


@dataclass(frozen=True)
class MetricSpec:
    """A metric name with its cutoff.

    Attributes:
        name: One of :data:`METRIC_NAMES`.
        k: The rank cutoff, an int >= 1, for the metrics in :data:`CUTOFF_METRICS`;
            ``None`` for those in :data:`PLAIN_METRICS`.

    Raises:
        ConfigError: If the name is unknown, or ``k`` is missing, not an int >= 1,
            or given to a metric that takes none.
    """

    name: str
    k: int | None

    def __post_init__(self) -> None:
        text = _render(self.name, self.k)
        if self.name not in METRIC_NAMES:
            raise ConfigError(
                f"unknown metric {self.name!r} in {text!r}; known metrics: {_known()}",
                field="name",
            )
        if self.name in CUTOFF_METRICS:
            if self.k is None:
                raise ConfigError(
                    f"metric {text!r} needs a cutoff, e.g. '{self.name}@10'", field="k"
                )
            if isinstance(self.k, bool) or not isinstance(self.k, int) or self.k < 1:
                raise ConfigError(
                    f"cutoff of {text!r} must be an integer >= 1, got {self.k!r}", field="k"
                )
        elif self.k is not None:
            raise ConfigError(
                f"metric {self.name!r} takes no cutoff, got {text!r}", field="k"
            )

    @property
    def criterion(self) -> str:
        """The identifier form, e.g. ``ndcg_at_10`` or ``fidelity``."""
        return self.name if self.k is None else f"{self.name}_at_{self.k}"

    def __str__(self) -> str:
        return _render(self.name, self.k)


def _render(name: object, k: object) -> str:
    return f"{name}" if k is None else f"{name}@{k}"


def parse_metric(text: str) -> MetricSpec:
    """Parse a metric written as ``name@k``, ``name_at_k`` or a bare name.

    Args:
        text: E.g. ``"ndcg@10"``, ``"hit_rate_at_2"``, ``"fidelity"`` or
            ``"top3_max_relevance"``.

    Returns:
        The parsed :class:`MetricSpec`.

    Raises:
        ConfigError: If ``text`` is not a string, names an unknown metric
            (``field="name"``), or has a missing or invalid cutoff (``field="k"``).

    Examples:
        >>> parse_metric("ndcg_at_10")
        MetricSpec(name='ndcg', k=10)
        >>> str(parse_metric("ndcg_at_10"))
        'ndcg@10'
    """
    if not isinstance(text, str):
        raise ConfigError(
            f"a metric must be a string such as 'ndcg@10', got {text!r}", field="name"
        )
    cleaned = text.strip().lower()
    sdk = _SDK_MAX_RELEVANCE.match(cleaned)
    if sdk is not None:
        return MetricSpec("max_relevance", _parse_k(sdk.group("k"), text))
    if cleaned in METRIC_NAMES:
        return MetricSpec(cleaned, None)
    match = _AT_FORM.match(cleaned)
    if match is None or match.group("name") not in METRIC_NAMES:
        raise ConfigError(
            f"unknown metric {text!r}; known metrics: {_known()} "
            "(written as 'name@k' or 'name_at_k', e.g. 'ndcg@10')",
            field="name",
        )
    name = match.group("name")
    if name in PLAIN_METRICS:
        raise ConfigError(f"metric {name!r} takes no cutoff, got {text!r}", field="k")
    return MetricSpec(name, _parse_k(match.group("k"), text))


def _parse_k(raw: str, text: str) -> int:
    if not re.fullmatch(r"[0-9]+", raw) or int(raw) < 1:
        raise ConfigError(f"cutoff of {text!r} must be an integer >= 1, got {raw!r}", field="k")
    return int(raw)
