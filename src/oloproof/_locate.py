"""Finding the results store a command or flow reads: ``--results``, the environment, or a project."""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Any

from oloproof._exceptions import UsageError

__all__ = ["locate_store", "store_arguments"]


def locate_store(results: str | None, project: str | None) -> Any:
    """The store named by ``results``, a project's ``results`` or ``$OLOPROOF_RESULTS``.

    ``--project`` names a project explicitly and so beats ``$OLOPROOF_RESULTS``; without
    it, the variable beats the project in the current folder.

    A project's ``storage_options`` apply when the store comes from its configuration
    (or when ``results`` names the same URL); they are never passed around as parameters.
    """
    from oloproof.config import CONFIG_NAME, load_project
    from oloproof.store import ResultsStore

    directory = Path(project or ".")
    config_file = directory if directory.suffix in {".yaml", ".yml"} else directory / CONFIG_NAME
    # An option on the command line beats the environment: --results, then --project.
    url = results or (None if project is not None and config_file.is_file() else os.environ.get("OLOPROOF_RESULTS"))
    options: dict[str, object] = {}
    if config_file.is_file():
        loaded = load_project(directory)
        if url is None or url == loaded.results_url:
            url, options = loaded.results_url, loaded.config.storage_options
    default = directory / ".oloproof" / "results"
    if url is None and not config_file.is_file() and default.is_dir():
        url = str(default.resolve())  # a run of recorded data without oloproof.yaml
    if url is None:
        raise UsageError(
            f"no results store: pass --results URL or --project DIR (no {CONFIG_NAME} in {directory})"
        )
    return ResultsStore(url, options)


def store_arguments(results: str | None, project: str | None) -> str:
    """The options that found a command's store, for a hint to repeat (`` --project DIR``).

    A hint printed by a command runs as written from where that command ran: it names
    the store the same way, or nothing when the store was found in the current folder.
    """
    from oloproof._secrets import redact_url

    if results:
        return f" --results {shlex.quote(redact_url(results))}"
    if project:
        return f" --project {shlex.quote(project)}"
    return ""
