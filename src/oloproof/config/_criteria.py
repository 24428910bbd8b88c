"""The catalogue's ``testing_criteria``, accepted as written, mapped onto evaluators.

An entry reads::

    {"type": "azure_ai_evaluator", "name": "groundedness",
     "evaluator_name": "builtin.groundedness",
     "initialization_parameters": {"deployment_name": "gpt-4o"},
     "threshold": 3,
     "data_mapping": {"context": "{{item.context}}", "response": "{{item.response}}"}}

and becomes the evaluator entry ``{type: groundedness, criterion: groundedness,
provider: …, model: gpt-4o, threshold: 3, data_mapping: …}``. The deployment (or
``model``) name selects a provider: the one listing it under ``deployments``, or
the only one configured; the model called is the deployment's name. Every other
initialization parameter must be an option of the evaluator. A criterion's name holds
at most 256 characters. Errors name the criteria file (or ``oloproof.yaml``), the line
and the entry's own field.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from oloproof._exceptions import ConfigError
from oloproof._json import load_json
from oloproof._limits import MAX_NAME, dotted, shown
from oloproof.config._yaml import YamlMapping, load_yaml_with_lines, locate, read_config_text, yaml_lines

__all__ = ["BUILTINS", "CRITERION_TYPE", "Criteria", "load_criteria"]

CRITERION_TYPE = "azure_ai_evaluator"
"""The one ``type`` of a testing criterion."""

BUILTINS: Mapping[str, str] = {
    "builtin.document_retrieval": "document_retrieval",
    "builtin.groundedness": "groundedness",
    "builtin.groundedness_pro": "groundedness_pro",
    "builtin.relevance": "relevance",
    "builtin.response_completeness": "response_completeness",
    "builtin.retrieval": "retrieval",
}
"""The catalogue's evaluators, by ``evaluator_name``, and Oloproof's type for each."""

_MODEL_KEYS = ("deployment_name", "model")
_KNOWN_KEYS = ("type", "name", "evaluator_name", "initialization_parameters", "threshold", "data_mapping")

Location = tuple[str | int, ...]


@dataclass(frozen=True)
class Criteria:
    """``testing_criteria`` translated into evaluator entries, with where each came from."""

    # As an ``evaluators:`` entry in YAML: the evaluator's options model validates them.
    entries: list[YamlMapping]
    """One evaluator entry per criterion, in order."""
    path: str
    """The file the criteria were read from."""
    lines: dict[Location, int] = field(default_factory=dict, repr=False)
    """Line of each key path of that file."""
    prefix: Location = ()
    """Where the criteria list starts in that file (``("testing_criteria",)`` inline)."""
    origins: list[dict[str, Location]] = field(default_factory=list, repr=False)
    """Per entry: the criterion's own key path of each evaluator option."""

    def error(self, message: str, location: Location) -> ConfigError:
        """A ConfigError at the criterion field behind evaluator ``location``
        (``("evaluators", index, option, …)``)."""
        index = int(location[1]) if len(location) > 1 else 0
        rest = tuple(location[2:])
        origin = self.origins[index] if index < len(self.origins) else {}
        where: Location = (index,)
        if rest:
            mapped = origin.get(str(rest[0]))
            where = (index, *(mapped if mapped is not None else rest[:1]), *rest[1:])
        full = (*self.prefix, *where)
        return ConfigError(message, path=self.path, line=locate(self.lines, full), field=dotted(full))


def load_criteria(
    value: list[Any] | str,
    *,
    directory: Path,
    config_path: str,
    config_lines: dict[Location, int],
    providers: Mapping[str, Any],
) -> Criteria:
    """Read and translate ``testing_criteria`` (inline, or a file path).

    Raises:
        ConfigError: The file cannot be read or parsed, or an entry is invalid: not
            a mapping, another ``type``, an unknown ``builtin.*`` name, a deployment
            no provider serves.
    """
    if isinstance(value, str):
        file = (directory / value).expanduser()
        data, lines = _read(file)
        source = Criteria(entries=[], path=str(file), lines=lines)
    else:
        data = value
        source = Criteria(entries=[], path=config_path, lines=config_lines, prefix=("testing_criteria",))
    if not isinstance(data, list):
        raise ConfigError("expected a list of testing criteria", path=source.path,
                          line=locate(source.lines, source.prefix))  # fmt: skip
    entries: list[YamlMapping] = []
    origins: list[dict[str, Location]] = []
    for index, item in enumerate(data):
        entry, origin = _translate(item, index, source, providers)
        entries.append(entry)
        origins.append(origin)
    return Criteria(entries=entries, path=source.path, lines=source.lines, prefix=source.prefix, origins=origins)


