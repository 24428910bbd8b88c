"""``oloproof compare`` refuses bad input: exit 2, one ``oloproof: error:`` line, nothing written.

Each refusal is invoked once (cached per module); the tests then check its exit
code and message, that the store's comparisons/ did not change, and separately
that stderr held exactly that one line. Prefect's console handler is pointed at
the captured stderr while a command runs, as it is in a terminal, so that log
records Prefect prints there are seen too.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from inprocess import invoke_cli as _invoke
from projects import copy_project

pytestmark = pytest.mark.slow

HERE = Path(__file__).resolve().parent
PROJECT = HERE / "compare_gate_project"
EXAMPLE_POLICY = HERE.parents[1] / "examples" / "support_rag" / "compare.yaml"


def write_cases(path: Path, count: int) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for n in range(count):
            handle.write(json.dumps({
                "id": f"case-{n:03d}",
                "input": {"question": f"Is the answer to question {n} yes?", "n": n},
                "expected": {"answer": "yes"},
            }) + "\n")


@pytest.fixture(scope="module")
def project(prefect_api, tmp_path_factory) -> dict[str, str]:
    """Runs A and B on 12 cases and S on the first 8 of them (another dataset)."""
    target = tmp_path_factory.mktemp("compare-bad-input") / "project"
    copy_project(PROJECT, target)
    write_cases(target / "cases.jsonl", 12)
    lines = (target / "cases.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (target / "subset.jsonl").write_text("".join(lines[:8]), encoding="utf-8")
    ids = {}
    for name, extra in (("A", ()), ("B", ("--set", "system.rag.object=gate_app:Candidate")),
                        ("S", ("--set", "dataset=subset.jsonl"))):
        code, out, err = _invoke("run", str(target), "--json", *extra)
        assert code == 0, err
        ids[name] = json.loads(out)["run_id"]
    policies = {
        "example": EXAMPLE_POLICY.read_text(encoding="utf-8"),
        "unknown_metric": "rules:\n  - name: answers-typo\n    metric: answer_corect\n    kind: non-inferiority\n",
        "negative_margin": (
            "confidence: 0.95\n"
            "rules:\n"
            "  - name: answers-not-worse\n"
            "    metric: answer_correct\n"
            "    kind: non-inferiority\n"
            "    margin: -5.0\n"
        ),
        "unknown_kind": (
            "rules:\n"
            "  - name: answers-not-worse\n"
            "    metric: answer_correct\n"
            "    kind: non-inferior\n"
            "    margin: 5.0\n"
        ),
        "invalid_yaml": "rules:\n  - name: answers-not-worse\n    metric: [answer_correct\n    kind: non-inferiority\n",
    }
    for name, text in policies.items():
        (target / f"{name}.yaml").write_text(text, encoding="utf-8")
    return {"dir": str(target), **ids}


def _comparisons(directory: str) -> dict[str, int]:
    root = Path(directory) / ".oloproof" / "results" / "comparisons"
    if not root.exists():
        return {}
    return {str(p.relative_to(root)): p.stat().st_mtime_ns for p in root.rglob("*")}


@contextmanager
def _prefect_console_to_stderr() -> Iterator[None]:
    """Point Prefect's console handlers at the current ``sys.stderr``, as in a terminal."""
    import sys

    from prefect.logging.handlers import PrefectConsoleHandler

    loggers = [logging.getLogger()] + [
        value for value in logging.Logger.manager.loggerDict.values() if isinstance(value, logging.Logger)
    ]
    handlers = {id(h): h for lg in loggers for h in lg.handlers if isinstance(h, PrefectConsoleHandler)}
    saved = [(h, h.stream, h.console.file) for h in handlers.values()]
    try:
        for handler, _, _ in saved:
            handler.stream = sys.stderr
            handler.console.file = sys.stderr
        yield
    finally:
        for handler, stream, file in saved:
            handler.stream = stream
            handler.console.file = file


