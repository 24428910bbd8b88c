"""A run's evaluators, built from ``evaluators:`` and ``testing_criteria``, and their
inputs checked against every row before anything runs.

A row whose input is invalid (a relevance label that is not an integer, a
context that is not text) is one error naming the dataset's file, line and
field. A ``data_mapping`` reference that no row of the dataset holds is one
configuration error at the mapping's line; a row lacking a field that others
hold is that row's *excluded* verdict (``missing_field:<name>``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from oloproof._exceptions import ConfigError, DatasetError
from oloproof._system._resolve import SystemHandle
from oloproof.config import Project
from oloproof.config._criteria import load_criteria
from oloproof.dataset import Dataset
from oloproof.evaluators import MISSING, CaseView, Evaluator, build_evaluators
from oloproof.evaluators._mapping import Reference
from oloproof.transcripts import ContextTool

__all__ = ["build_project_evaluators", "check_inputs", "context_tools_of"]

Locator = Callable[[str, tuple[str | int, ...]], ConfigError]


def build_project_evaluators(project: Project, system: SystemHandle) -> tuple[list[Evaluator], Locator]:
    """Every evaluator of the project, ``evaluators:`` first, then ``testing_criteria``.

    Returns:
        The evaluators, and a function placing an error at evaluator ``i``'s entry
        (``("evaluators", i, option, …)``) in whichever file it came from.
    """
    config = project.config
    native = list(config.evaluators)
    criteria = None
    if config.testing_criteria is not None:
        criteria = load_criteria(
            config.testing_criteria, directory=project.directory, config_path=str(project.config_path),
            config_lines=project.lines, providers=config.providers,
        )  # fmt: skip

    def locate(message: str, location: tuple[str | int, ...]) -> ConfigError:
        index = int(location[1]) if len(location) > 1 else 0
        if criteria is None or index < len(native):
            return project.error(message, location)
        return criteria.error(message, ("evaluators", index - len(native), *location[2:]))

    entries = native + (criteria.entries if criteria is not None else [])
    kind = system.config.kind
    evaluators = build_evaluators(
        # An agent's context tools are its retrieval.
        entries, rag=kind == "rag" or bool(system.context_tools), recorded=kind == "recorded", error=locate,
        providers=config.providers, directory=project.directory, context_tools=context_tools_of(project, system),
    )  # fmt: skip
    return evaluators, locate


def context_tools_of(project: Project, system: SystemHandle) -> list[ContextTool]:
    """The project's ``context_tools``, and a live agent's declared context tools.

    Raises:
        ConfigError: The project names a context tool a live agent does not declare as one.
    """
    tools = list(project.config.context_tools)
    if system.config.kind != "agent":
        return tools
    declared = system.context_tools
    for index, tool in enumerate(tools):
        if tool.name not in declared:
            known = ", ".join(declared) or "none"
            raise project.error(f"the agent declares no context tool {tool.name!r} (its context tools: {known}); "
                                "declare it with @tool(context=True)", ("context_tools", index))  # fmt: skip
    named = {tool.name for tool in tools}
    return tools + [ContextTool(name=name) for name in declared if name not in named]


def row_view(dataset: Dataset, case: Any) -> CaseView:
    """What an evaluator may read of a case before it runs: the row alone."""
    return CaseView(
        case_id=case.id, input=case.input, expected=case.expected.model_dump(mode="json", exclude_none=True),
        metadata=case.metadata, output=None, item=dataset.item(case), recorded=dataset.recorded,
    )  # fmt: skip


def check_inputs(evaluators: list[Evaluator], dataset: Dataset, locate: Locator) -> None:
    """Check every row's inputs, and that each mapped row field exists in some row.

    Raises:
        DatasetError: A row's input is invalid (file, line and field named).
        ConfigError: A ``data_mapping`` names a row field that no row has.
    """
    unseen: dict[tuple[int, str, str], Reference] = {}
    for index, evaluator in enumerate(evaluators):
        for name, template in evaluator.mapping.items():
            for reference in template.references:
                if reference.namespace == "item":
                    unseen[(index, name, reference.text)] = reference
                elif dataset.recorded:
                    raise locate(f"{{{{{reference.text}}}}} reads a system's output, and recorded data has none",
                                 ("evaluators", index, "data_mapping", name))  # fmt: skip
        if dataset.recorded:  # an unmapped input is the row's field of the same name
            for name in evaluator.required_inputs:
                if name not in evaluator.mapping:
                    unseen[(index, name, f"item.{name}")] = Reference("item", name)
    for case in dataset.cases:
        view = row_view(dataset, case)
        for evaluator in evaluators:
            try:
                evaluator.check_case(view)
            except DatasetError as error:
                raise DatasetError(error.message, path=dataset.url, line=dataset.lines.get(case.id),
                                   field=error.field) from None  # fmt: skip
        if unseen:
            for key, reference in list(unseen.items()):
                if reference.resolve(view.item, None) is not MISSING or _from_transcript(evaluators[key[0]], key[1], view):
                    del unseen[key]
    if unseen:
        index, name, text = min(unseen)
        mapped = name in evaluators[index].mapping
        where = ("evaluators", index, "data_mapping", name) if mapped else ("evaluators", index)
        hint = "" if mapped else f" ({evaluators[index].type_name} reads {name!r}: name its field in data_mapping)"
        raise locate(f"no row of {dataset.url} has {{{{{text}}}}}{hint}", where)


def _from_transcript(evaluator: Evaluator, name: str, view: CaseView) -> bool:
    """Whether a row's unmapped ``context`` comes from the transcript its ``response`` holds."""
    return name == "context" and name not in evaluator.mapping and evaluator.agent_response(view) is not None
