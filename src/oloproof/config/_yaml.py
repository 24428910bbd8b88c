"""YAML loading that remembers where every value came from.

Pydantic reports a field path; users need a file and line. We compose the YAML
node tree once and map each key path to the line it starts on.

Aliases are allowed (``<<: *defaults`` is common), but a document that expands to
more than `MAX_VALUES` values is refused before anything walks or validates it: a
few nested aliases can otherwise stand for billions of values ("billion laughs").
"""

from __future__ import annotations

from os import PathLike
from typing import Any

import yaml

from oloproof._exceptions import ConfigError

__all__ = ["MAX_VALUES", "load_yaml_with_lines", "locate", "read_config_text"]

Path = tuple[str | int, ...]

MAX_VALUES = 100_000
"""The most values (keys, items and scalars, aliases expanded) a configuration may hold."""


def read_config_text(path: str | PathLike[str], what: str = "file") -> str:
    """A configuration file's text; a file that is not UTF-8 is one error naming its line.

    Raises:
        ConfigError: The file is missing, unreadable or not UTF-8.
    """
    try:
        raw = open(path, "rb").read()  # noqa: SIM115 (closed when read)
    except FileNotFoundError:
        raise ConfigError(f"{what} not found", path=str(path)) from None
    except OSError as error:
        raise ConfigError(f"cannot read the {what}: {error.strerror or error}", path=str(path)) from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        raise ConfigError(f"not UTF-8 text (byte 0x{raw[error.start]:02x}): save the file as UTF-8",
                          path=str(path), line=line) from None  # fmt: skip


def load_yaml_with_lines(text: str, *, path: str) -> tuple[Any, dict[Path, int]]:
    """Parse YAML and return the data with a map from key path to 1-based line.

    Args:
        text: The YAML document.
        path: The file name, for error messages.

    Returns:
        The parsed data (``{}`` for an empty document) and the line map.

    Raises:
        ConfigError: The document is not valid YAML.
    """
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(f"invalid YAML: {problem}", path=path, line=line) from None
    lines: dict[Path, int] = {}
    if node is not None:
        _Walk(path, lines).walk(node, ())
    return ({} if data is None else data), lines


class _Walk:
    """The line map, built with a budget: aliases are expanded as they are visited."""

    def __init__(self, path: str, lines: dict[Path, int]) -> None:
        self.path, self.lines, self.left = path, lines, MAX_VALUES

    def walk(self, node: yaml.Node, prefix: Path) -> None:
        self.left -= 1
        if self.left < 0:
            raise ConfigError(
                f"the document expands to more than {MAX_VALUES:,} values (YAML aliases nested "
                "inside one another): refused", path=self.path, line=node.start_mark.line + 1,
            )  # fmt: skip
        self.lines.setdefault(prefix, node.start_mark.line + 1)
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                key = prefix + (str(key_node.value),)
                self.lines[key] = key_node.start_mark.line + 1
                self.walk(value_node, key)
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                self.walk(item, prefix + (index,))


def locate(lines: dict[Path, int], location: Path) -> int | None:
    """Return the line of the longest known prefix of ``location``."""
    for end in range(len(location), -1, -1):
        line = lines.get(tuple(location[:end]))
        if line is not None:
            return line
    return None