# name -> (argv builder, fragments the error line must contain)
REFUSALS = {
    "unknown_candidate": (lambda p: ["run_01NOSUCHRUN0000000000000000", p["A"]],
                          ["no complete run 'run_01NOSUCHRUN0000000000000000'"]),
    "unknown_baseline": (lambda p: [p["A"], "run_01NOSUCHRUN0000000000000000"],
                         ["no complete run 'run_01NOSUCHRUN0000000000000000'"]),
    "unknown_metric": (lambda p: [p["B"], p["A"], "--policy", f"{p['dir']}/unknown_metric.yaml"],
                       ["answers-typo", "'answer_corect'", "neither run has", "field 'rules.0.metric'"]),
    "negative_margin": (lambda p: [p["B"], p["A"], "--policy", f"{p['dir']}/negative_margin.yaml"],
                        ["negative_margin.yaml:6: field 'rules.0.margin'", "greater than or equal to 0"]),
    "unknown_kind": (lambda p: [p["B"], p["A"], "--policy", f"{p['dir']}/unknown_kind.yaml"],
                     ["unknown_kind.yaml:4: field 'rules.0.kind'", "unknown rule kind 'non-inferior'"]),
    "self": (lambda p: [p["A"], p["A"], "--policy", f"{p['dir']}/example.yaml"],
             ["cannot compare run", "with itself"]),
    "different_datasets": (lambda p: [p["S"], p["A"], "--policy", f"{p['dir']}/example.yaml"],
                           ["different datasets", "--allow-partial"]),
    "policy_not_found": (lambda p: [p["B"], p["A"], "--policy", f"{p['dir']}/no_such_policy.yaml"],
                         ["no_such_policy.yaml: policy file not found"]),
    "invalid_yaml": (lambda p: [p["B"], p["A"], "--policy", f"{p['dir']}/invalid_yaml.yaml"],
                     ["invalid_yaml.yaml:", "invalid YAML"]),
}
# Refused inside the compare flow, where Prefect logs the exception with its
# traceback to the console before the CLI prints its one line.

_results: dict[str, tuple[int, str, str, dict[str, int], dict[str, int]]] = {}


@pytest.fixture
def refusal(request, project, run_cli):
    name = request.param
    if name not in _results:
        argv, _ = REFUSALS[name]
        before = _comparisons(project["dir"])
        with _prefect_console_to_stderr():
            code, out, err = run_cli("compare", *argv(project), "--project", project["dir"])
        _results[name] = (code, out, err, before, _comparisons(project["dir"]))
    return (name, *_results[name])


@pytest.mark.parametrize("refusal", sorted(REFUSALS), indirect=True)
def test_refused_with_exit_2_and_nothing_written(refusal, project):
    name, code, out, err, before, after = refusal
    assert code == 2, (out, err)
    assert out == ""
    assert after == before, "a refused comparison wrote to comparisons/"
    errors = [line for line in err.splitlines() if line.startswith("oloproof: error: ")]
    assert len(errors) == 1, err
    for fragment in REFUSALS[name][1]:
        assert fragment in errors[0], errors[0]
    if name in ("negative_margin", "unknown_kind", "policy_not_found", "invalid_yaml"):
        assert errors[0].startswith(f"oloproof: error: {project['dir']}/{name.replace('policy_not_found', 'no_such_policy')}")


def _one_line_params():
    for name in sorted(REFUSALS):
        yield pytest.param(name, id=name)


@pytest.mark.parametrize("refusal", list(_one_line_params()), indirect=True)
def test_stderr_is_exactly_the_one_error_line(refusal):
    _, _, _, err, _, _ = refusal
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("oloproof: error: "), err


@pytest.mark.parametrize("refusal", ["unknown_metric"], indirect=True)
def test_unknown_metric_error_names_the_policy_file_and_line(refusal, project):
    _, _, _, err, _, _ = refusal
    line = next(line for line in err.splitlines() if line.startswith("oloproof: error: "))
    # rules[0].metric is on line 3 of unknown_metric.yaml.
    assert line.startswith(f"oloproof: error: {project['dir']}/unknown_metric.yaml:3: "), line


def test_different_datasets_with_allow_partial_report_unpaired(run_cli, project):
    code, out, err = run_cli("compare", project["S"], project["A"], "--allow-partial", "--project", project["dir"])
    assert code == 0, err
    lines = out.splitlines()
    assert re.fullmatch(rf"Comparison sha256:[0-9a-f]{{64}} of {project['S']} against {project['A']} · 8 paired cases",
                        lines[0])
    assert lines[1].startswith("answer_correct: ") and lines[1].endswith("· 8 paired · 0 missing · 0 excluded · 4 unpaired")
    assert lines[2].startswith("citations_valid: ") and lines[2].endswith("· 8 paired · 0 missing · 0 excluded · 4 unpaired")
    assert lines[-1] == "Gate: none (no policy given)"

    # Under the example's policy, 8 pairs are fewer than a rule's default min_pairs (10).
    code, out, err = run_cli("compare", project["S"], project["A"], "--allow-partial",
                             "--policy", f"{project['dir']}/example.yaml", "--project", project["dir"], "--json")
    assert code == 3, err
    record = json.loads(out)
    assert record["scope"]["same_dataset"] is False
    assert {m["criterion"]: (m["paired"], m["unpaired"]) for m in record["metrics"]} == {
        "answer_correct": (8, 4), "citations_valid": (8, 4),
    }
    assert [(d["verdict"], d["reason"]) for d in record["decisions"]] == [
        ("INSUFFICIENT_EVIDENCE", "too_few_pairs"), ("INSUFFICIENT_EVIDENCE", "too_few_pairs"),
    ]
