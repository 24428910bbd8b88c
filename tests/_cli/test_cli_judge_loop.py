"""The judge-validation loop on the example, against a local OpenAI-compatible server:
run → compare (the judge rule is ``judge_not_validated``) → ``judge sample`` → label →
``judge validate`` → compare again (the rule decides) — and a lenient judge that fails.

The server grades relevance by rule: the faithful judge gives each case the score the
example's ``human_labels.jsonl`` gives it, the lenient one 5 for everything. The
other judges of ``judges.yaml`` get fixed replies.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest
from providers_wire import Script, chat_json, serve

pytestmark = pytest.mark.slow

LENIENT = "lenient-judge"


def _human(example: Path) -> dict[str, dict]:
    rows = [json.loads(line) for line in (example / "human_labels.jsonl").read_text().splitlines()]
    return {row["query"]: row for row in rows}


def _grader(human: dict[str, dict]):
    def grade(seen):
        body = seen.body
        schema = body["response_format"]["json_schema"]["name"]
        user = next(m["content"] for m in body["messages"] if m["role"] == "user")
        if schema.startswith("citation_support"):
            return chat_json({"citations": []})
        if not schema.startswith("relevance"):
            return chat_json({"score": 4, "reason": "scripted"})
        if body["model"] == LENIENT:
            return chat_json({"score": 5, "reason": "looks fine"})
        query = user.split("Question:\n", 1)[1].split("\n\nAnswer:", 1)[0].strip()
        label = human[query]["label"]
        return chat_json({"score": label, "reason": f"as a person would: {label}"})

    return grade


@pytest.fixture
def judges(server, example_project):
    serve(server, "/v1/chat/completions", Script(_grader(_human(example_project))))
    base = example_project / "judges.yaml"
    text = base.read_text()
    lenient = example_project / "judges_lenient.yaml"
    lenient.write_text(text.replace('{type: relevance, provider: local, model: "llama3.1:8b"}',
                                    f'{{type: relevance, provider: local, model: "{LENIENT}"}}'))
    return {"faithful": base, "lenient": lenient, "url": server.url_for("/v1")}


def _run(run_cli, config: Path, url: str) -> str:
    code, out, err = run_cli("run", str(config), "--set", f"providers.local.base_url={url}", "--json")
    assert code == 0, err
    return json.loads(out)["run_id"]


def _compare(run_cli, project: Path, candidate: str, baseline: str) -> tuple[int, str]:
    code, out, err = run_cli("compare", candidate, baseline, "--policy", str(project / "judges_compare.yaml"),
                             "--project", str(project))
    assert code in (0, 3), err
    return code, out


def _decision(out: str, rule: str) -> str:
    return next(line for line in out.splitlines() if line.strip().startswith(rule))


def test_sample_label_validate_then_the_judge_rule_decides(run_cli, judges, example_project, tmp_path):
    project = example_project
    baseline = _run(run_cli, judges["faithful"], judges["url"])
    candidate = _run(run_cli, judges["faithful"], judges["url"])

    code, out = _compare(run_cli, project, candidate, baseline)
    assert code == 3
    assert _decision(out, "relevance-not-worse").endswith("INSUFFICIENT_EVIDENCE  judge_not_validated")
    assert _decision(out, "answers-not-worse").endswith("PASS  interval_above_margin")

    # Draw every judged case: the labelling file holds what the judge read, not its verdict.
    labelling = tmp_path / "to_label.jsonl"
    code, out, err = run_cli("judge", "sample", baseline, "--criterion", "relevance", "--n", "13",
                             "--output", str(labelling), "--project", str(project))
    assert code == 0, err
    assert "13 of the 13 cases judged on relevance (uniform, seed 0)" in out
    rows = [json.loads(line) for line in labelling.read_text().splitlines()]
    assert len(rows) == 13 and all(r["label"] is None and "judge_reason" not in r for r in rows)
    human = {row["case_id"]: row for row in _human(project).values()}
    assert all(r["answer"] == human[r["case_id"]]["answer"] for r in rows)
    # The file is not overwritten: it may hold labels.
    code, _, err = run_cli("judge", "sample", baseline, "--criterion", "relevance", "--n", "13",
                           "--output", str(labelling), "--project", str(project))
    assert code == 2 and "exists (it may hold labels)" in err

    labelled = tmp_path / "labelled.jsonl"
    labelled.write_text("".join(json.dumps({**r, "label": human[r["case_id"]]["label"], "annotator": "ana"}) + "\n"
                                for r in rows))  # fmt: skip
    code, out, err = run_cli("judge", "validate", "--labels", str(labelled), "--run", baseline, "--criterion",
                             "relevance", "--policy", str(project / "judges_compare.yaml"), "--project", str(project))
    assert code == 0, out + err
    assert "Validation: PASS" in out
    assert "accuracy" in out and "100.0%" in out

    code, out = _compare(run_cli, project, candidate, baseline)
    assert code == 0, out
    assert "judge_not_validated" not in out
    assert _decision(out, "relevance-not-worse").endswith("PASS  interval_above_margin")
    assert out.splitlines()[-1] == "Gate: PASS (exit 0)"

    # The run's report now shows the judge metric beside the humans' (13 labels of 13:
    # nothing left unlabelled, so PPI falls back to the humans and says so).
    code, out, err = run_cli("show", baseline, "--project", str(project))
    assert code == 0, err
    assert "relevance (PPI, 13 labels of 13)" in out and "humans only: every judged case is labelled" in out


def test_the_then_hint_runs_as_written_and_the_file_lands_in_the_project(
    run_cli, judges, example_project, tmp_path, monkeypatch
):
    from readme_blocks import commands

    baseline = _run(run_cli, judges["faithful"], judges["url"])
    monkeypatch.chdir(example_project.parent)  # a project named by a relative path, as a user types it
    code, out, err = run_cli("judge", "sample", baseline, "--criterion", "relevance", "--n", "13",
                             "--project", example_project.name)  # fmt: skip
    assert code == 0, err
    (written,) = example_project.glob("labels-relevance-smp_*.jsonl")  # next to the project, not in "."
    assert not list(example_project.parent.glob("labels-*.jsonl"))
    (hint,) = [line.removeprefix("Then: ") for line in out.splitlines() if line.startswith("Then: ")]
    assert f"--labels {example_project.name}/{written.name} " in hint and hint.endswith(f"--project {example_project.name}")
    human = {row["case_id"]: row for row in _human(example_project).values()}
    rows = [json.loads(line) for line in written.read_text().splitlines()]
    written.write_text("".join(json.dumps({**r, "label": human[r["case_id"]]["label"]}) + "\n" for r in rows))
    (argv,) = commands(hint)
    code, out, err = run_cli(*argv)
    # Without a policy the defaults apply (50 labels): 13 cannot pass them, and it says so.
    assert code == 3, out + err
    assert "Validation: FAIL" in out


def test_a_lenient_judge_fails_validation_and_cannot_gate(run_cli, judges, example_project):
    project = example_project
    baseline = _run(run_cli, judges["lenient"], judges["url"])
    candidate = _run(run_cli, judges["lenient"], judges["url"])
    # The example's labels name no sample: they validate on the cases they carry, whose
    # answers must be this run's.
    code, out, err = run_cli("judge", "validate", "--labels", str(project / "human_labels.jsonl"), "--run", baseline,
                             "--criterion", "relevance", "--policy", str(project / "judges_compare.yaml"),
                             "--project", str(project))  # fmt: skip
    assert code == 3, out + err
    assert "Validation: FAIL (exit 3)" in out
    assert "false-positive rate" in out and "100.0%" in out  # it passed every case the humans failed
    code, out = _compare(run_cli, project, candidate, baseline)
    assert code == 3
    assert _decision(out, "relevance-not-worse").endswith("INSUFFICIENT_EVIDENCE  judge_not_validated")

    code, out, err = run_cli("judge", "validations", "--project", str(project))
    assert code == 0, err
    (line,) = out.splitlines()
    assert "FAIL  relevance  relevance v1 · openai lenient-judge" in line and "13 labels" in line


def test_another_model_or_prompt_is_another_judge(run_cli, judges, example_project, tmp_path):
    project = example_project
    run_id = _run(run_cli, judges["faithful"], judges["url"])
    code, out, err = run_cli("judge", "validate", "--labels", str(project / "human_labels.jsonl"), "--run", run_id,
                             "--criterion", "relevance", "--policy", str(project / "judges_compare.yaml"),
                             "--project", str(project))  # fmt: skip
    assert code == 0, out + err
    (record,) = [json.loads(p.read_text()) for p in (project / ".oloproof/results/validations").glob("*.json")]

    # The packaged prompt's text with one word changed: another judge.
    prompt = tmp_path / "relevance_prompt.md"
    text = (resources.files("oloproof.evaluators") / "prompts" / "relevance_v1.md").read_text(encoding="utf-8")
    prompt.write_text(text.replace("Grade from 1 to 5:", "Grade strictly from 1 to 5:"))
    edited = project / "judges_prompt.yaml"
    edited.write_text(judges["faithful"].read_text().replace(
        '{type: relevance, provider: local, model: "llama3.1:8b"}',
        f'{{type: relevance, provider: local, model: "llama3.1:8b", prompt: "{prompt}"}}'))
    other = _run(run_cli, edited, judges["url"])
    manifest = json.loads((project / f".oloproof/results/runs/{other}/run.json").read_text())
    entry = next(e for e in manifest["evaluators"] if e["criterion"] == "relevance")
    assert entry["judge_id"] != record["judge_id"]
    assert entry["judge"]["prompts"] != record["judge"]["prompts"]
