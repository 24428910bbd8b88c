"""``--grid key=v1,v2,...``: the axes of a sweep, their settings and the settings' labels.

Each value is typed as a ``--set`` value is (``4`` an int, ``0.5`` a float, ``keyword``
text); values are split on commas, so a grid value cannot hold a comma.
"""

from __future__ import annotations

import copy
import itertools
import json
import math
from collections.abc import Mapping, Sequence

import yaml
from pydantic import BaseModel, ConfigDict, JsonValue

from oloproof._exceptions import ConfigError
from oloproof._limits import MAX_NAME, dotted, shown
from oloproof.config import parse_override
from oloproof.config._yaml import yaml_value

__all__ = ["DEFAULT_GRID_LIMIT", "PROJECT_SETTINGS_LABEL", "GridAxis", "expand_grid", "parse_grid", "setting_label"]

DEFAULT_GRID_LIMIT = 256
"""The most settings a sweep runs unless ``--yes`` allows more."""

PROJECT_SETTINGS_LABEL = "(project settings)"
"""The label of the empty setting: the project's configuration as it is."""

_PATH = "--grid"


class GridAxis(BaseModel):
    """One axis of a sweep: a dotted setting key and the values it takes, in order."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    key: str
    """The dotted setting key, as ``--set`` names it, e.g. ``system.rag.top_k``."""

    values: tuple[JsonValue, ...]
    """The values the key takes, each typed as a ``--set`` value is, none repeated."""


def parse_grid(text: str) -> GridAxis:
    """Read one ``--grid`` argument, ``key.path=v1,v2,...``.

    Args:
        text: The argument, e.g. ``"system.rag.top_k=1,2,3"``.

    Returns:
        The axis, its values typed as ``--set`` values are (``1`` an int, ``0.5`` a
        float, ``keyword`` text; a date is kept as the text written).

    Raises:
        ConfigError: (path ``--grid``) The text has no ``=``, an empty or invalid key, no
            values, an empty value (``1,,2``), a value repeated, or a value ``--set``
            would refuse or that JSON cannot hold (``.nan``).
    """
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not key or any(not part for part in key.split(".")):
        raise ConfigError(f"invalid grid {shown(text)}: expected key.path=value1,value2,...", path=_PATH,
                          field=dotted(((key or text)[:MAX_NAME],)))  # fmt: skip
    try:
        parse_override(f"{key}=")  # the key's other limits, checked as --set checks them
    except ConfigError as error:
        raise ConfigError(error.message, path=_PATH, field=error.field) from None
    field = dotted((key,))
    if not raw.strip():
        raise ConfigError("no values: expected key.path=value1,value2,...", path=_PATH, field=field)
    values = tuple(_value(key, piece) for piece in raw.split(","))
    _check_values(key, values)
    return GridAxis(key=key, values=values)


def expand_grid(
    axes: Sequence[GridAxis], *, limit: int = DEFAULT_GRID_LIMIT, allow_more: bool = False
) -> list[dict[str, JsonValue]]:
    """Every setting of the grid: the cartesian product of the axes' values.

    Args:
        axes: The axes, the first varying slowest.
        limit: The most settings allowed without ``allow_more``.
        allow_more: Allow more than ``limit`` settings (``--yes``).

    Returns:
        One ``{key: value}`` dict per setting, keys in the axes' order.

    Raises:
        ConfigError: (path ``--grid``) No axes, an axis without values or with a value
            repeated, a key named by two axes (or one inside another's), or more than
            ``limit`` settings without ``allow_more``.
    """
    if not axes:
        raise ConfigError("no grid: give at least one --grid key.path=value1,value2,...", path=_PATH)
    seen: list[str] = []
    for axis in axes:
        _check_values(axis.key, axis.values)
        for other in seen:
            if other == axis.key:
                raise ConfigError("the key is named by two --grid axes", path=_PATH, field=dotted((axis.key,)))
            outer, inner = sorted((other, axis.key), key=len)
            if inner.startswith(outer + "."):
                # Which value would win depends on the order applied: refused, not guessed.
                raise ConfigError(f"the key is inside {outer}, which another --grid axis sets", path=_PATH,
                                  field=dotted((inner,)))  # fmt: skip
        seen.append(axis.key)
    count = math.prod(len(axis.values) for axis in axes)
    if count > limit and not allow_more:
        raise ConfigError(f"the grid has {count} settings, more than {limit}: --yes runs them all", path=_PATH)
    keys = [axis.key for axis in axes]
    return [
        {key: copy.deepcopy(value) for key, value in zip(keys, values, strict=True)}
        for values in itertools.product(*(axis.values for axis in axes))
    ]


def setting_label(setting: Mapping[str, JsonValue]) -> str:
    """A short label for a setting, e.g. ``"top_k=4 token_budget=120"``.

    Each key is shown by its last dotted part, unless another key of the setting ends
    in the same part (then in full). Values are compact JSON, except text, shown as it
    is unless it would read back as another value or holds a space (``"4"``, ``"a b"``):
    then it is quoted, so two settings of one grid never share a label.

    Args:
        setting: Dotted key to value, as `expand_grid` gives it.

    Returns:
        The label; ``"(project settings)"`` for an empty setting.
    """
    if not setting:
        return PROJECT_SETTINGS_LABEL
    last = [key.rsplit(".", 1)[-1] for key in setting]
    names = [key if last.count(short) > 1 else short for key, short in zip(setting, last, strict=True)]
    return " ".join(f"{name}={_shown_value(value)}" for name, value in zip(names, setting.values(), strict=True))


def _value(key: str, piece: str) -> JsonValue:
    field = dotted((key,))
    if not piece.strip():
        raise ConfigError("an empty value (two commas in a row, or one at an end)", path=_PATH, field=field)
    try:
        value = parse_override(f"{key}={piece.strip()}")[1]
    except ConfigError as error:
        raise ConfigError(error.message, path=_PATH, field=error.field) from None
    if isinstance(value, float) and not math.isfinite(value):
        raise ConfigError(f"the value {piece.strip()} is not a finite number", path=_PATH, field=field)
    if not _is_json(value):
        return piece.strip()  # a date or a tagged value: the text as written
    return value  # type: ignore[return-value]  # checked by _is_json


def _is_json(value: object) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if not all(isinstance(key, str) for key in item):
                return False
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, float):
            if not math.isfinite(item):
                return False
        elif not (item is None or isinstance(item, str | int)):
            return False
    return True


def _check_values(key: str, values: Sequence[JsonValue]) -> None:
    field = dotted((key,))
    if not values:
        raise ConfigError("no values: expected key.path=value1,value2,...", path=_PATH, field=field)
    seen: set[tuple[str, object]] = set()
    for value in values:
        identity = _identity(value)
        if identity in seen:
            raise ConfigError(f"the value {_shown_value(value)} is repeated", path=_PATH, field=field)
        seen.add(identity)


def _identity(value: JsonValue) -> tuple[str, object]:
    # 1 and 1.0 configure the same thing (and hash alike); True and 1 do not, though Python finds them equal.
    if isinstance(value, bool) or value is None:
        return ("constant", value)
    if isinstance(value, int | float | str):
        return ("number" if not isinstance(value, str) else "text", value)
    return ("container", json.dumps(value, sort_keys=True, ensure_ascii=False))


def _shown_value(value: JsonValue) -> str:
    if isinstance(value, str) and _plain(value):
        return value
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _plain(text: str) -> bool:
    """Whether ``text`` can be shown unquoted: printable, no space or comma, read back as itself."""
    if not text or not text.isprintable() or any(character.isspace() for character in text) or "," in text:
        return False
    try:
        json.loads(text)
    except ValueError:
        pass
    else:
        return False  # a JSON number or constant (``1e-05``, ``NaN``): shown as that value is
    try:
        return yaml_value(text, path=_PATH) == text
    except (ConfigError, yaml.YAMLError):
        return False
