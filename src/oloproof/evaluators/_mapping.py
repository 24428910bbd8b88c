"""``data_mapping``: where an evaluator's inputs come from, in the catalogue's syntax.

A mapping names, for each input of an evaluator (``query``, ``context``,
``response`` …), a template: ``"{{item.query}}"`` reads the dataset row,
``"{{sample.output_text}}"`` what the system produced for it. A template that is
exactly one reference yields the value itself (a list stays a list); a template
mixing text and references yields text. ``{{item.a.b}}`` reaches nested fields,
``{{item.docs.0}}`` list items.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import JsonValue
from typing_extensions import TypedDict

from oloproof.evaluators._fields import MISSING, get_field

__all__ = ["NAMESPACES", "Reference", "RetrievedDocument", "Sample", "Template", "parse_template", "sample_of"]

NAMESPACES = ("item", "sample")
"""``item``: the dataset row; ``sample``: what the system produced for it."""

_REFERENCE = re.compile(r"\{\{\s*([^{}]*?)\s*\}\}")
_PATH = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)*$")


@dataclass(frozen=True)
class Reference:
    """One ``{{namespace.path}}`` of a template."""

    namespace: Literal["item", "sample"]
    """Where the value is read."""
    path: str
    """The dotted path inside it (empty: the whole row or sample)."""

    @property
    def text(self) -> str:
        """The reference as written, e.g. ``item.query``."""
        return f"{self.namespace}.{self.path}" if self.path else self.namespace

    def resolve(self, item: Any, sample: Any) -> Any:
        """The referenced value, or ``MISSING``."""
        return get_field(item if self.namespace == "item" else sample, self.path)


@dataclass(frozen=True)
class Template:
    """A parsed ``data_mapping`` value."""

    source: str
    """The template as written."""
    parts: tuple[str | Reference, ...]
    """Literal text and references, in order."""

    @property
    def references(self) -> tuple[Reference, ...]:
        """Every reference of the template."""
        return tuple(part for part in self.parts if isinstance(part, Reference))

    def render(self, item: Any, sample: Any) -> Any:
        """The value: the referenced value itself for a lone reference, else text.

        Returns:
            The value, or ``MISSING`` when a referenced field is absent.
        """
        if len(self.parts) == 1 and isinstance(self.parts[0], Reference):
            return self.parts[0].resolve(item, sample)
        pieces: list[str] = []
        for part in self.parts:
            if isinstance(part, str):
                pieces.append(part)
                continue
            value = part.resolve(item, sample)
            if value is MISSING:
                return MISSING
            pieces.append(value if isinstance(value, str) else _text(value))
        return "".join(pieces)

    def missing(self, item: Any, sample: Any) -> str | None:
        """The first reference absent from ``item``/``sample``, as written; ``None`` if all resolve."""
        for reference in self.references:
            if reference.resolve(item, sample) is MISSING:
                return reference.text
        return None


def _text(value: Any) -> str:
    import json

    return json.dumps(value, ensure_ascii=False, default=str)


def parse_template(value: Any) -> Template:
    """Parse one ``data_mapping`` value.

    Raises:
        ValueError: The value is not a string, holds no ``{{…}}`` reference, has
            unbalanced braces, or names a namespace other than ``item``/``sample``.
    """
    # ValueError, not TypeError: callers report every ValueError as a bad config value.
    if not isinstance(value, str):
        raise ValueError(  # noqa: TRY004
            f"a data_mapping value must be a string template such as '{{{{item.query}}}}', got {value!r}"
        )
    parts: list[str | Reference] = []
    position = 0
    for match in _REFERENCE.finditer(value):
        if match.start() > position:
            parts.append(value[position : match.start()])
        parts.append(_reference(match.group(1), value))
        position = match.end()
    if position < len(value):
        parts.append(value[position:])
    literal = "".join(part for part in parts if isinstance(part, str))
    if "{{" in literal or "}}" in literal:
        raise ValueError(f"unbalanced braces in template {value!r}")
    if not any(isinstance(part, Reference) for part in parts):
        raise ValueError(f"template {value!r} references no field; write e.g. '{{{{item.query}}}}'")
    return Template(source=value, parts=tuple(parts))


def _reference(inner: str, template: str) -> Reference:
    namespace, _, path = inner.partition(".")
    if namespace not in NAMESPACES:
        raise ValueError(
            f"template {template!r} refers to {namespace or inner!r}: only 'item' (the dataset row) "
            "and 'sample' (the system's output) exist"
        )
    if path and not _PATH.match(path):
        raise ValueError(f"template {template!r} has an invalid field path {path!r}")
    return Reference(namespace=namespace, path=path)  # type: ignore[arg-type]


class RetrievedDocument(TypedDict):
    """A candidate in the catalogue's ``retrieved_documents`` shape.

    Attributes:
        document_id: The candidate's document.
        relevance_score: ``n`` for the first of ``n`` candidates, down to 1.
    """

    document_id: str
    relevance_score: float


class Sample(TypedDict, total=False):
    """What ``{{sample.…}}`` reads of a system's case.

    Attributes:
        output: The raw output.
        output_text: The answer text, when there is one.
        context: The passages the generator saw.
        candidates: The retrieval, as passages.
        retrieved_documents: The retrieval in the catalogue's shape.
        output_items: A live agent's transcript, in the vendor's agent message format.
    """

    output: Any
    output_text: str
    context: list[dict[str, JsonValue]]
    candidates: list[dict[str, JsonValue]]
    retrieved_documents: list[RetrievedDocument]
    output_items: list[JsonValue]


def sample_of(
    output: Any,
    response_field: str | None,
    context: list[dict[str, JsonValue]] | None,
    candidates: list[dict[str, JsonValue]] | None,
    output_items: list[JsonValue] | None = None,
) -> Sample:
    """What ``{{sample.…}}`` reads for a system's output.

    ``output_text`` is the answer text (``response_field`` of the output, or the
    output itself when it is text), ``output`` the raw output, ``context`` the
    passages the generator saw, ``candidates`` the retrieval as passages and
    ``retrieved_documents`` the retrieval in the catalogue's shape
    (``document_id``, ``relevance_score``: the first of ``n`` candidates scores
    ``n``, so the order is the retriever's whatever its own scores say) and
    ``output_items`` a live agent's transcript.
    """
    from oloproof.evaluators._fields import text_field

    sample: Sample = {"output": output}
    text = output if isinstance(output, str) else text_field(output, response_field)
    if text is not None:
        sample["output_text"] = text
    if context is not None:
        sample["context"] = context
    if candidates is not None:
        sample["candidates"] = candidates
        sample["retrieved_documents"] = [
            {"document_id": str(item.get("doc_id")), "relevance_score": float(len(candidates) - rank)}
            for rank, item in enumerate(candidates)
        ]
    if output_items is not None:
        sample["output_items"] = output_items
    return sample
