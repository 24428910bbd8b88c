"""Fixtures for the results store tests."""

from __future__ import annotations

import urllib.request
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import s3fs

from oloproof.store import ResultsStore

FAST_S3 = {"connect_timeout": 1, "read_timeout": 5, "retries": {"max_attempts": 1}}


@pytest.fixture
def local_store(tmp_path) -> ResultsStore:
    """A store in a fresh local directory that does not exist yet."""
    return ResultsStore(str(tmp_path / "project" / ".oloproof" / "results"))


@pytest.fixture
def aws_env(monkeypatch) -> None:
    """Test credentials in the environment, as s3fs reads them."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def s3_options(moto_server, aws_env) -> dict[str, Any]:
    """Storage options that point s3fs at the moto server, failing fast."""
    return {"endpoint_url": moto_server, "config_kwargs": dict(FAST_S3)}


@pytest.fixture
def s3_bucket(moto_server, aws_env) -> str:
    """A fresh, empty bucket on the moto server; returns its name."""
    name = f"oloproof-{uuid.uuid4().hex[:12]}"
    fs = s3fs.S3FileSystem(endpoint_url=moto_server, skip_instance_cache=True)
    fs.mkdir(name)
    return name


@pytest.fixture
def s3_store(s3_bucket, s3_options) -> ResultsStore:
    """A store under a prefix of a fresh bucket."""
    return ResultsStore(f"s3://{s3_bucket}/team/results", s3_options)


@pytest.fixture
def moto_auth(moto_server) -> Iterator[Callable[[], Any]]:
    """Switch the moto server's request authentication on, for one block."""

    def post(count: str) -> None:
        request = urllib.request.Request(
            f"{moto_server}/moto-api/reset-auth",
            data=count.encode(),
            method="POST",
            headers={"Content-Type": "text/plain"},
        )
        with urllib.request.urlopen(request, timeout=5):
            pass

    @contextmanager
    def enforced() -> Iterator[None]:
        post("0")
        try:
            yield
        finally:
            post("inf")

    yield enforced


def _case_row(run_id: str, case_id: str, position: int | None) -> dict[str, Any]:
    return {
        "run_id": run_id,
        "case_id": case_id,
        "status": "ok",
        "execution_key": f"exec-{case_id}",
        "generation_key": f"gen-{case_id}",
        "execution_hit": False,
        "generate_hit": True,
        "input": {"question": f"Qu'est-ce que {case_id}?"},
        "expected": {"answer": "42"},
        "metadata": {"tags": ["a", "b"]},
        "output": {"answer": "42", "tokens": 3},
        "context": [{"doc_id": "d1", "chunk_id": "c1", "position": 1}],
        "dropped": [],
        "best_relevant_position": position,
        "relevant_position": "none" if position is None else str(position),
        "context_truncated": False,
        "retrieve_ms": 1.5,
        "generate_ms": 20.25,
    }


@pytest.fixture
def write_run() -> Callable[..., None]:
    """Write a run with two cases, one retrieval, judgment and metric each.

    Call it as ``write_run(store, run_id, complete=True)``; ``complete=False``
    leaves out ``run.json``, like an interrupted run.
    """
    from oloproof.store import (
        CASES,
        JUDGMENTS,
        METRICS,
        RETRIEVALS,
        run_manifest,
        run_table,
    )

    def write(store: ResultsStore, run_id: str, complete: bool = True) -> None:
        cases = [_case_row(run_id, "c1", 1), _case_row(run_id, "c2", None)]
        retrievals = [
            {"run_id": run_id, "case_id": "c1", "position": 1, "doc_id": "d1",
             "chunk_id": "c1", "score": 0.9, "text": "chunk", "in_top_k": True,
             "in_context": True, "relevant_grade": 1.0},
        ]  # fmt: skip
        judgments = [
            {"run_id": run_id, "case_id": case["case_id"], "criterion": "exact",
             "evaluator": "exact_match", "spec_hash": "s1", "status": "observed",
             "value": 1.0, "passed": True, "detail": {"matched": True}, "hit": False}
            for case in cases
        ]  # fmt: skip
        metrics = [
            {"run_id": run_id, "criterion": "exact", "kind": "proportion", "slice": None,
             "estimate": 1.0, "low": 0.34, "high": 1.0, "confidence": 0.95,
             "method": "wilson", "observed": 2, "successes": 2, "missing": 0,
             "excluded": 0, "scored": True},
        ]  # fmt: skip
        store.write_table(run_table(run_id, "cases"), cases, CASES)
        store.write_table(run_table(run_id, "retrievals"), retrievals, RETRIEVALS)
        store.write_table(run_table(run_id, "judgments"), judgments, JUDGMENTS)
        store.write_table(run_table(run_id, "metrics"), metrics, METRICS)
        if complete:
            store.write_json(
                run_manifest(run_id),
                {
                    "run_id": run_id,
                    "created_at": "2025-01-02T03:04:05+00:00",
                    "system": {"name": "demo", "version": "1.0", "index_version": "ix-7"},
                    "dataset": {"path": "cases.jsonl", "sha256": "ab" * 32},
                    "status": "complete",
                },
            )

    return write
