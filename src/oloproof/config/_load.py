"""Load ``oloproof.yaml``, apply ``--set`` overrides and validate.

Every error names the file (or ``--set``), the line and the dotted field.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeAlias

import yaml
from pydantic import ValidationError

from oloproof._exceptions import ConfigError
from oloproof._limits import MAX_DEPTH, MAX_NAME, bad_text, shown
from oloproof._limits import dotted as field_of
from oloproof.config._describe import describe
from oloproof.config._project import ProjectConfig
from oloproof.config._yaml import YamlMapping, YamlValue, load_yaml_with_lines, locate, read_config_text, yaml_value
from oloproof.providers import ProviderConfig

__all__ = [
    "CONFIG_NAME",
    "Overrides",
    "Project",
    "apply_settings",
    "load_project",
    "parse_override",
    "parse_overrides",
]

CONFIG_NAME = "oloproof.yaml"

Overrides: TypeAlias = dict[str, YamlValue]
"""``--set`` settings: each dotted key to its YAML-typed value, in the order given."""


@dataclass(frozen=True)
class Project:
    """A validated project: its folder, its configuration and where each value came from."""

    directory: Path
    config_path: Path
    config: ProjectConfig
    lines: dict[tuple[str | int, ...], int] = field(default_factory=dict, repr=False)
    overridden: frozenset[str] = frozenset()
    implicit: bool = False
    """No ``oloproof.yaml``: the command line named the dataset, the environment the providers."""

    @property
    def results_url(self) -> str:
        """The results store URL, absolute for local paths."""
        raw = self.config.results or ".oloproof/results"
        if "://" in raw:
            return raw
        return str((self.directory / raw).resolve())

    @property
    def dataset_url(self) -> str:
        """The cases file, absolute for local paths."""
        raw = self.config.dataset
        if "://" in raw:
            return raw
        return str((self.directory / raw).resolve())

    def error(self, message: str, location: tuple[str | int, ...]) -> ConfigError:
        """Build a ConfigError pointing at ``location`` in the file or at ``--set``."""
        shown_field = field_of(location)
        if self.implicit and location[:1] == ("providers",):
            return ConfigError(message, path="environment", field=shown_field)
        name = ".".join(str(part) for part in location)
        if any(name == key or name.startswith(key + ".") for key in self.overridden):
            return ConfigError(message, path="--set", field=shown_field)
        # A key the file does not have, which only a --set below it introduced, is the --set's.
        if tuple(location) not in self.lines and any(key.startswith(name + ".") for key in self.overridden):
            return ConfigError(message, path="--set", field=shown_field)
        return ConfigError(message, path=str(self.config_path), line=locate(self.lines, location), field=shown_field)


def parse_override(text: str) -> tuple[list[str], YamlValue]:
    """Split ``key.path=value`` into the key path and a YAML-typed value.

    A value that is not YAML is taken as the text it is; one that is YAML is held
    to a file's limits (depth, size, unique keys).

    Raises:
        ConfigError: The override has no ``=`` or an empty key, is not valid Unicode
            (a command line's undecodable bytes), or its value breaks a limit.
    """
    problem = bad_text(text)
    if problem is not None:
        raise ConfigError(f"{problem} (the command line is not UTF-8 text)", path="--set",
                          field=field_of((text.partition("=")[0].strip()[:MAX_NAME],)))  # fmt: skip
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not key or any(not part for part in key.split(".")):
        raise ConfigError(
            f"invalid override {shown(text)}: expected key.path=value", path="--set",
            field=field_of((key[:MAX_NAME],) if key else ()),
        )
    if key.count(".") >= MAX_DEPTH:
        raise ConfigError(f"a key path of more than {MAX_DEPTH} parts: refused", path="--set",
                          field=field_of((key[:MAX_NAME] + "…",)))  # fmt: skip
    value: YamlValue
    try:
        value = yaml_value(raw, path="--set") if raw.strip() else None
    except ConfigError as error:
        inner = f".{error.field}" if error.field else ""
        raise ConfigError(error.message, path="--set", field=f"{field_of((key,))}{inner}") from None
    except yaml.YAMLError:
        value = raw
    return key.split("."), value


def parse_overrides(texts: list[str]) -> Overrides:
    """``--set`` strings as settings: dotted key to YAML-typed value, in order.

    This is the one place command-line text becomes values; everything after it
    passes the values themselves.

    Raises:
        ConfigError: An override has no ``=`` or an empty key.
    """
    settings: Overrides = {}
    for text in texts:
        keys, value = parse_override(text)
        dotted = ".".join(keys)
        settings.pop(dotted, None)  # a repeated key applies where it was last given
        settings[dotted] = value
    return settings


def apply_settings(data: YamlMapping, settings: Mapping[str, YamlValue]) -> tuple[YamlMapping, set[str]]:
    """Return a copy of ``data`` with each ``dotted.key: value`` setting applied."""
    result = _deep_copy_mapping(data)
    touched: set[str] = set()
    for dotted, value in settings.items():
        keys = dotted.split(".")
        node = result
        for depth, key in enumerate(keys[:-1]):
            child = node.get(key)
            if child is None:
                child = node[key] = {}
            if not isinstance(child, dict):
                raise ConfigError(
                    f"cannot set {field_of((dotted,))}: {field_of(tuple(keys[: depth + 1]))} is not a mapping",
                    path="--set",
                    field=field_of((dotted,)),
                )
            node = child
        node[keys[-1]] = _deep_copy(value)
        touched.add(dotted)
    return result, touched


def _deep_copy_mapping(value: YamlMapping) -> YamlMapping:
    return {key: _deep_copy(item) for key, item in value.items()}


def _deep_copy(value: YamlValue) -> YamlValue:
    if isinstance(value, dict):
        return _deep_copy_mapping(value)
    if isinstance(value, list):
        return [_deep_copy(item) for item in value]
    return value


def load_project(
    directory: str | os.PathLike[str],
    settings: Mapping[str, YamlValue] | None = None,
    *,
    results: str | None = None,
) -> Project:
    """Read and validate ``<directory>/oloproof.yaml`` with settings applied over it.

    Args:
        directory: The project folder, or the path of an ``oloproof.yaml`` file.
        settings: ``dotted.key: value`` settings (``--set``), applied after the file.
        results: A results store URL that replaces the file's ``results`` (``--results``),
            taken as it is: never parsed as a value.

    Returns:
        The validated project.

    Raises:
        ConfigError: The file is missing or invalid, or an override is.
    """
    target = Path(directory).expanduser()
    config_path = target if target.suffix in {".yaml", ".yml"} else target / CONFIG_NAME
    settings = settings or {}
    if "results" in settings and (settings["results"] is None or not str(settings["results"]).strip()):
        # `--set results=` would otherwise mean the default store without a word.
        raise ConfigError("must not be empty (leave the setting out for the default)", path="--set", field="results")
    if config_path.is_file():
        text = read_config_text(config_path, "configuration file")
        data, lines = load_yaml_with_lines(text, path=str(config_path))
        if not isinstance(data, dict):
            raise ConfigError("expected a mapping at the top level", path=str(config_path), line=1)
    elif "dataset" in settings and config_path.parent.is_dir():
        # A run of recorded data names its dataset itself: the folder needs no
        # oloproof.yaml, and the judges' providers are the SDKs' own variables.
        from oloproof.providers import providers_from_environment

        data, lines = {"providers": _implicit_providers(providers_from_environment)}, {}
    else:
        raise ConfigError(f"no {CONFIG_NAME} found (expected a project folder)", path=str(config_path))
    data, touched = apply_settings(data, settings)
    if results is not None:
        data["results"] = results
        touched.add("results")
    project = Project(
        directory=config_path.parent.resolve(),
        config_path=config_path,
        config=ProjectConfig.model_construct(),
        lines=lines,
        overridden=frozenset(touched),
        implicit=not config_path.is_file(),
    )
    try:
        config = ProjectConfig.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        location = tuple(first["loc"])
        # A provider entry's values are never echoed: a key pasted into the wrong
        # field must not reach a terminal or a log.
        raise project.error(describe(first, echo=location[:1] != ("providers",)), location) from None
    return Project(
        directory=project.directory,
        config_path=config_path,
        config=config,
        lines=lines,
        overridden=project.overridden,
        implicit=project.implicit,
    )


def _implicit_providers(from_environment: Callable[[Mapping[str, str]], Mapping[str, ProviderConfig]]) -> YamlMapping:
    from oloproof._exceptions import ProviderConfigError

    try:
        return dict(from_environment(os.environ))
    except ProviderConfigError as error:
        raise ConfigError(f"{error.message} (from the environment)", path="environment",
                          field=error.field) from None  # fmt: skip
