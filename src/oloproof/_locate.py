"""Finding the results store a command or flow reads: ``--results``, the environment, or a project."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from oloproof._exceptions import UsageError

__all__ = ["locate_store"]


def locate_store(results: str | None, project: str | None) -> Any:
    """The store named by ``results``, ``$OLOPROOF_RESULTS`` or a project's ``results``.

    A project's ``storage_options`` apply when the store comes from its configuration
    (or when ``results`` names the same URL); they are never passed around as parameters.
    """
    from oloproof.config import CONFIG_NAME, load_project
    from oloproof.store import ResultsStore

    url = results or os.environ.get("OLOPROOF_RESULTS")
    directory = Path(project or ".")
    config_file = directory if directory.suffix in {".yaml", ".yml"} else directory / CONFIG_NAME
    options: dict[str, Any] = {}
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
