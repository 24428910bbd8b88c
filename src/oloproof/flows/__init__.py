"""Prefect flows: run, diagnose, compare."""

from oloproof.flows._run import evaluate

__all__ = ["evaluate"]
