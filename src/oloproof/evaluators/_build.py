"""Validate ``evaluators:`` entries into evaluator instances."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from oloproof._exceptions import ConfigError, EvaluatorConfigError
from oloproof.evaluators._base import Evaluator, OptionError, registered_evaluators
from oloproof.transcripts import ContextTool

__all__ = ["build_evaluators"]


def build_evaluators(
    entries: Sequence[object],
    *,
    rag: bool,
    recorded: bool = False,
    error: Any = None,
    providers: Mapping[str, Any] | None = None,
    directory: Path | None = None,
    context_tools: Sequence[ContextTool] = (),
) -> list[Evaluator]:
    """Build evaluators from ``oloproof.yaml`` entries.

    Args:
        entries: The raw ``evaluators:`` list.
        rag: Whether the system is a staged RAG system (retrieval evaluators need one).
        recorded: Whether the rows are recorded data (every input comes from the row).
        error: ``Project.error``-like callable ``(message, location) -> ConfigError``
            that points errors at a file and line.
        providers: The project's ``providers:`` by name (LLM judges name one).
        directory: The project folder (a judge's own prompt file is relative to it).
        context_tools: The tools besides ``file_search`` whose results are an agent's
            context (agent-response mode).

    Returns:
        One evaluator per entry, in order.

    Raises:
        EvaluatorConfigError: An unknown type, an invalid option, a retrieval
            evaluator on a plain system, two entries with one criterion, a judge
            naming a provider that is not configured, or a bad prompt file.
    """

    def fail(message: str, location: tuple[str | int, ...]) -> ConfigError:
        if error is None:
            return EvaluatorConfigError(message, field=".".join(map(str, location)))
        base = error(message, location)
        return EvaluatorConfigError(base.message, path=base.path, line=base.line, field=base.field)

    registry = registered_evaluators()
    built: list[Evaluator] = []
    seen: dict[str, int] = {}
    for index, entry in enumerate(entries):
        where: tuple[str | int, ...] = ("evaluators", index)
        if not isinstance(entry, dict):
            raise fail("expected a mapping with a 'type'", where)
        kind = entry.get("type")
        if kind not in registry:
            raise fail(
                f"unknown evaluator type {kind!r} (known: {', '.join(registry)})", (*where, "type")
            )
        cls = registry[kind]
        try:
            options = cls.options_model.model_validate(entry)
        except ValidationError as exc:
            first = exc.errors()[0]
            loc = tuple(first["loc"])
            if first["type"] == "extra_forbidden":
                message = f"unknown option for {kind}"
            elif first["type"] == "missing":
                message = f"required option of {kind} is missing"
            else:
                message = str(first["msg"]).removeprefix("Value error, ")
            raise fail(message, (*where, *loc)) from None
        try:
            instance = cls(options)
            instance.context_tools = tuple(context_tools)
            instance.configure(providers=providers or {}, directory=directory)
        except OptionError as exc:
            raise fail(exc.message, (*where, *exc.option.split("."))) from None
        if instance.needs_retrieval and not (rag or recorded or instance.mapping):
            raise fail(f"{kind} reads the retrieval; it needs a @rag_system (or an agent with a context tool)",
                       (*where, "type"))  # fmt: skip
        for output in instance.outputs():
            if output.criterion in seen:
                raise fail(
                    f"criterion {output.criterion!r} is already produced by evaluator {seen[output.criterion]}",
                    (*where, "criterion"),
                )
            seen[output.criterion] = index
        built.append(instance)
    return built