def _read(file: Path) -> tuple[Any, dict[Location, int]]:
    text = read_config_text(file, "testing criteria file")
    if file.suffix.lower() != ".json":
        return load_yaml_with_lines(text, path=str(file))
    try:  # JSON is YAML: its node tree gives each key's line
        lines = yaml_lines(text, path=str(file))
    except ConfigError:
        lines = {}
    data = load_json(text, error=ConfigError, path=str(file), locate=lambda where: locate(lines, where))
    return data, lines


def _translate(
    item: Any, index: int, source: Criteria, providers: Mapping[str, Any]
) -> tuple[YamlMapping, dict[str, Location]]:
    def fail(message: str, *where: str | int) -> ConfigError:
        full = (*source.prefix, index, *where)
        return ConfigError(message, path=source.path, line=locate(source.lines, full), field=dotted(full))

    if not isinstance(item, dict):
        raise fail(f"expected a mapping with type {CRITERION_TYPE!r}, got {type(item).__name__}")
    if item.get("type") != CRITERION_TYPE:
        raise fail(f"unknown criterion type {shown(item.get('type'))} (expected {CRITERION_TYPE!r})", "type")
    unknown = [key for key in item if key not in _KNOWN_KEYS]
    if unknown:
        raise fail(f"unknown field (a criterion has {', '.join(_KNOWN_KEYS)})", unknown[0])
    name = item.get("evaluator_name")
    if not isinstance(name, str) or name not in BUILTINS:  # a list or a mapping cannot even be looked up
        raise fail(f"unknown evaluator {shown(name)} (supported: {', '.join(sorted(BUILTINS))})", "evaluator_name")
    if not isinstance(item.get("name"), str) or not item["name"].strip():
        raise fail("every criterion needs a 'name'", "name")
    if len(item["name"]) > MAX_NAME:
        raise fail(f"a criterion's name holds at most {MAX_NAME} characters", "name")
    entry: YamlMapping = {"type": BUILTINS[name], "criterion": item["name"]}
    origin: dict[str, Location] = {"type": ("evaluator_name",), "criterion": ("name",)}
    parameters = item.get("initialization_parameters") or {}
    if not isinstance(parameters, dict):
        raise fail("expected a mapping", "initialization_parameters")
    deployment = next((key for key in _MODEL_KEYS if key in parameters), None)
    if deployment is not None:
        entry["provider"], entry["model"] = _serving(parameters[deployment], providers, fail, deployment)
        origin["provider"] = origin["model"] = ("initialization_parameters", deployment)
    for key, value in parameters.items():
        if key not in _MODEL_KEYS:
            entry[key] = value
            origin[key] = ("initialization_parameters", key)
    for key in ("threshold", "data_mapping"):
        if key in item:
            entry[key] = item[key]
            origin[key] = (key,)
    return entry, origin


def _serving(deployment: Any, providers: Mapping[str, Any], fail: Any, key: str) -> tuple[str, str]:
    if not isinstance(deployment, str) or not deployment:
        raise fail("expected the name of a model deployment", "initialization_parameters", key)
    listing = [name for name, config in providers.items() if deployment in getattr(config, "deployments", ())]
    if len(listing) == 1:
        return listing[0], deployment
    if len(listing) > 1:
        raise fail(f"deployment {shown(deployment)} is listed by several providers: {', '.join(sorted(listing))}",
                   "initialization_parameters", key)  # fmt: skip
    if len(providers) == 1:
        return next(iter(providers)), deployment
    configured = ", ".join(sorted(providers)) or "none"
    raise fail(
        f"no provider serves deployment {shown(deployment)} (configured: {configured}; list it under a "
        "provider's 'deployments', or set OPENAI_BASE_URL / AZURE_OPENAI_ENDPOINT when running without oloproof.yaml)",
        "initialization_parameters", key,
    )
