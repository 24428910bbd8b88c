"""``load_policy``: the example's compare.yaml, and errors that name file, line and field."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from oloproof._exceptions import ConfigError
from oloproof.comparison import Policy, Rule, load_policy

EXAMPLE_POLICY = Path(__file__).resolve().parents[2] / "examples" / "support_rag" / "compare.yaml"


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "compare.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def _error(path: Path) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        load_policy(path)
    return caught.value


def test_the_example_policy_loads():
    policy = load_policy(EXAMPLE_POLICY)
    assert isinstance(policy, Policy)
    assert policy.confidence == 0.95
    assert [(r.name, r.metric, r.kind, r.margin, r.min_pairs, r.plan_difference) for r in policy.rules] == [
        ("answers-not-worse", "answer_correct", "non-inferiority", 5.0, 10, None),
        ("citations-not-worse", "citations_valid", "non-inferiority", 2.0, 10, None),
    ]
    assert load_policy(str(EXAMPLE_POLICY)) == policy


def test_defaults_and_every_kind(tmp_path):
    policy = load_policy(_write(tmp_path, (
        "rules:\n"
        "  - {name: a, metric: m1, kind: non-inferiority}\n"
        "  - {name: b, metric: m2, kind: superiority, margin: 3, min_pairs: 50, plan_difference: 10}\n"
        "  - {name: c, metric: m3, kind: equivalence, margin: 0.5}\n"
    )))
    assert policy.confidence == 0.95
    a, b, c = policy.rules
    assert (a.margin, a.min_pairs) == (0.0, 10)
    assert (b.kind, b.margin, b.min_pairs, b.plan_difference) == ("superiority", 3.0, 50, 10.0)
    assert (c.kind, c.margin) == ("equivalence", 0.5)


def test_rules_are_frozen():
    rule = Rule(name="r", metric="m", kind="superiority", margin=1)
    with pytest.raises(ValidationError):
        rule.margin = 2  # type: ignore[misc]


def test_negative_margin_names_file_line_and_field(tmp_path):
    path = _write(tmp_path, (
        "confidence: 0.95\n"
        "rules:\n"
        "  - name: ok\n"
        "    metric: answer_correct\n"
        "    kind: non-inferiority\n"
        "  - name: bad\n"
        "    metric: citations_valid\n"
        "    kind: non-inferiority\n"
        "    margin: -2.0\n"
    ))
    error = _error(path)
    assert (error.path, error.line, error.field) == (str(path), 9, "rules.1.margin")
    assert "greater than or equal to 0" in error.message and "-2.0" in error.message
    assert str(error).startswith(f"{path}:9: field 'rules.1.margin': ")


def test_unknown_rule_kind(tmp_path):
    path = _write(tmp_path, "rules:\n  - name: r\n    metric: answer_correct\n    kind: better-than\n")
    error = _error(path)
    assert (error.path, error.line, error.field) == (str(path), 4, "rules.0.kind")
    assert error.message == (
        "unknown rule kind 'better-than' (expected non-inferiority, superiority or equivalence)"
    )


@pytest.mark.parametrize(
    ("text", "line", "field", "message"),
    [
        ("rules:\n  - name: r\n    kind: superiority\n", 2, "rules.0.metric", "required field is missing"),
        ("rules:\n  - name: r\n    metric: m\n    kind: superiority\n    margn: 2\n", 5, "rules.0.margn",
         "unknown field"),
        ("confidence: 0.95\nrule:\n  - {name: r, metric: m, kind: superiority}\n", 1, "rules",
         "required field is missing"),
        ("rules: []\n", 1, "rules", None),
        ("confidence: 95\nrules:\n  - {name: r, metric: m, kind: superiority}\n", 1, "confidence", "95"),
        ("rules:\n  - {name: r, metric: m, kind: superiority, margin: .inf}\n", 2, "rules.0.margin", "finite"),
        ("rules:\n  - {name: r, metric: m, kind: superiority, min_pairs: 0}\n", 2, "rules.0.min_pairs", None),
        ("rules:\n  - {name: '', metric: m, kind: superiority}\n", 2, "rules.0.name", None),
        ("rules:\n  - {name: r, metric: a, kind: superiority}\n  - {name: r, metric: b, kind: equivalence}\n",
         1, "rules", "rule names must be unique: r"),
        # Numbers are strict: a quoted number was read as the number.
        ("rules:\n  - {name: r, metric: m, kind: superiority, margin: '5'}\n", 2, "rules.0.margin",
         "Input should be a valid number (got '5'): write the number unquoted"),
        ("rules:\n  - {name: r, metric: m, kind: superiority, plan_difference: '2'}\n", 2,
         "rules.0.plan_difference", "valid number"),
        ("rules:\n  - {name: r, metric: m, kind: superiority, min_pairs: '10'}\n", 2, "rules.0.min_pairs",
         "valid integer"),
        ("confidence: '0.9'\nrules:\n  - {name: r, metric: m, kind: superiority}\n", 1, "confidence", "valid number"),
        ("rules:\n  - {name: r, metric: m, kind: superiority}\njudges:\n  min_kappa_low: '0.6'\n", 4,
         "judges.min_kappa_low", "valid number"),
        ("rules:\n  - {name: r, metric: m, kind: superiority}\njudges:\n  confidence: '0.9'\n", 4,
         "judges.confidence", "valid number"),
        ("rules:\n  - {name: r, metric: m, kind: superiority}\njudges:\n  min_labels: '50'\n", 4,
         "judges.min_labels", "valid integer"),
        ("rules:\n  - {name: " + "r" * 257 + ", metric: m, kind: superiority}\n", 2, "rules.0.name",
         "at most 256 characters"),
        ("rules:\n  - {name: r, metric: " + "m" * 257 + ", kind: superiority}\n", 2, "rules.0.metric",
         "at most 256 characters"),
        ("rules:\n  - {name: r, metric: m, kind: superiority}\nrules:\n  - {name: q, metric: m, kind: superiority}\n",
         3, "rules", "duplicate key 'rules'"),
        ("rules:\n  - {name: r, metric: m, kind: superiority, kind: equivalence}\n", 2, "rules.0.kind",
         "duplicate key 'kind'"),
        ("rules:\n  - {name: \"r\\ud800\", metric: m, kind: superiority}\n", 2, "rules.0.name", "lone surrogate"),
        ("rules:\n  - {name: r, metric: m, kind: superiority, margin: " + "[" * 5000 + "]" * 5000 + "}\n", 2, None,
         "nested more than 64 levels deep"),
    ],
    ids=["missing-metric", "unknown-field", "missing-rules", "empty-rules", "confidence-in-points",
         "infinite-margin", "zero-min-pairs", "empty-name", "duplicate-names", "margin-as-text",
         "plan-difference-as-text", "min-pairs-as-text", "confidence-as-text", "kappa-as-text",
         "judges-confidence-as-text", "min-labels-as-text", "long-name", "long-metric", "repeated-key",
         "repeated-rule-key", "lone-surrogate", "deep-nesting"],
)
def test_invalid_policies_name_line_and_field(tmp_path, text, line, field, message):
    path = _write(tmp_path, text)
    error = _error(path)
    assert error.path == str(path)
    assert error.field == field
    assert error.line == line
    if message is not None:
        assert message in error.message
    rendered = str(error)
    assert rendered.startswith(f"{path}:{line}: field '{field}': " if field else f"{path}:{line}: ")
    assert "\n" not in rendered


def test_missing_file(tmp_path):
    error = _error(tmp_path / "nope.yaml")
    assert str(error) == f"{tmp_path / 'nope.yaml'}: policy file not found"


def test_a_directory_is_not_a_policy_file(tmp_path):
    error = _error(tmp_path)
    assert error.message == "policy file not found"


def test_invalid_yaml_names_the_line(tmp_path):
    path = _write(tmp_path, "rules:\n  - name: r\n    metric: [m\n    kind: superiority\n")
    error = _error(path)
    assert error.path == str(path)
    assert error.message.startswith("invalid YAML: ")
    assert error.line is not None and 3 <= error.line <= 5
    assert "\n" not in str(error)


def test_a_list_is_not_a_policy(tmp_path):
    path = _write(tmp_path, "- {name: r, metric: m, kind: superiority}\n")
    error = _error(path)
    assert error.path == str(path)
    assert "\n" not in str(error)


def test_empty_file_needs_rules(tmp_path):
    error = _error(_write(tmp_path, ""))
    assert (error.field, error.message) == ("rules", "required field is missing")
