"""How a case's error is recorded: type, message and where in the user's code it was raised."""

from __future__ import annotations

import importlib.util
import logging

from oloproof.records import GenerationRecord
from oloproof.tasks._cached import Outcome, _describe, outcome, passthrough


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _raised(fn) -> BaseException:
    try:
        fn()
    except Exception as error:  # noqa: BLE001 - any user error
        return error
    raise AssertionError("did not raise")


def test_an_error_raised_in_user_code_names_its_line(tmp_path):
    path = tmp_path / "describe_user_a.py"
    path.write_text("def generate(input):\n    raise RuntimeError('endpoint timed out')\n")
    module = _load(path, "describe_user_a")
    assert _describe(_raised(lambda: module.generate("x"))) == f"RuntimeError: endpoint timed out (at {path}:2)"


def test_an_error_raised_by_a_library_names_the_users_line(tmp_path):
    path = tmp_path / "describe_user_b.py"
    path.write_text(
        "from oloproof import Retrieval\n\n"
        "def retrieve(input, depth):\n"
        "    return Retrieval(query=input, depth=depth, candidates=[{'doc_id': 'd1'}])\n"
    )
    module = _load(path, "describe_user_b")
    described = _describe(_raised(lambda: module.retrieve("q", 2)))
    assert described.startswith("ValidationError: 1 validation error for Retrieval; ")
    assert described.endswith(f"(at {path}:4)")


def test_outcomes_and_passthrough():
    failed = outcome(key="k", error="RuntimeError: x", error_stage="generate", ms=3.0, computed_by="run_1")
    assert failed == Outcome(key="k", error="RuntimeError: x", error_stage="generate", ms=3.0, computed_by="run_1")
    assert not failed.ok
    assert outcome(key="k", record=GenerationRecord(output=1), error_stage="generate").error_stage is None
    assert outcome(key="k", record={"a": 1}).ok
    assert passthrough(failed) == Outcome(error="RuntimeError: x", error_stage="generate")
    assert passthrough(None).error_stage == "unknown"


def test_outcomes_survive_prefects_json_round_trip():
    # Batch results are persisted by Prefect's JSON serializer and read back by the next stage.
    from prefect.serializers import JSONSerializer

    serializer = JSONSerializer()
    from oloproof.records import AssembledPassage, AssemblyRecord, Candidate, GenerationRecord, RetrievalRecord

    candidate = Candidate(doc_id="d", score=0.5, text="t", chunk_id=None)
    kept = AssembledPassage(position=1, doc_id="d", chunk_id=None, text="t", tokens=3)
    batch = {
        "c1": outcome(key="k1", record=RetrievalRecord(query="q", depth=2, candidates=[candidate]), ms=1.5,
                      computed_by="run_a"),
        "c2": outcome(error="timeout after 30s", error_stage="retrieve", key="k2"),
        "c3": outcome(key="k3", record=RetrievalRecord(depth=2, candidates=[], replayed=True)),
        "c4": outcome(key="k4", record=AssemblyRecord(context=[kept], dropped=[])),
        "c5": outcome(key="k5", record=GenerationRecord(output={"answer": "a", "citations": ["d"]})),
        "c6": outcome(key="k6", record=GenerationRecord(output=None)),
    }  # fmt: skip
    back = serializer.loads(serializer.dumps(batch))
    assert back == batch
    assert [type(o.record) for o in back.values()] == [type(o.record) for o in batch.values()]


def test_each_failing_case_is_named_in_the_run_logs_up_to_a_bound(caplog):
    from types import SimpleNamespace

    from oloproof.tasks._cached import MAX_LOGGED_FAILURES, log_failures

    env = SimpleNamespace(run_id="run_1", store_arguments=" --project /work/proj")
    failures = [(f"case_{i}", f"RuntimeError: boom {i} (at app.py:3)") for i in range(MAX_LOGGED_FAILURES + 5)]
    with caplog.at_level(logging.WARNING, logger="oloproof"):  # outside a Prefect run: Oloproof's own logger
        log_failures(env, "generate", failures[:2])
        log_failures(env, "judge", failures)
    lines = [(record.levelno, record.getMessage()) for record in caplog.records]
    assert lines[:2] == [
        (logging.WARNING, "generate case_0: missing: RuntimeError: boom 0 (at app.py:3)"),
        (logging.WARNING, "generate case_1: missing: RuntimeError: boom 1 (at app.py:3)"),
    ]
    assert len(lines) == 2 + MAX_LOGGED_FAILURES + 1
    assert lines[-1] == (
        logging.WARNING, "judge: 5 more failing cases in this batch; oloproof inspect run_1 --project /work/proj lists them all",
    )
