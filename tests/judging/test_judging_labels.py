"""Labels files: every bad line refused with its file, line and field."""

from __future__ import annotations

import json

import pytest
from judged_runs import judged_run

from oloproof._exceptions import LabelError
from oloproof.judging import case_texts, draw_sample, labelling_rows, load_labels, sample_frame

RUN = judged_run("run_A", [5, 4, 1, 2, 5, 3, 1, 5, 4, 2])
OTHER = judged_run("run_B", [5] * 10)


def _texts(run=RUN):
    return case_texts(run, "relevance", {})


def _sample(run=RUN, size=6, seed=0):
    return draw_sample(run, "relevance", size, seed=seed)


def _file(tmp_path, rows, name="labels.jsonl"):
    path = tmp_path / name
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def _load(path, samples=(), run=RUN):
    known = {s.sample_id: s for s in samples}
    return load_labels(path, run=run, criterion="relevance", texts=_texts(run), find_sample=known.get)


def _labelled(sample, labels, run=RUN):
    rows = labelling_rows(run, sample, _texts(run))
    for row, label in zip(rows, labels):
        row["label"] = label
    return rows


def test_a_filled_in_sample_loads(tmp_path):
    sample = _sample()
    rows = _labelled(sample, ["pass", "fail", 4, None, 1, 5])
    assert all(set(r) >= {"query", "context", "answer", "label", "scale"} for r in rows)
    assert not any("judge_reason" in r or "judge_score" in r for r in rows)  # hidden: it would anchor labellers
    labels = _load(_file(tmp_path, rows), [sample])
    assert (len(labels.labels), labels.unlabelled, labels.sample.sample_id) == (5, 1, sample.sample_id)
    assert [lab.line for lab in labels.labels] == [1, 2, 3, 5, 6]


def test_the_judge_reason_is_shown_only_when_asked():
    rows = labelling_rows(RUN, _sample(), _texts(), show_reason=True)
    assert all(row["judge_reason"].startswith("scored") for row in rows)


def test_the_sample_is_a_function_of_the_case_set_and_seed():
    shuffled = {**RUN, "judgments": list(reversed(RUN["judgments"]))}
    assert _sample(RUN).case_ids == _sample(shuffled).case_ids
    # Another seed is another sample, under another id.
    assert _sample(RUN, seed=1).sample_id != _sample(RUN, seed=0).sample_id
    assert _sample(RUN, seed=0).sample_id == _sample(shuffled, seed=0).sample_id


def test_a_stratified_sample_allocates_proportionally():
    run = judged_run("run_S", [5] * 12, slices={"topic": ["a"] * 9 + ["b"] * 3})
    sample = draw_sample(run, "relevance", 4, seed=3, stratify="metadata.topic")
    topics = {c: c < "c0009" for c in sample.case_ids}
    assert sum(topics.values()) == 3 and len(sample.case_ids) == 4 and sample.stratify == "metadata.topic"


@pytest.mark.parametrize("edit, field, message", [
    (lambda r: {**r, "case_id": "c9999"}, "case_id", "is not in run run_A"),
    (lambda r: {**r, "criterion": "groundedness"}, "criterion", "run run_A has no criterion 'groundedness'"),
    (lambda r: {**r, "criterion": "answer_correct"}, "criterion", "is not the one validated"),
    (lambda r: {**r, "label": 6}, "label", "label must be 'pass', 'fail' or 1-5, got 6"),
    (lambda r: {**r, "label": "yes"}, "label", "got 'yes'"),
    (lambda r: {**r, "label": True}, "label", "got True"),
    (lambda r: {**r, "label": 2.5}, "label", "got 2.5"),
    (lambda r: {**r, "lable": "pass"}, "lable", "unknown field"),
    (lambda r: {**r, "annotator": 7}, "annotator", "annotator must be a string"),
    (lambda r: {**r, "answer": "an edited answer"}, "answer", "the answer labelled differs from run run_A's answer"),
    (lambda r: {**r, "sample": "smp_nowhere"}, "sample", "differs from the file's first line"),
    (lambda r: {k: v for k, v in r.items() if k != "case_id"}, "case_id", "case_id is required"),
    (lambda r: {**r, "case_id": 0}, "case_id", "case_id is required (a string)"),  # never read as "0"
    (lambda r: {**r, "case_id": "c" * 257}, "case_id", "case_id holds at most 256 characters"),
    (lambda r: {**r, "annotator": "a" * 257}, "annotator", "annotator holds at most 256 characters"),
    (lambda r: {**r, "sample": "s" * 257}, "sample", "sample must be a string"),
])
def test_a_bad_line_names_file_line_and_field(tmp_path, edit, field, message):
    sample = _sample()
    rows = _labelled(sample, ["pass", "fail", 4, 2, 1, 5])
    rows[2] = edit(rows[2])
    path = _file(tmp_path, rows)
    with pytest.raises(LabelError) as caught:
        _load(path, [sample])
    error = caught.value
    assert (error.path, error.line, error.field) == (path, 3, field), str(error)
    assert message in str(error)
    assert str(error).startswith(f"{path}:3")


