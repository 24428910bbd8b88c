"""The limits every loader applies to what it reads.

Cases, recorded rows, label files, ``oloproof.yaml``, ``--set``, policies and
criteria are all held to the same bounds, so no input can exhaust the
interpreter's stack, slip text that cannot be stored past validation, or make
every stage identity hash megabytes:

* `MAX_DEPTH`: lists and mappings nest at most this many levels (the outermost
  counts as one), checked before anything recursive reads the value;
* every string, key or value, must be encodable as UTF-8 (a lone surrogate such
  as the JSON escape ``\\ud800`` is not);
* `MAX_NAME`: names and ids (case and row ids, label ids, ``system.name`` and the
  version settings, rule, metric, criterion and provider names) hold at most this
  many characters.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

__all__ = ["MAX_DEPTH", "MAX_NAME", "Location", "bad_text", "dotted", "printable", "shown", "texts"]

MAX_DEPTH = 64
"""The most levels lists and mappings may nest, the outermost counting as one."""

MAX_NAME = 256
"""The most characters a name or an id may hold."""

Location = tuple[str | int, ...]


def bad_text(text: str) -> str | None:
    """Why ``text`` cannot be stored, or None when it can be encoded as UTF-8."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        character = text[error.start]
        return f"not valid Unicode text: a lone surrogate \\u{ord(character):04x} at character {error.start + 1}"
    return None


def texts(value: Any) -> Iterator[tuple[Location, str]]:
    """Every string of a parsed JSON or YAML value, keys included, with its key path.

    The walk keeps its own stack, so any depth is safe; keys come before their values,
    and a document's strings come in reading order.
    """
    stack: list[tuple[Location, Any]] = [((), value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, str):
            yield where, item
        elif isinstance(item, dict):
            children: list[tuple[Location, Any]] = []
            for key, child in item.items():
                if isinstance(key, str):
                    children.append(((*where, key), key))
                children.append(((*where, key if isinstance(key, str | int) else str(key)), child))
            stack.extend(reversed(children))
        elif isinstance(item, list | tuple):
            stack.extend(reversed([((*where, index), child) for index, child in enumerate(item)]))


def dotted(location: Location) -> str | None:
    """A key path as the dotted field errors name, or None for the whole document.

    Characters that cannot be printed (a line break, a lone surrogate) are escaped as
    ``repr`` writes them, so the error stays one line that any terminal can show.
    """
    if not location:
        return None
    return ".".join(printable(str(part)) for part in location)


def printable(text: str) -> str:
    """``text`` with each character that cannot be printed escaped as ``repr`` writes it."""
    if text.isprintable():
        return text
    return "".join(character if character.isprintable() else repr(character)[1:-1] for character in text)


def shown(value: Any, limit: int = 60) -> str:
    """``repr(value)``, cut to ``limit`` characters: an echo never floods a line."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
