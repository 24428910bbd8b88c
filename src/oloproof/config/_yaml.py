"""YAML loading that remembers where every value came from.

Pydantic reports a field path; users need a file and line. We compose the YAML
node tree once, map each key path to the line it starts on, and construct the
data from that same tree.

Aliases are allowed (``<<: *defaults`` is common), but a document that expands to
more than `MAX_VALUES` values is refused before anything walks or validates it: a
few nested aliases can otherwise stand for billions of values ("billion laughs").
Nesting deeper than `MAX_DEPTH` is refused while the tree is composed, before any
recursion could exhaust the stack; a key repeated in one mapping, and text that is
not valid Unicode, are refused before anything is constructed.
"""

from __future__ import annotations

from os import PathLike
from typing import Any, TypeAlias

import yaml

from oloproof._exceptions import ConfigError
from oloproof._limits import MAX_DEPTH, bad_text, dotted, shown

__all__ = [
    "MAX_DEPTH",
    "MAX_VALUES",
    "YamlMapping",
    "YamlValue",
    "load_yaml_with_lines",
    "locate",
    "read_config_text",
    "yaml_lines",
    "yaml_value",
]

Path = tuple[str | int, ...]

YamlValue: TypeAlias = object
"""A value as YAML gives it (text, a number, a boolean, a date, a list, a mapping or
null), before a model or a library checks it."""

YamlMapping: TypeAlias = dict[str, YamlValue]
"""A mapping as YAML gives it, before a model or a library checks it."""

MAX_VALUES = 100_000
"""The most values (keys, items and scalars, aliases expanded) a configuration may hold."""

