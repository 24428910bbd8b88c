"""Prefect flows: run, diagnose, compare."""

from oloproof.flows._compare import compare
from oloproof.flows._diagnose import INTERVENTIONS, diagnose
from oloproof.flows._run import PreparedRun, evaluate

__all__ = ["INTERVENTIONS", "PreparedRun", "compare", "diagnose", "evaluate"]
