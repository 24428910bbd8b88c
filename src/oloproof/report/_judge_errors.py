"""What went wrong with each judge provider that failed some judgments.

A provider that failed (its server gone, a quota spent) leaves cases missing;
the ``Judges:`` line counts the errors, and one line per such provider says
which provider, how many judgments and why, from what the run's manifest keeps
in its judge usage (``error_kinds`` and ``error_samples``), so that a report
shown later says the same as the run did.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pydantic import JsonValue
from typing_extensions import TypedDict

from oloproof.records import JudgeUsage

__all__ = ["Judges", "ProviderErrors", "judge_error_lines", "judge_usages", "provider_errors"]

Judges = Sequence[JudgeUsage | Mapping[str, JsonValue]]
"""A manifest's ``judges``: its judge usage entries, typed or as stored JSON."""


class ProviderErrors(TypedDict):
    """What one provider's errors came to over a run.

    Attributes:
        provider: The provider's name.
        missing: Judgments that ended in an error.
        kinds: How many kinds of error.
        kind: The most frequent kind; ``None`` for a manifest that kept no kinds.
        count: Errors of that kind.
        message: One of its messages.
    """

    provider: str
    missing: int
    kinds: int
    kind: str | None
    count: int | None
    message: str | None


@dataclass
class _Merged:
    missing: int = 0
    kinds: dict[str, int] = field(default_factory=dict)
    samples: dict[str, str] = field(default_factory=dict)


def judge_usages(judges: Judges) -> list[JudgeUsage]:
    """``judges`` as typed usage entries; a stored entry is validated as the manifest's."""
    return [entry if isinstance(entry, JudgeUsage) else JudgeUsage.model_validate(entry) for entry in judges]


def provider_errors(judges: Judges) -> list[ProviderErrors]:
    """One entry per provider with errors, by name, over all its models.

    Args:
        judges: The manifest's ``judges`` (per provider and model).

    Returns:
        Per provider: ``provider``, ``missing`` (judgments that ended in an error),
        ``kinds`` (how many kinds of error), ``kind`` (the most frequent), ``count``
        (its errors) and ``message`` (one of its messages); ``kind`` and ``message``
        are ``None`` for a manifest that kept no kinds.
    """
    merged: dict[str, _Merged] = {}
    for entry in judge_usages(judges):
        if not entry.errors:
            continue
        provider = merged.setdefault(entry.provider, _Merged())
        provider.missing += entry.errors
        for kind, count in entry.error_kinds.items():
            provider.kinds[kind] = provider.kinds.get(kind, 0) + count
        for kind, message in entry.error_samples.items():
            provider.samples.setdefault(kind, message)
    rows: list[ProviderErrors] = []
    for name in sorted(merged):
        kinds = merged[name].kinds
        # The most frequent kind; ties go to the first by name, so reports do not flicker.
        top = min(kinds, key=lambda kind: (-kinds[kind], kind)) if kinds else None
        rows.append({
            "provider": name,
            "missing": merged[name].missing,
            "kinds": len(kinds),
            "kind": top,
            "count": kinds[top] if top is not None else None,
            "message": merged[name].samples.get(top, top) if top is not None else None,
        })  # fmt: skip
    return rows


def judge_error_lines(judges: Judges) -> list[str]:
    """``judge provider 'local': 371 judgments missing, connection refused at http://…``,
    one line per provider with errors; nothing when no judgment failed.

    With several kinds of error, the line names the most frequent and says how many
    kinds there were.
    """
    lines = []
    for row in provider_errors(judges):
        missing = f"{row['missing']:,} judgment{'s' if row['missing'] != 1 else ''} missing"
        head = f"judge provider {row['provider']!r}: {missing}"
        if row["kind"] is None:
            lines.append(f"{head} (judge errors)")
        elif row["kinds"] == 1:
            lines.append(f"{head}, {row['message']}")
        else:
            lines.append(f"{head}, {row['kinds']} kinds of error; most often ({row['count']:,}): {row['message']}")
    return lines
