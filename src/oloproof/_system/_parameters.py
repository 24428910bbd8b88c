"""A system's own parameters: declared by a model in code, set in ``oloproof.yaml``.

The decorator names a pydantic model per stage (``retriever``, ``generator``); the
file's block of that name (``system.rag.retriever``, or ``--set
system.rag.retriever.mode=hybrid``) gives the values, and the model's defaults the
rest. The validated instance is passed to the stage's call; its JSON enters the
identity of that stage alone.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Mapping
from enum import Enum
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticSerializationError

from oloproof.config._describe import describe
from oloproof.config._load import Project

__all__ = ["check_takes_parameters", "resolve_parameters"]

Location = tuple[str | int, ...]


def resolve_parameters(
    project: Project, model: type[BaseModel] | None, values: Mapping[str, object] | None, location: Location, owner: str
) -> BaseModel | None:
    """Validate a parameter block against the model the system declares.

    Args:
        project: The project, to word errors with the file and line (or ``--set``).
        model: The declared model, or ``None`` when the system declares none.
        values: The block from the file (``None`` when absent).
        location: The block's key path, e.g. ``("system", "rag", "retriever")``.
        owner: The system's ``module:attribute``, named in errors.

    Returns:
        The parameters, or ``None`` when the system declares none.

    Raises:
        ConfigError: A block for undeclared parameters, an unknown parameter, a bad
            value, or parameters whose values are not JSON.
    """
    stage = location[-1]
    if model is None:
        if values is not None:
            raise project.error(
                f"{owner} declares no {stage} parameters: name their model in its decorator ({stage}=...)",
                location,
            )
        return None
    values = values or {}
    known = list(model.model_fields)
    accepted = {*known, *(field.alias for field in model.model_fields.values() if field.alias)}
    for name in values:
        if name not in accepted:
            raise project.error(f"unknown parameter of {model.__name__} (known: {', '.join(known)})",
                                (*location, name))  # fmt: skip
    try:
        parameters = model.model_validate(values)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise project.error(describe(first), (*location, *first["loc"])) from None
    try:
        # The JSON is what identities hash: parameters that have none cannot be cached.
        parameters.model_dump(mode="json")
    except PydanticSerializationError as exc:
        first_line = (str(exc).strip().splitlines() or [""])[0]
        raise project.error(f"{model.__name__} does not serialize to JSON: {first_line}", location) from None
    # JSON writes inf and nan as null: such a value would share an identity with null.
    for path, value in _floats(parameters.model_dump(mode="python")):
        if not math.isfinite(value):
            raise project.error(f"{value!r} is not a finite number (identities hold only JSON numbers)",
                                (*location, *path))  # fmt: skip
    # Text is never read as a number or a flag (`limit: "3"`), as for every other setting.
    for name, given in values.items():
        field = name if name in model.model_fields else next(
            (key for key, info in model.model_fields.items() if info.alias == name), name)
        taken = getattr(parameters, field, None)
        if isinstance(given, str) and isinstance(taken, int | float) and not isinstance(taken, Enum):
            kind = "true or false" if isinstance(taken, bool) else "a number"
            raise project.error(f"expected {kind}, got text {given!r}", (*location, name))
    return parameters


def _floats(value: Any, path: Location = ()) -> list[tuple[Location, float]]:
    """Every float inside ``value`` with its key path."""
    if isinstance(value, float):
        return [(path, value)]
    if isinstance(value, dict):
        return [found for key, item in value.items() for found in _floats(item, (*path, str(key)))]
    if isinstance(value, (list, tuple, set, frozenset)):
        return [found for index, item in enumerate(value) for found in _floats(item, (*path, index))]
    return []


def check_takes_parameters(project: Project, method: Any, call: str, location: Location) -> None:
    """Refuse a method that cannot be called as ``call``, e.g. ``app:Rag.retrieve(input, depth, params)``.

    Args:
        project: The project, to word the error.
        method: The bound method (or function) to be called.
        call: How it will be called, as the error shows it.
        location: The parameter block's key path; the error points at the object beside it.

    Raises:
        ConfigError: The method cannot take those positional arguments.
    """
    try:
        signature = inspect.signature(method)
    except (TypeError, ValueError):
        return  # a builtin or a C callable: its first call will tell
    arguments = call[call.rindex("(") + 1 : -1].split(", ")
    try:
        signature.bind(*arguments)
    except TypeError:
        raise project.error(f"{call} is how a system with {location[-1]} parameters is called; "
                            "it does not take those arguments", (*location[:-1], "object")) from None  # fmt: skip
