"""Prefect flows: run, diagnose, compare, sweep."""

from oloproof.flows._compare import compare
from oloproof.flows._diagnose import INTERVENTIONS, diagnose
from oloproof.flows._logs import keep_run_logs_readable
from oloproof.flows._run import PreparedRun, evaluate
from oloproof.flows._sweep import sweep

# Wherever Oloproof's flows are loaded (the CLI, `oloproof serve`, a worker's flow-run
# process), their runs' logs hold Oloproof's lines, not one state line per task run.
keep_run_logs_readable()

__all__ = ["INTERVENTIONS", "PreparedRun", "compare", "diagnose", "evaluate", "sweep"]