_MERGE = "tag:yaml.org,2002:merge"


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
        ConfigError: The document is not valid YAML, nests deeper than `MAX_DEPTH`,
            expands to more than `MAX_VALUES` values, repeats a key in one mapping
            or holds text that is not valid Unicode.
    """
    try:
        data, lines = _load(text, path=path)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(f"invalid YAML: {problem}", path=path, line=line) from None
    return ({} if data is None else data), lines


def yaml_value(text: str, *, path: str) -> Any:
    """One YAML value (a ``--set`` value), held to the same limits as a file.

    Raises:
        ConfigError: The value nests too deep, expands too far, repeats a key or
            holds text that is not valid Unicode.
        yaml.YAMLError: The text is not valid YAML.
    """
    return _load(text, path=path)[0]


def yaml_lines(text: str, *, path: str) -> dict[Path, int]:
    """Only the line map of a document (a JSON file's lines), nothing constructed or checked
    but its depth and size; a repeated key maps to its last line.

    Raises:
        ConfigError: The text is not YAML, or nests or expands too far.
    """
    try:
        node = _Loader(text, path).get_single_node()
    except yaml.YAMLError:
        raise ConfigError("not readable as YAML", path=path) from None
    lines: dict[Path, int] = {}
    if node is not None:
        _Walk(path, lines, check=False).walk(node)
    return lines


def _load(text: str, *, path: str) -> tuple[Any, dict[Path, int]]:
    loader = _Loader(text, path)
    try:
        node = loader.get_single_node()
        lines: dict[Path, int] = {}
        if node is None:
            return None, lines
        _Walk(path, lines, loader=loader).walk(node)
        return loader.construct_document(node), lines
    finally:
        loader.dispose()


class _Loader(yaml.SafeLoader):
    """The safe loader, refusing nesting past `MAX_DEPTH` as it composes."""

    def __init__(self, text: str, path: str) -> None:
        super().__init__(text)
        self.path, self.depth = path, 0

    def compose_sequence_node(self, anchor: Any) -> yaml.SequenceNode:
        self._descend()
        try:
            return super().compose_sequence_node(anchor)
        finally:
            self.depth -= 1

    def compose_mapping_node(self, anchor: Any) -> yaml.MappingNode:
        self._descend()
        try:
            return super().compose_mapping_node(anchor)
        finally:
            self.depth -= 1

    def _descend(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            mark = self.peek_event().start_mark
            raise ConfigError(f"nested more than {MAX_DEPTH} levels deep (column {mark.column + 1}): refused",
                              path=self.path, line=mark.line + 1)  # fmt: skip

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep=deep)
        except (ValueError, OverflowError) as error:  # ``!!int abc``, a 13th month: name the line
            raise yaml.constructor.ConstructorError(
                None, None, f"cannot read {shown(getattr(node, 'value', ''))} as {node.tag}: {error}", node.start_mark
            ) from None


class _Walk:
    """The line map, built with a budget: aliases are expanded as they are visited.

    The walk keeps its own stack, so an alias-expanded depth is refused, not recursed
    into; with ``check``, a repeated key and text that is not valid Unicode are refused.
    """

    def __init__(self, path: str, lines: dict[Path, int], *, loader: _Loader | None = None,
                 check: bool = True) -> None:  # fmt: skip
        self.path, self.lines, self.left, self.loader, self.check = path, lines, MAX_VALUES, loader, check

    def fail(self, message: str, node: yaml.Node, prefix: Path = ()) -> ConfigError:
        return ConfigError(message, path=self.path, line=node.start_mark.line + 1, field=dotted(prefix))

    def walk(self, root: yaml.Node) -> None:
        stack: list[tuple[yaml.Node, Path, int]] = [(root, (), 1)]
        while stack:
            node, prefix, depth = stack.pop()
            self.left -= 1
            if self.left < 0:
                raise self.fail(f"the document expands to more than {MAX_VALUES:,} values (YAML aliases nested "
                                "inside one another): refused", node)  # fmt: skip
            self.lines.setdefault(prefix, node.start_mark.line + 1)
            if isinstance(node, yaml.ScalarNode):
                self.text(node, prefix)
                continue
            if depth > MAX_DEPTH:
                raise self.fail(f"nested more than {MAX_DEPTH} levels deep (aliases expanded): refused", node, prefix)
            children: list[tuple[yaml.Node, Path, int]] = []
            if isinstance(node, yaml.MappingNode):
                seen: set[Any] = set()
                for key_node, value_node in node.value:
                    key = prefix + (str(key_node.value),)
                    self.lines[key] = key_node.start_mark.line + 1
                    self.unique(key_node, key, seen)
                    children.append((value_node, key, depth + 1))
            elif isinstance(node, yaml.SequenceNode):
                children = [(item, prefix + (index,), depth + 1) for index, item in enumerate(node.value)]
            stack.extend(reversed(children))

    def text(self, node: yaml.ScalarNode, prefix: Path) -> None:
        problem = bad_text(node.value) if self.check else None
        if problem is None:
            return
        try:  # JSON writes a character past U+FFFF as a pair of escapes ("\ud83d\ude00"): one character
            node.value = node.value.encode("utf-16", "surrogatepass").decode("utf-16")
        except UnicodeDecodeError:
            raise self.fail(problem, node, prefix) from None

    def unique(self, key_node: yaml.Node, key: Path, seen: set[Any]) -> None:
        if not self.check or not isinstance(key_node, yaml.ScalarNode) or key_node.tag == _MERGE:
            return
        self.text(key_node, key)
        # Keys are compared as constructed, as the mapping will hold them: `1` and
        # `0x1` are one key, `1` and `"1"` two.
        value = self.loader.construct_object(key_node) if self.loader is not None else key_node.value
        try:
            hash(value)
        except TypeError:
            return  # refused when the mapping is constructed
        if value in seen:
            raise self.fail(f"duplicate key {shown(value)}: a key may appear once in a mapping", key_node, key)
        seen.add(value)


def locate(lines: dict[Path, int], location: Path) -> int | None:
    """Return the line of the longest known prefix of ``location``."""
    for end in range(len(location), -1, -1):
        line = lines.get(tuple(location[:end]))
        if line is not None:
            return line
    return None
