"""YAML loading that remembers where every value came from.

Pydantic reports a field path; users need a file and line. We compose the YAML
node tree once and map each key path to the line it starts on.
"""

from __future__ import annotations

from typing import Any

import yaml

from oloproof._exceptions import ConfigError

__all__ = ["load_yaml_with_lines", "locate"]

Path = tuple[str | int, ...]


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
        _walk(node, (), lines)
    return ({} if data is None else data), lines


def _walk(node: yaml.Node, prefix: Path, lines: dict[Path, int]) -> None:
    lines.setdefault(prefix, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key = prefix + (str(key_node.value),)
            lines[key] = key_node.start_mark.line + 1
            _walk(value_node, key, lines)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _walk(item, prefix + (index,), lines)


def locate(lines: dict[Path, int], location: Path) -> int | None:
    """Return the line of the longest known prefix of ``location``."""
    for end in range(len(location), -1, -1):
        line = lines.get(tuple(location[:end]))
        if line is not None:
            return line
    return None
