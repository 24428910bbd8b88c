"""The base of every record, and the annotations of nested JSON values."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from types import MappingProxyType
from typing import Annotated, Any, Self

from pydantic import BaseModel, ConfigDict, JsonValue, SkipValidation

__all__ = ["Json", "JsonObject", "Record", "StoredObject"]

# Nested values are serialised by the store's canonical JSON, which also takes
# NumPy values; validating them here would copy every payload of a large run and
# reject what the store accepts.
Json = Annotated[JsonValue, SkipValidation]
"""Any JSON value, stored as JSON text and not validated field by field."""

JsonObject = Annotated[dict[str, JsonValue], SkipValidation]
"""A JSON object, stored as JSON text and not validated field by field."""


# What the store reads and writes: JSON objects and decoded table rows, handed to
# the records above them. Only the store's edge and readers of stored JSON use it.
StoredObject = dict[str, Any]
"""A JSON object or table row as stored, by key."""


class Record(BaseModel):
    """A frozen, typed record of the results store.

    Unknown fields are an error, so a misspelt column never disappears silently.
    """

    model_config = ConfigDict(use_attribute_docstrings=True, frozen=True, extra="forbid")

    @classmethod
    def pick(cls, source: Mapping[str, Any], **values: Any) -> Self:
        """Build a record from the entries of ``source`` named like its fields.

        Entries of ``source`` that are not fields are ignored; a field that
        ``source`` lacks takes its default.

        Args:
            source: A mapping holding (at least) some of the record's fields.
            **values: Fields set explicitly; they take precedence over ``source``.

        Returns:
            The validated record.

        Raises:
            pydantic.ValidationError: A value does not fit its field, or a
                required field is missing.
        """
        fields = {name: source[name] for name in _field_names(cls) if name in source}
        fields.update(values)
        return cls.model_validate(fields)

    @classmethod
    def trusted(cls, values: Mapping[str, object]) -> Self:
        """A record of values validated where they were made, built without validating
        them again (what ``model_construct`` does, less its walk over every field's
        aliases: a run builds one judgment row per case and output).

        Fields ``values`` lacks take their defaults; the fields are in declaration order.

        Raises:
            TypeError: A name is not a field, or a required field is missing.
        """
        names, required, defaults = _shape(cls)
        if not names.issuperset(values) or not required.issubset(values):
            unknown, missing = sorted(set(values) - names), sorted(required - set(values))
            raise TypeError(f"{cls.__name__}: not fields {unknown}, missing fields {missing}")
        record = cls.__new__(cls)
        fields = {**defaults, **values}
        object.__setattr__(record, "__dict__", fields)
        object.__setattr__(record, "__pydantic_fields_set__", set(values))
        object.__setattr__(record, "__pydantic_extra__", None)
        object.__setattr__(record, "__pydantic_private__", None)
        return record

    def as_mapping(self) -> Mapping[str, Any]:
        """The record's fields as a read-only mapping, values as they are.

        Nested values are not copied or converted, so a row reaches the store
        exactly as it was built; this is the cheap way to hand a record to
        :meth:`~oloproof.store.ResultsStore.write_table`.
        """
        # A model keeps its field values in __dict__; dict(model) and model_dump()
        # cost several times more per row, which shows on 100,000-case tables.
        return MappingProxyType(self.__dict__)


@cache
def _field_names(record: type[Record]) -> tuple[str, ...]:
    return tuple(record.model_fields)


@cache
def _shape(record: type[Record]) -> tuple[frozenset[str], frozenset[str], dict[str, object]]:
    """A record's field names, its required ones, and every field in order with its
    default (a required field's placeholder is overwritten by `Record.trusted`)."""
    fields = record.model_fields
    if any(field.default_factory is not None for field in fields.values()):
        raise TypeError(f"{record.__name__} has a default factory: build it with model_validate")
    required = frozenset(name for name, field in fields.items() if field.is_required())
    defaults = {name: None if field.is_required() else field.default for name, field in fields.items()}
    return frozenset(fields), required, defaults
