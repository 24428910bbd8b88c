"""The report's line per judge provider with errors: which provider, how many judgments
are missing, and why, from what the manifest keeps (so ``oloproof show`` says it too)."""

from __future__ import annotations

from oloproof.records import RunManifest
from oloproof.report import judge_error_lines, provider_errors, render_run

REFUSED = "connection refused at http://127.0.0.1:8080/v1/chat/completions (after 4 retries)"
UNREACHABLE = ("provider unreachable: 5 consecutive connection failures "
               "(last: connection refused at http://127.0.0.1:8080/v1/chat/completions)")  # fmt: skip


MANIFEST = {
    "run_id": "run_01J0000000000000000000000", "kind": "run", "status": "complete",
    "created_at": "2026-05-01T12:00:00+00:00", "finished_at": "2026-05-01T12:03:04+00:00",
    "project": "/work/project", "system": {"kind": "rag"}, "system_name": "rag", "system_version": "v1",
    "dataset": "file:///work/project/cases.jsonl", "dataset_sha256": "0" * 64, "case_count": 146,
    "evaluators": [], "slices": [], "min_slice_support": 5, "confidence": 0.95,
    "cache": {name: {"hit": 0, "miss": 146} for name in ("execution", "judgment", "retrieve", "generate")},
    "variant": {"context_source": "assembled"},
}  # fmt: skip


def _usage(provider="local", model="m", *, errors=0, kinds=None, samples=None, calls=10):
    entry = {"provider": provider, "provider_type": "openai", "model": model, "calls": calls, "cached": 0,
             "retries": 0, "errors": errors, "input_tokens": 0, "output_tokens": 0, "cost_usd": None}
    if kinds is not None:
        entry["error_kinds"] = kinds
        entry["error_samples"] = samples if samples is not None else {kind: kind for kind in kinds}
    return entry


def test_one_kind_of_error_is_named_with_its_message():
    judges = [_usage(errors=371, kinds={"connection refused": 371}, samples={"connection refused": REFUSED})]
    assert judge_error_lines(judges) == [f"judge provider 'local': 371 judgments missing, {REFUSED}"]


def test_several_kinds_name_the_most_frequent_and_how_many():
    judges = [_usage(errors=371, kinds={"connection refused": 5, "provider unreachable": 366},
                     samples={"connection refused": REFUSED, "provider unreachable": UNREACHABLE})]  # fmt: skip
    assert judge_error_lines(judges) == [
        f"judge provider 'local': 371 judgments missing, 2 kinds of error; most often (366): {UNREACHABLE}"
    ]
    [row] = provider_errors(judges)
    assert row == {"provider": "local", "missing": 371, "kinds": 2, "kind": "provider unreachable",
                   "count": 366, "message": UNREACHABLE}  # fmt: skip


def test_a_provider_is_one_line_over_its_models_and_providers_without_errors_have_none():
    judges = [
        _usage("local", "a", errors=2, kinds={"HTTP 429 rate_limit_exceeded": 2}),
        _usage("local", "b", errors=3, kinds={"HTTP 429 rate_limit_exceeded": 1, "invalid reply": 2}),
        _usage("azure", "c"),
        _usage("claude", "d", errors=1, kinds={"request timed out": 1},
               samples={"request timed out": "request timed out (after 4 retries)"}),
    ]  # fmt: skip
    assert judge_error_lines(judges) == [
        "judge provider 'claude': 1 judgment missing, request timed out (after 4 retries)",
        "judge provider 'local': 5 judgments missing, 2 kinds of error; most often (3): HTTP 429 rate_limit_exceeded",
    ]


def test_a_tie_goes_to_the_first_kind_by_name():
    judges = [_usage(errors=2, kinds={"invalid reply": 1, "connection refused": 1})]
    assert provider_errors(judges)[0]["kind"] == "connection refused"


def test_a_manifest_without_error_kinds_still_says_which_provider():
    # Manifests written before kinds were kept count the errors only.
    assert judge_error_lines([_usage(errors=3)]) == ["judge provider 'local': 3 judgments missing (judge errors)"]


def test_no_errors_no_line():
    assert judge_error_lines([_usage(), _usage("other")]) == []
    assert judge_error_lines([]) == []


def test_the_line_follows_the_judges_line_in_the_stored_report():
    # What `oloproof show` prints: the manifest as stored (validated, then written as JSON).
    judges = [_usage(errors=371, calls=438, kinds={"connection refused": 5, "provider unreachable": 366},
                     samples={"connection refused": REFUSED, "provider unreachable": UNREACHABLE})]  # fmt: skip
    stored = RunManifest.model_validate({**MANIFEST, "judges": judges}).model_dump(mode="json")
    assert stored["judges"][0]["error_kinds"] == {"connection refused": 5, "provider unreachable": 366}
    lines = render_run({**stored, "metrics": []})
    at = next(i for i, line in enumerate(lines) if line.startswith("Judges: "))
    assert lines[at] == "Judges: 438 judgments · 438 requests · 0 cached · 0 tokens · 0 retries · 371 errors"
    assert lines[at + 1] == (
        f"judge provider 'local': 371 judgments missing, 2 kinds of error; most often (366): {UNREACHABLE}"
    )


def test_a_run_without_errors_stores_no_error_fields():
    stored = RunManifest.model_validate({**MANIFEST, "judges": [_usage()]}).model_dump(mode="json")
    assert "error_kinds" not in stored["judges"][0] and "error_samples" not in stored["judges"][0]
