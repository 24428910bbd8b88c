"""Read a JSONL cases file from a path or any fsspec URL, validating every line."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import fsspec
from pydantic import JsonValue, ValidationError

from oloproof._exceptions import DatasetError
from oloproof._json import load_json
from oloproof._limits import MAX_NAME, dotted
from oloproof._secrets import redact_url
from oloproof.dataset._case import Case

__all__ = ["LINE_ID_PREFIX", "Dataset", "load_cases"]


LINE_ID_PREFIX = "line-"
"""Recorded rows without an ``id`` are named by their line: ``line-7``."""


@dataclass(frozen=True)
class Dataset:
    """The validated cases of one file, with the file's content hash."""

    url: str
    sha256: str
    cases: tuple[Case, ...]
    lines: dict[str, int] = field(default_factory=dict, repr=False)
    """The line each case was read from, by id."""
    recorded: bool = False
    """Rows of recorded data: each row is a case's whole ``input``."""
    named_by_line: int = 0
    """Recorded rows that had no ``id`` and are named ``line-<n>``."""

    def item(self, case: Case) -> Any:
        """The row as ``{{item.…}}`` reads it: a recorded row itself, or the case's fields."""
        if self.recorded:
            return case.input
        return case.model_dump(mode="json", exclude_none=True)

    def __len__(self) -> int:
        return len(self.cases)


def load_cases(url: str, storage_options: Mapping[str, object] | None = None, *, recorded: bool = False) -> Dataset:
    """Load and validate a JSONL cases file.

    Blank lines are skipped. Every problem names the file, line and field.

    Args:
        url: A local path or an fsspec URL.
        storage_options: fsspec options for remote URLs.
        recorded: Read rows of recorded data: any JSON object, its ``id`` optional
            (``line-<n>`` when absent; when given, a string of at most `MAX_NAME`
            characters), its ``metadata`` (optional) an object.

    Returns:
        The dataset.

    Raises:
        DatasetError: The file cannot be read, a line is not valid JSON (or repeats
            a key, nests deeper than `oloproof._limits.MAX_DEPTH` or holds text that
            is not valid Unicode) or not a valid case, an id repeats, or the file
            holds no cases.
    """
    source = url
    url = redact_url(url)  # what errors and the manifest name: never a presigned URL's signature
    digest = hashlib.sha256()
    cases: list[Case] = []
    first_line: dict[str, int] = {}
    named_by_line = 0
    try:
        with fsspec.open(source, "rb", **(storage_options or {})) as handle:
            # One line at a time, hashed as it is read: memory holds the cases, never
            # the file. JSONL lines end at \n only (U+2028 and friends are legal inside
            # JSON strings), and a \n byte is never part of a multi-byte UTF-8 character.
            for number, raw in enumerate(handle, start=1):
                digest.update(raw)
                case = _read_line(raw, url=url, number=number, recorded=recorded)
                if case is None:
                    continue
                if case.id in first_line:
                    raise DatasetError(f"duplicate id {case.id!r} (first on line {first_line[case.id]})",
                                       path=url, line=number, field="id")  # fmt: skip
                named_by_line += recorded and "id" not in case.input
                first_line[case.id] = number
                cases.append(case)
    except FileNotFoundError:
        raise DatasetError("cases file not found", path=url) from None
    except OSError as exc:
        raise DatasetError(f"cannot read cases file: {str(exc).replace(source, url)}", path=url) from None
    if not cases:
        raise DatasetError("the dataset holds no cases", path=url)
    return Dataset(url=url, sha256=digest.hexdigest(), cases=tuple(cases), lines=first_line,
                   recorded=recorded, named_by_line=named_by_line)  # fmt: skip


def _read_line(raw: bytes, *, url: str, number: int, recorded: bool) -> Case | None:
    """The case on one line of the file (its bytes), or None for a blank line."""
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DatasetError(f"not UTF-8 text ({exc.reason})", path=url, line=number) from None
    line = line.removesuffix("\n").removesuffix("\r")
    if not line.strip():
        return None
    if recorded:
        return _parse_row(line, url=url, number=number)
    return _parse_line(line, url=url, number=number)


def _object(line: str, *, url: str, number: int) -> dict[str, JsonValue]:  # a line's JSON, before validation
    data = load_json(line, error=DatasetError, path=url, line=number)
    if not isinstance(data, dict):
        raise DatasetError(
            f"expected a JSON object, got {type(data).__name__}", path=url, line=number
        )
    return data


def _parse_row(line: str, *, url: str, number: int) -> Case:
    data = _object(line, url=url, number=number)
    row_id = data.get("id", f"{LINE_ID_PREFIX}{number}")
    if not isinstance(row_id, str) or not row_id or len(row_id) > MAX_NAME:
        raise DatasetError(f"an id must be a non-empty JSON string of at most {MAX_NAME} characters, "
                           f"got {json.dumps(row_id)[:60]}", path=url, line=number, field="id")  # fmt: skip
    metadata = data.get("metadata", {})
    if not isinstance(metadata, dict):
        raise DatasetError(f"metadata must be a JSON object, got {type(metadata).__name__}",
                           path=url, line=number, field="metadata")  # fmt: skip
    return Case(id=row_id, input=data, metadata=metadata)


def _parse_line(line: str, *, url: str, number: int) -> Case:
    data = _object(line, url=url, number=number)
    try:
        return Case.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = dotted(tuple(error["loc"]))
        kind = error.get("type", "")
        if kind == "missing":
            message = "required field is missing"
        elif kind == "extra_forbidden":
            message = "unknown field (expected id, input, expected, metadata)"
        elif kind == "string_type":  # never coerced: `"id": 5` is not the case "5"
            message = f"expected a JSON string, got {json.dumps(error.get('input'))[:60]}"
        else:
            message = f"{error['msg']} (got {json.dumps(error.get('input'))[:60]})"
        raise DatasetError(message, path=url, line=number, field=field) from None