def test_a_case_outside_the_sample_is_refused(tmp_path):
    sample = _sample(size=3)
    outside = next(c for c in sample_frame(RUN["judgments"], "relevance") if c not in sample.case_ids)
    rows = _labelled(sample, ["pass", "pass", "pass"])
    rows.append({**rows[0], "case_id": outside, "query": None, "answer": None, "context": None})
    with pytest.raises(LabelError, match=f"case '{outside}' was not drawn in sample {sample.sample_id}") as caught:
        _load(_file(tmp_path, rows), [sample])
    assert (caught.value.line, caught.value.field) == (4, "case_id")


def test_a_duplicate_label_of_one_annotator_is_refused(tmp_path):
    sample = _sample()
    rows = _labelled(sample, ["pass"] * 6)
    rows = [{**r, "annotator": "ana"} for r in rows] + [{**rows[1], "annotator": "ana", "label": "fail"}]
    with pytest.raises(LabelError, match="labelled twice by annotator 'ana' \\(first on line 2\\)") as caught:
        _load(_file(tmp_path, rows), [sample])
    assert (caught.value.line, caught.value.field) == (7, "annotator")
    # Another annotator of the same case is a second opinion, not a duplicate.
    rows[-1]["annotator"] = "ben"
    assert len(_load(_file(tmp_path, rows), [sample]).labels) == 7


def test_a_labels_file_of_another_runs_sample_is_refused(tmp_path):
    theirs = draw_sample(OTHER, "relevance", 6, seed=0)
    rows = _labelled(theirs, ["pass"] * 6, run=OTHER)
    path = _file(tmp_path, rows)
    with pytest.raises(LabelError, match=f"sample {theirs.sample_id} was drawn from run run_B, not run_A") as caught:
        _load(path, [theirs])
    assert (caught.value.line, caught.value.field) == (1, "sample")
    with pytest.raises(LabelError, match="no sample 'smp_") as caught:
        _load(path, [])  # a sample this store never drew
    assert caught.value.field == "sample"


def test_labels_given_without_a_draw_validate_but_are_marked_given(tmp_path):
    rows = [{"case_id": "c0000", "criterion": "relevance", "label": 5, "annotator": "ana"},
            {"case_id": "c0002", "criterion": "relevance", "label": "fail", "query": "question c0002?"}]
    labels = _load(_file(tmp_path, rows))
    assert labels.sample.kind == "given" and labels.sample.case_ids == ["c0000", "c0002"]
    assert labels.sample.sample_id.startswith("lbl_") and labels.sample.population == 10
    # A sampled line among given ones is refused: one file, one kind.
    sample = _sample()
    rows.append(_labelled(sample, ["pass"])[0])
    with pytest.raises(LabelError, match="one file holds one sample's labels") as caught:
        _load(_file(tmp_path, rows), [sample])
    assert (caught.value.line, caught.value.field) == (3, "sample")


@pytest.mark.parametrize("content, line, message", [
    (b'{"case_id": "c0000"\n', 1, "invalid JSON"),
    (b'[1, 2]\n', 1, "must be a JSON object"),
    (b'\n\n{"case_id": "c\xff"}\n', 3, "not UTF-8"),
    (b'\n{"case_id": "c0000", "case_id": "c0001", "criterion": "relevance", "label": "pass"}\n', 2,
     "duplicate key 'case_id'"),
    (b'{"case_id": "c0000", "criterion": "relevance", "label": "pass", "note": "\\ud800"}\n', 1,
     "lone surrogate"),
    (b'{"case_id": "c0000", "note": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\n", 1, "nested more than 64"),
])
def test_malformed_lines(tmp_path, content, line, message):
    path = tmp_path / "labels.jsonl"
    path.write_bytes(content)
    with pytest.raises(LabelError, match=message) as caught:
        _load(str(path))
    assert caught.value.line == line


def test_empty_and_unlabelled_files(tmp_path):
    with pytest.raises(LabelError, match="holds no lines"):
        _load(_file(tmp_path, []))
    sample = _sample()
    with pytest.raises(LabelError, match="no line is labelled yet \\(6 with"):
        _load(_file(tmp_path, _labelled(sample, [None] * 6)), [sample])
    with pytest.raises(LabelError, match="labels file not found"):
        _load(str(tmp_path / "missing.jsonl"))


def test_a_mean_score_judge_takes_scale_labels_only(tmp_path):
    run = judged_run("run_M", [5, 4, 1, 2, 5, 3], threshold=None)
    sample = draw_sample(run, "relevance", 3)
    rows = _labelled(sample, [5, "pass", 2], run=run)
    assert rows[0]["scale"] == "1-5"
    with pytest.raises(LabelError, match="reports a mean score: label on the judge's scale 1-5") as caught:
        _load(_file(tmp_path, rows), [sample], run=run)
    assert (caught.value.line, caught.value.field) == (2, "label")
