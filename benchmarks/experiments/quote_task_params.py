"""Experiment for ``bench_engine.py --child-preload``: stop Prefect traversing task parameters.

Prefect walks every task parameter with ``visit_collection`` twice (at submission,
to find upstream dependencies, and when the task starts, to resolve futures),
element by element. The run flow passes whole per-case result sets to its tasks
(``record_executions``, ``judge``, ``summarize``, ``write-run``, ...), so those walks
cost ~0.3 ms per case each, on the GIL.

This monkeypatch wraps the flow's task submissions so that materialized values
are passed as ``quote(value)`` (neither traversed nor resolved) and futures as
``opaque(future)`` (resolved, not traversed). It reproduces the A/B in the
benchmark report; it is not meant as the fix itself (which belongs in
``oloproof/flows/_run.py``), and it depends on that module's internals.

Since commit 3e490b4 the run flow annotates its own task arguments, so this
file only matters for measuring older revisions; arguments that are already
annotated are left alone.

    python benchmarks/bench_engine.py --child-preload benchmarks/experiments/quote_task_params.py
"""

from prefect.futures import PrefectFuture
from prefect.utilities.annotations import BaseAnnotation, opaque, quote

import oloproof.flows._run as run
from oloproof.tasks import Batch, RunContext


def _wrap(value):
    if isinstance(value, BaseAnnotation):
        return value
    if value is None or isinstance(value, (RunContext, Batch, str, int, float, bool)):
        return value
    if isinstance(value, PrefectFuture):
        return opaque(value)
    return quote(value)


class _Proxy:
    def __init__(self, task):
        self._task = task

    def submit(self, *args, **kwargs):
        return self._task.submit(*[_wrap(a) for a in args], **{k: _wrap(v) for k, v in kwargs.items()})

    def __getattr__(self, name):
        return getattr(self._task, name)


for _name in ("record_executions", "summarize_run", "write_run", "publish_report", "lookup_executions"):
    if hasattr(run, _name):
        setattr(run, _name, _Proxy(getattr(run, _name)))

_stage_tasks = run._stage_tasks
run._stage_tasks = lambda env: {name: _Proxy(task) for name, task in _stage_tasks(env).items()}
