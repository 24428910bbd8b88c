"""The record base: frozen, strict, documented, and cheap to hand to the store."""

from __future__ import annotations

import inspect

import pytest
from pydantic import BaseModel, ValidationError

import oloproof.records
from oloproof.records import MetricRow, Record

METRIC = {
    "criterion": "answer_correct", "kind": "proportion", "slice": None, "slice_value": None,
    "estimate": 0.5, "low": 0.1, "high": 0.9, "confidence": 0.95, "method": "clopper-pearson",
    "observed": 4, "successes": 2, "missing": 0, "judge_errors": 0, "excluded": 1, "scored": True,
    "samples": None, "repeats": None, "flaky": None, "judge_disagreement": None,
}  # fmt: skip


def _models() -> list[type[BaseModel]]:
    exported = (getattr(oloproof.records, name) for name in oloproof.records.__all__)
    return [obj for obj in exported if inspect.isclass(obj) and issubclass(obj, BaseModel)]


def test_public_names_are_sorted_and_importable():
    assert oloproof.records.__all__ == sorted(oloproof.records.__all__)
    for name in oloproof.records.__all__:
        assert getattr(oloproof.records, name) is not None


@pytest.mark.parametrize("model", _models(), ids=lambda model: model.__name__)
def test_every_record_and_field_is_documented(model):
    assert inspect.getdoc(model)
    undocumented = [name for name, field in model.model_fields.items() if not field.description]
    assert undocumented == []


@pytest.mark.parametrize("model", _models(), ids=lambda model: model.__name__)
def test_every_record_is_frozen_and_strict(model):
    assert model.model_config.get("frozen") is True
    assert model.model_config.get("extra") == "forbid"


def test_a_record_cannot_change():
    row = MetricRow(run_id="run_1", **METRIC)
    with pytest.raises(ValidationError):
        row.estimate = 1.0  # type: ignore[misc]


def test_an_unknown_field_is_an_error():
    with pytest.raises(ValidationError, match="extra"):
        MetricRow(run_id="run_1", **METRIC, estimat=0.5)


def test_pick_takes_the_fields_it_knows_and_ignores_the_rest():
    source = {**METRIC, "run_id": "run_0", "unrelated": object()}
    row = MetricRow.pick(source, run_id="run_1")
    assert row.run_id == "run_1"  # explicit values win over the source
    assert row.estimate == 0.5


def test_pick_leaves_absent_fields_at_their_defaults():
    source = {key: value for key, value in METRIC.items() if key not in ("low", "high", "method")}
    row = MetricRow.pick(source, run_id="run_1")
    assert (row.low, row.high, row.method) == (None, None, None)


def test_pick_validates():
    with pytest.raises(ValidationError, match="observed"):
        MetricRow.pick({**METRIC, "observed": "many"}, run_id="run_1")


def test_as_mapping_is_the_fields_in_order_and_read_only():
    row = MetricRow(run_id="run_1", **METRIC)
    mapping = row.as_mapping()
    assert list(mapping) == list(MetricRow.model_fields)
    assert dict(mapping) == {"run_id": "run_1", **METRIC}
    with pytest.raises(TypeError):
        mapping["estimate"] = 1.0  # type: ignore[index]


def test_as_mapping_hands_nested_values_over_uncopied():
    from oloproof.records import JudgmentRow

    detail = {"matched": ["14 days"]}
    row = JudgmentRow(
        run_id="run_1", case_id="c1", criterion="answer_correct", evaluator="exact_match",
        spec_hash="h", status="observed", outcome="completed", value=1.0, passed=True, detail=detail, hit=False,
    )  # fmt: skip
    assert row.as_mapping()["detail"] is detail


def test_the_base_is_exported():
    assert issubclass(MetricRow, Record)
