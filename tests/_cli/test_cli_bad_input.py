"""Bad input through ``oloproof run``: exit 2, one error line naming where, and no run written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from offline import line_of, offline_run_cli  # noqa: F401 - the module's run_cli fixture

# A small RAG system whose retriever can break the contract on demand.
MODULE = '''
from oloproof import Passage, Retrieval, rag_system

DOCS = {"d1": "alpha text", "d2": "beta text", "d3": "gamma text"}


@rag_system(name="{name}", version="1", depth=2, top_k=1, index_version="i1")
class Rag:
    def retrieve(self, input, depth):
        return Retrieval(query=input, depth=depth,
                         candidates=[Passage(d, 1.0, t) for d, t in DOCS.items()][:depth])

    def generate(self, input, context):
        return {"answer": context[0].text if context else "", "citations": [p.doc_id for p in context]}


class TooDeep(Rag):
    def retrieve(self, input, depth):
        return Retrieval(query=input, depth=depth,
                         candidates=[Passage(d, 1.0, t) for d, t in DOCS.items()])


class DictItems(Rag):
    def retrieve(self, input, depth):
        return Retrieval(query=input, depth=depth, candidates=[{"doc_id": "d1", "text": "alpha"}])


class ListOfDicts(Rag):
    def retrieve(self, input, depth):
        return [{"doc_id": "d1", "text": "alpha"}]
'''

CASES = [
    {"id": "c1", "input": "alpha?", "expected": {"answer": "alpha", "relevant": [{"doc_id": "d1"}]}},
    {"id": "c2", "input": "beta?", "expected": {"answer": "beta", "relevant": [{"doc_id": "d2"}]}},
]


def small_project(tmp_path: Path, module: str, cls: str = "Rag", extra_yaml: str = "") -> Path:
    """A two-case project whose system lives in ``<module>.py`` (unique per test)."""
    directory = tmp_path / module
    directory.mkdir()
    (directory / f"{module}.py").write_text(MODULE.replace("{name}", module), encoding="utf-8")
    (directory / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in CASES), encoding="utf-8")
    (directory / "oloproof.yaml").write_text(
        textwrap.dedent(
            f"""\
            system:
              rag:
                object: {module}:{cls}
            dataset: cases.jsonl
            evaluators:
              - {{type: contains}}
              - {{type: hit_rate, k: 1}}
            batch_size: 2
            """
        )
        + extra_yaml,
        encoding="utf-8",
    )
    return directory


def runs_written(project: Path) -> list[Path]:
    return sorted((project / ".oloproof" / "results" / "runs").rglob("run.json"))


def assert_rejected(run_cli, project: Path, expected: str, *extra: str) -> None:
    """Exit 2, exactly the one line ``oloproof: error: <expected>`` on stderr, nothing written."""
    code, out, err = run_cli("run", str(project), *extra)
    assert (code, err) == (2, f"oloproof: error: {expected}\n")
    assert out == ""
    assert runs_written(project) == []


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


# --- the cases file -------------------------------------------------------------


def test_invalid_json_line(run_cli, example_project):
    cases = example_project / "cases.jsonl"
    lines = cases.read_text().splitlines()
    lines.insert(2, '{"id": "broken", "input": {"question": "?"},')
    cases.write_text("\n".join(lines) + "\n")
    assert_rejected(run_cli, example_project, f"{cases.resolve()}:3: invalid JSON: Expecting property name enclosed in double quotes (column 45)")


def test_missing_id(run_cli, example_project):
    cases = example_project / "cases.jsonl"
    lines = cases.read_text().splitlines()
    record = json.loads(lines[4])
    del record["id"]
    lines[4] = json.dumps(record)
    cases.write_text("\n".join(lines) + "\n")
    assert_rejected(run_cli, example_project, f"{cases.resolve()}:5: field 'id': required field is missing")


def test_duplicate_ids_name_both_lines(run_cli, example_project):
    cases = example_project / "cases.jsonl"
    lines = cases.read_text().splitlines()
    first_id = json.loads(lines[1])["id"]
    cases.write_text("\n".join(lines + [lines[1]]) + "\n")
    assert_rejected(
        run_cli,
        example_project,
        f"{cases.resolve()}:{len(lines) + 1}: field 'id': duplicate id '{first_id}' (first on line 2)",
    )


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        (
            {"expected": {"answer": "14 days", "relevant": "kb-01"}},
            "field 'expected.relevant': Input should be a valid list (got \"kb-01\")",
        ),
        (
            {"expected": {"relevant": [{"doc_id": "kb-01", "grade": "high"}]}},
            "field 'expected.relevant.0.grade': Input should be a valid number (got \"high\")",
        ),
        ({"metadata": "billing"}, "field 'metadata': Input should be a valid dictionary (got \"billing\")"),
    ],
    ids=["relevant-string", "grade-string", "metadata-string"],
)
def test_wrong_types(run_cli, example_project, patch, message):
    cases = example_project / "cases.jsonl"
    lines = cases.read_text().splitlines()
    lines[0] = json.dumps({**json.loads(lines[0]), **patch})
    cases.write_text("\n".join(lines) + "\n")
    assert_rejected(run_cli, example_project, f"{cases.resolve()}:1: {message}")


def test_empty_dataset(run_cli, example_project):
    cases = example_project / "cases.jsonl"
    cases.write_text("\n   \n")
    assert_rejected(run_cli, example_project, f"{cases.resolve()}: the dataset holds no cases")


def test_missing_dataset_file(run_cli, example_project):
    (example_project / "cases.jsonl").unlink()
    assert_rejected(run_cli, example_project, f"{(example_project / 'cases.jsonl').resolve()}: cases file not found")


# --- evaluators -----------------------------------------------------------------


def test_unknown_evaluator_type(run_cli, example_project):
    config = example_project / "oloproof.yaml"
    edit(config, "{type: recall, k: 2}", "{type: bleu, k: 2}")
    code, out, err = run_cli("run", str(example_project))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.endswith(")\n")
    line = line_of(config, "type: bleu")
    assert err.startswith(
        f"oloproof: error: {config}:{line}: field 'evaluators.2.type': unknown evaluator type 'bleu' (known: "
    )
    assert "hit_rate" in err and "citation_validity" in err
    assert runs_written(example_project) == []


def test_unknown_evaluator_option(run_cli, example_project):
    config = example_project / "oloproof.yaml"
    edit(config, "{type: recall, k: 2}", "{type: recall, k: 2, cutoff: 3}")
    assert_rejected(
        run_cli,
        example_project,
        f"{config}:{line_of(config, 'cutoff: 3')}: field 'evaluators.2.cutoff': unknown option for recall",
    )


def test_k_zero(run_cli, example_project):
    config = example_project / "oloproof.yaml"
    edit(config, "{type: hit_rate, k: 2}", "{type: hit_rate, k: 0}")
    assert_rejected(
        run_cli,
        example_project,
        f"{config}:{line_of(config, 'k: 0')}: field 'evaluators.1.k': Input should be greater than or equal to 1",
    )


def test_invalid_regex_pattern(run_cli, example_project):
    config = example_project / "oloproof.yaml"
    edit(config, "  - {type: citation_validity}\n", "  - {type: citation_validity}\n  - {type: regex, pattern: '(days'}\n")
    assert_rejected(
        run_cli,
        example_project,
        f"{config}:{line_of(config, 'type: regex')}: field 'evaluators.5.pattern': "
        "invalid regular expression: missing ), unterminated subpattern at position 0",
    )


# --- the system -----------------------------------------------------------------


def test_token_budget_without_count_tokens(run_cli, tmp_path):
    project = small_project(tmp_path, "badin_nocount", extra_yaml="")
    config = project / "oloproof.yaml"
    edit(config, "    object: badin_nocount:Rag\n", "    object: badin_nocount:Rag\n    token_budget: 40\n")
    assert_rejected(
        run_cli,
        project,
        f"{config}:{line_of(config, 'token_budget')}: field 'system.rag.token_budget': a token_budget needs a "
        "count_tokens(passage) method on the system (Oloproof never estimates tokens)",
    )


def test_object_module_cannot_be_imported(run_cli, example_project):
    config = example_project / "oloproof.yaml"
    edit(config, "object: app:SupportRag", "object: badin_no_such_module:SupportRag")
    assert_rejected(
        run_cli,
        example_project,
        f"{config}:{line_of(config, 'object:')}: field 'system.rag.object': cannot import "
        "'badin_no_such_module': ModuleNotFoundError: No module named 'badin_no_such_module'",
    )


def test_object_module_raises_on_import(run_cli, example_project):
    (example_project / "badin_raises.py").write_text("raise RuntimeError('no API key')\n")
    config = example_project / "oloproof.yaml"
    edit(config, "object: app:SupportRag", "object: badin_raises:SupportRag")
    assert_rejected(
        run_cli,
        example_project,
        f"{config}:{line_of(config, 'object:')}: field 'system.rag.object': cannot import "
        "'badin_raises': RuntimeError: no API key",
    )


def test_object_module_raising_a_multiline_error_is_one_line(run_cli, example_project):
    (example_project / "badin_multiline.py").write_text(
        "raise ValueError('bad settings:\\n  version must be text')\n"
    )
    config = example_project / "oloproof.yaml"
    edit(config, "object: app:SupportRag", "object: badin_multiline:SupportRag")
    code, out, err = run_cli("run", str(example_project))
    assert (code, out) == (2, "")
    assert err.count("\n") == 1, err
    assert err.startswith(
        f"oloproof: error: {config}:{line_of(config, 'object:')}: field 'system.rag.object': "
        "cannot import 'badin_multiline': ValueError: bad settings:"
    )
    assert runs_written(example_project) == []


def test_system_constructor_raising_is_a_config_error(run_cli, tmp_path):
    project = small_project(tmp_path, "badin_init")
    (project / "badin_init.py").write_text(
        (project / "badin_init.py").read_text()
        + "\n\nclass NeedsKey(Rag):\n    def __init__(self):\n        raise RuntimeError('OPENAI_API_KEY is not set')\n"
    )
    config = project / "oloproof.yaml"
    edit(config, "object: badin_init:Rag", "object: badin_init:NeedsKey")
    code, out, err = run_cli("run", str(project))
    assert (code, out) == (2, "")
    assert err.count("\n") == 1, err
    assert err.startswith(f"oloproof: error: {config}:{line_of(config, 'object:')}: field 'system.rag.object': ")
    assert "RuntimeError: OPENAI_API_KEY is not set" in err
    assert runs_written(project) == []


def test_object_attribute_is_missing(run_cli, tmp_path):
    project = small_project(tmp_path, "badin_noattr", cls="Nope")
    config = project / "oloproof.yaml"
    assert_rejected(
        run_cli,
        project,
        f"{config}:{line_of(config, 'object:')}: field 'system.rag.object': "
        "module 'badin_noattr' has no attribute 'Nope'",
    )


def test_invalid_yaml(run_cli, example_project):
    config = example_project / "oloproof.yaml"
    edit(config, "dataset: cases.jsonl", "dataset: cases.jsonl: more")
    assert_rejected(
        run_cli,
        example_project,
        f"{config}:{line_of(config, 'dataset:')}: invalid YAML: mapping values are not allowed here",
    )


def test_bad_set_value_names_set(run_cli, example_project):
    assert_rejected(
        run_cli,
        example_project,
        "--set: field 'system.rag.top_k': Input should be a valid integer (got 'abc')",
        "--set",
        "system.rag.top_k=abc",
    )


def test_set_without_equals_names_set(run_cli, example_project):
    assert_rejected(
        run_cli,
        example_project,
        "--set: field 'system.rag.top_k': invalid override 'system.rag.top_k': expected key.path=value",
        "--set",
        "system.rag.top_k",
    )


def test_set_unknown_key_names_set(run_cli, example_project):
    assert_rejected(
        run_cli,
        example_project,
        "--set: field 'system.rag.topk': unknown field",
        "--set",
        "system.rag.topk=3",
    )


def test_set_top_k_above_depth_names_set(run_cli, example_project):
    assert_rejected(
        run_cli,
        example_project,
        "--set: field 'system.rag.top_k': top_k (9) cannot exceed depth (6)",
        "--set",
        "system.rag.top_k=9",
    )


def test_no_project(run_cli, tmp_path):
    assert_rejected(
        run_cli, tmp_path, f"{tmp_path / 'oloproof.yaml'}: no oloproof.yaml found (expected a project folder)"
    )


def test_retrieval_evaluator_on_a_plain_system(run_cli, tmp_path):
    directory = tmp_path / "plain"
    directory.mkdir()
    (directory / "badin_plain.py").write_text(
        "from oloproof import system\n\n@system(name='p', version='1')\ndef answer(input):\n    return {'answer': input}\n"
    )
    (directory / "cases.jsonl").write_text('{"id": "a", "input": "x", "expected": {"answer": "x"}}\n')
    config = directory / "oloproof.yaml"
    config.write_text(
        "system:\n  object: badin_plain:answer\ndataset: cases.jsonl\n"
        "evaluators:\n  - {type: exact_match}\n  - {type: ndcg, k: 3}\n"
    )
    assert_rejected(
        run_cli,
        directory,
        f"{config}:6: field 'evaluators.1.type': ndcg reads the retrieval; it needs a @rag_system (or an agent with a context tool)",
    )


# --- contract breaks at run time ------------------------------------------------


@pytest.mark.slow
def test_more_candidates_than_depth_is_a_contract_error(run_cli, tmp_path):
    project = small_project(tmp_path, "badin_toodeep", cls="TooDeep")
    code, out, err = run_cli("run", str(project))
    assert (code, out) == (2, "")
    # In-process, Prefect's own task-failure log lines may land on the captured stderr
    # first; the one-line contract on a real console is checked in a subprocess below.
    last = err.splitlines()[-1]
    assert last.startswith("oloproof: error: field 'retrieve': badin_toodeep:TooDeep.retrieve returned 3 candidates")
    assert last.endswith("; depth is 2")
    assert runs_written(project) == []


@pytest.mark.slow
def test_retrieve_returning_a_list_is_a_contract_error(run_cli, tmp_path):
    project = small_project(tmp_path, "badin_listy", cls="ListOfDicts")
    code, out, err = run_cli("run", str(project))
    assert (code, out) == (2, "")
    last = err.splitlines()[-1]
    assert last.startswith("oloproof: error: field 'retrieve': badin_listy:ListOfDicts.retrieve returned list for case ")
    assert last.endswith("; expected Retrieval")
    assert runs_written(project) == []


@pytest.mark.slow
def test_a_contract_error_is_one_line_on_a_real_console(prefect_api, tmp_path):
    """The real command in a subprocess: stderr holds the error line and nothing else."""
    from prefect.settings import PREFECT_API_URL

    project = small_project(tmp_path, "badin_console", cls="TooDeep")
    result = subprocess.run(
        [sys.executable, "-m", "oloproof._cli.main", "run", str(project)],
        check=False, capture_output=True, text=True, timeout=300,
        env={**os.environ, "PREFECT_API_URL": str(PREFECT_API_URL.value())},
    )
    assert (result.returncode, result.stdout) == (2, ""), result.stderr[-3000:]
    assert result.stderr.count("\n") == 1, result.stderr[-3000:]
    assert result.stderr.startswith(
        "oloproof: error: field 'retrieve': badin_console:TooDeep.retrieve returned 3 candidates for case "
    )
    assert result.stderr.endswith("; depth is 2\n")
    assert runs_written(project) == []


@pytest.mark.slow
def test_dict_candidates_are_a_contract_error(run_cli, tmp_path):
    """Retrieval() rejects a dict inside the user's retrieve(): that is the retriever
    breaking its contract, so the run stops with one line and writes no run."""
    project = small_project(tmp_path, "badin_dicts", cls="DictItems")
    code, out, err = run_cli("run", str(project))
    assert (code, out) == (2, "")
    last = err.strip().splitlines()[-1]
    assert last.startswith("oloproof: error: field 'retrieve': badin_dicts:DictItems.retrieve built an invalid Retrieval for case ")
    assert "candidate 1 is dict, expected Passage" in last
    assert runs_written(project) == []
