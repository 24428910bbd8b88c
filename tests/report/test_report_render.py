"""The printed run report: the metrics table, the cache lines and the slices.

Covers the cell texts (``estimate_text``, ``interval_text`` rounded outward,
``basis_text`` for proportions, means and rows with nothing observed), the box
table (``render_table``), the two cache lines, the slices section (scored and
too-small values, the confidence level in the header) and ``render_run`` end to
end on a hand-built report whose rows are those of the product walkthrough.
"""

from __future__ import annotations

import pytest

from oloproof.report import (
    basis_text,
    cache_lines,
    estimate_text,
    interval_text,
    render_run,
    render_slices,
    render_table,
)

RUN_ID = "run_01M3C3R5Y9D18WGSZQFA7N4XRT"


def _row(criterion, *, kind="proportion", estimate=None, low=None, high=None, observed=13, successes=None,
         missing=0, excluded=0, confidence=0.95, slice_=None, value=None, scored=True):
    method = None if low is None else ("clopper-pearson" if kind == "proportion" else "betting")
    return {"criterion": criterion, "slice": slice_, "slice_value": value, "scored": scored,
            "observed": observed, "missing": missing, "excluded": excluded, "successes": successes,
            "estimate": estimate, "low": low, "high": high, "confidence": confidence, "method": method,
            "kind": kind}


# Bounds as the statistics produce them (Clopper–Pearson at 95% for 9/13, 12/13, 13/13).
ANSWER = _row("answer_correct", estimate=9 / 13, low=0.38573833824929565, high=0.9090796054279033, successes=9)
HIT = _row("hit_rate_at_2", estimate=12 / 13, low=0.6397025647321225, high=0.9980543715026533, successes=12)
RECALL = _row("recall_at_2", estimate=12 / 13, low=0.6397025647321225, high=0.9980543715026533, successes=12)
NDCG = _row("ndcg_at_6", kind="mean", estimate=0.86613, low=0.50694, high=0.98951)
CITATIONS = _row("citations_valid", estimate=1.0, low=0.752947361999529, high=1.0, successes=13)

CACHE = {
    "execution": {"hit": 0, "miss": 13},
    "judgment": {"hit": 0, "miss": 65},
    "retrieve": {"hit": 0, "miss": 13},
    "generate": {"hit": 0, "miss": 13},
}


def _report(metrics, confidence=0.95, min_support=4, cache=CACHE):
    return {"run_id": RUN_ID, "metrics": metrics, "confidence": confidence, "min_slice_support": min_support,
            "cache": cache}


# -- cell texts -----------------------------------------------------------------------


def test_proportion_estimate_is_a_percentage_with_one_decimal():
    assert estimate_text(ANSWER) == "69.2%"
    assert estimate_text(CITATIONS) == "100.0%"
    assert estimate_text({**ANSWER, "estimate": 0.0}) == "0.0%"


def test_mean_estimate_has_three_decimals():
    assert estimate_text(NDCG) == "0.866"
    assert estimate_text({**NDCG, "estimate": 0.0}) == "0.000"


@pytest.mark.parametrize("kind", ["proportion", "mean", "auto"])
def test_unobserved_estimate_is_a_dash(kind):
    assert estimate_text(_row("x", kind=kind, observed=0)) == "—"


def test_proportion_interval_is_rounded_outward_in_percent():
    assert interval_text(ANSWER) == "[38.5%, 91.0%]"
    assert interval_text(HIT) == "[63.9%, 99.9%]"
    assert interval_text(CITATIONS) == "[75.2%, 100.0%]"


def test_mean_interval_is_rounded_outward_with_three_decimals():
    assert interval_text(NDCG) == "[0.506, 0.990]"


def test_interval_bounds_on_the_grid_are_kept():
    assert interval_text({**NDCG, "low": 0.5, "high": 0.91}) == "[0.500, 0.910]"


@pytest.mark.parametrize(("low", "high"), [(None, None), (0.2, None), (None, 0.8)])
def test_interval_without_both_bounds_is_a_dash(low, high):
    assert interval_text({**ANSWER, "low": low, "high": high}) == "—"


def test_interval_with_no_method_is_still_rendered():
    assert interval_text({**ANSWER, "method": None}) == "[38.5%, 91.0%]"


def test_proportion_basis_counts_successes():
    assert basis_text(ANSWER) == "9 / 13 observed · 0 missing · 0 excluded"


def test_basis_shows_missing_and_excluded():
    row = {**ANSWER, "observed": 10, "successes": 7, "missing": 2, "excluded": 1}
    assert basis_text(row) == "7 / 10 observed · 2 missing · 1 excluded"


def test_mean_basis_names_the_mean():
    assert basis_text(NDCG) == "mean of 13 observed · 0 missing · 0 excluded"


def test_proportion_basis_without_successes_counts_observed_only():
    row = _row("answer_correct", observed=0, missing=3)
    assert basis_text(row) == "0 observed · 3 missing · 0 excluded"


def test_all_missing_score_basis_reads_as_a_mean():
    row = _row("ndcg_at_6", kind="auto", observed=0, missing=13)
    assert basis_text(row) == "mean of 0 observed · 13 missing · 0 excluded"


# -- render_table --------------------------------------------------------------------


def test_table_columns_are_as_wide_as_their_widest_cell():
    assert render_table(["A", "Long header"], [["wide cell", "x"], ["y", "z"]]) == [
        "┌───────────┬─────────────┐",
        "│ A         │ Long header │",
        "├───────────┼─────────────┤",
        "│ wide cell │ x           │",
        "│ y         │ z           │",
        "└───────────┴─────────────┘",
    ]


def test_table_without_rows_is_its_header():
    assert render_table(["Metric", "Basis"], []) == [
        "┌────────┬───────┐",
        "│ Metric │ Basis │",
        "├────────┼───────┤",
        "└────────┴───────┘",
    ]


# -- cache lines ----------------------------------------------------------------------


def test_cache_lines_as_the_walkthrough_prints_them():
    assert cache_lines(CACHE) == [
        "Cache: execution 0 hit/13 miss; judgment 0 hit/65 miss",
        "Stages: retrieve 0 hit/13 miss; generate 0 hit/13 miss",
    ]


def test_cache_lines_of_a_rerun():
    cache = {"execution": {"hit": 0, "miss": 13}, "judgment": {"hit": 0, "miss": 65},
             "retrieve": {"hit": 13, "miss": 0}, "generate": {"hit": 7, "miss": 6}}
    assert cache_lines(cache)[1] == "Stages: retrieve 13 hit/0 miss; generate 7 hit/6 miss"


def _served(execution_hit, execution_miss, retrieve=(0, 0), generate=(0, 0)):
    return {"execution": {"hit": execution_hit, "miss": execution_miss}, "judgment": {"hit": 65, "miss": 0},
            "retrieve": dict(zip(("hit", "miss"), retrieve)), "generate": dict(zip(("hit", "miss"), generate))}


def test_a_run_served_entirely_by_the_execution_cache_says_no_stage_ran():
    assert cache_lines(_served(13, 0)) == [
        "Cache: execution 13 hit/0 miss; judgment 65 hit/0 miss",
        "Stages: none ran: all 13 cases were served from the execution cache",
    ]
    assert cache_lines(_served(1, 0))[1] == "Stages: none ran: the one case was served from the execution cache"
    assert cache_lines(_served(12_000, 0))[1] == (
        "Stages: none ran: all 12,000 cases were served from the execution cache"
    )


def test_a_partly_served_run_counts_the_stages_of_the_cases_that_ran():
    assert cache_lines(_served(12, 1, retrieve=(1, 0), generate=(0, 1)))[1] == (
        "Stages: retrieve 1 hit/0 miss; generate 0 hit/1 miss (12 cases served from the execution cache)"
    )
    assert cache_lines(_served(1, 12, retrieve=(0, 12), generate=(0, 12)))[1] == (
        "Stages: retrieve 0 hit/12 miss; generate 0 hit/12 miss (1 case served from the execution cache)"
    )


# -- render_run -----------------------------------------------------------------------

WALKTHROUGH_ROWS = [
    "│ answer_correct  │ 69.2%    │ [38.5%, 91.0%]  │ 9 / 13 observed · 0 missing · 0 excluded     │",
    "│ ndcg_at_6       │ 0.866    │ [0.506, 0.990]  │ mean of 13 observed · 0 missing · 0 excluded │",
    "│ citations_valid │ 100.0%   │ [75.2%, 100.0%] │ 13 / 13 observed · 0 missing · 0 excluded    │",
]


def _rule(left, middle, right, widths=(15, 8, 15, 44)):
    return left + middle.join("─" * (width + 2) for width in widths) + right


def test_run_report_is_the_walkthrough_table_then_the_cache_lines():
    lines = render_run(_report([ANSWER, HIT, RECALL, NDCG, CITATIONS]))
    assert lines == [
        f"Run {RUN_ID}",
        _rule("┌", "┬", "┐"),
        "│ Metric          │ Estimate │ 95% interval    │ Basis                                        │",
        _rule("├", "┼", "┤"),
        WALKTHROUGH_ROWS[0],
        "│ hit_rate_at_2   │ 92.3%    │ [63.9%, 99.9%]  │ 12 / 13 observed · 0 missing · 0 excluded    │",
        "│ recall_at_2     │ 92.3%    │ [63.9%, 99.9%]  │ 12 / 13 observed · 0 missing · 0 excluded    │",
        WALKTHROUGH_ROWS[1],
        WALKTHROUGH_ROWS[2],
        _rule("└", "┴", "┘"),
        "Cache: execution 0 hit/13 miss; judgment 0 hit/65 miss",
        "Stages: retrieve 0 hit/13 miss; generate 0 hit/13 miss",
    ]


def test_the_header_names_the_confidence_level():
    row = {**ANSWER, "confidence": 0.9}
    lines = render_run(_report([row], confidence=0.9))
    assert lines[2] == "│ Metric         │ Estimate │ 90% interval   │ Basis                                    │"


def test_a_criterion_with_nothing_observed_is_dashes():
    row = _row("answer_correct", observed=0, missing=13)
    lines = render_run(_report([row]))
    assert lines[4] == "│ answer_correct │ —        │ —            │ 0 observed · 13 missing · 0 excluded │"


def test_slice_rows_are_left_out_of_the_main_table():
    sliced = {**ANSWER, "slice": "metadata.topic", "slice_value": "billing"}
    lines = render_run(_report([ANSWER, sliced]))
    table = lines[1:lines.index("Cache: execution 0 hit/13 miss; judgment 0 hit/65 miss")]
    assert [line for line in table if line.startswith("│ ")][1:] == [
        "│ answer_correct │ 69.2%    │ [38.5%, 91.0%] │ 9 / 13 observed · 0 missing · 0 excluded │",
    ]


def test_a_run_without_slices_has_no_slices_section():
    lines = render_run(_report([ANSWER]))
    assert not any(line.startswith("Slices") for line in lines)
    assert lines[-1] == "Stages: retrieve 0 hit/13 miss; generate 0 hit/13 miss"


# -- render_slices --------------------------------------------------------------------

BILLING = _row("answer_correct", estimate=1.0, low=0.3976353643835254, high=1.0, observed=4, successes=4,
               slice_="metadata.topic", value="billing")
SECURITY = _row("answer_correct", observed=2, missing=1, slice_="metadata.topic", value="security", scored=False)


def test_slices_list_scored_and_too_small_values():
    assert render_slices([ANSWER, BILLING, SECURITY], 4) == [
        "Slices (exploratory; values with fewer than 4 observed are not scored)",
        _rule("┌", "┬", "┐", (23, 14, 8, 15, 39)),
        "│ Slice                   │ Metric         │ Estimate │ 95% interval    │ Basis                                   │",
        _rule("├", "┼", "┤", (23, 14, 8, 15, 39)),
        "│ metadata.topic=billing  │ answer_correct │ 100.0%   │ [39.7%, 100.0%] │ 4 / 4 observed · 0 missing · 0 excluded │",
        "│ metadata.topic=security │ answer_correct │ —        │ —               │ too small: 2 observed                   │",
        _rule("└", "┴", "┘", (23, 14, 8, 15, 39)),
    ]


def test_slices_section_names_the_min_support():
    assert render_slices([SECURITY], 10)[0] == (
        "Slices (exploratory; values with fewer than 10 observed are not scored)"
    )


def test_a_too_small_value_shows_dashes_even_if_it_had_an_estimate():
    row = {**BILLING, "scored": False}
    assert render_slices([row], 5)[4] == (
        "│ metadata.topic=billing │ answer_correct │ —        │ —            │ too small: 4 observed │"
    )


def test_slices_header_takes_the_confidence_of_the_slice_rows():
    row = {**BILLING, "confidence": 0.8}
    assert "│ 80% interval    │" in render_slices([row], 4)[2]


def test_no_slice_rows_gives_no_section():
    assert render_slices([ANSWER, NDCG], 4) == []
    assert render_slices([], 4) == []


def test_run_report_ends_with_its_slices():
    lines = render_run(_report([ANSWER, BILLING, SECURITY]))
    cache_at = lines.index("Stages: retrieve 0 hit/13 miss; generate 0 hit/13 miss")
    assert lines[cache_at + 1:] == render_slices([ANSWER, BILLING, SECURITY], 4)
    assert len(lines[cache_at + 1:]) == 7


def test_run_report_passes_its_min_support_to_the_slices():
    lines = render_run(_report([ANSWER, SECURITY], min_support=3))
    assert "Slices (exploratory; values with fewer than 3 observed are not scored)" in lines


def _judge_usage(**values):
    usage = {"provider": "local", "provider_type": "openai", "model": "m", "calls": 390, "cached": 0,
             "retries": 20, "errors": 2, "input_tokens": 1000, "output_tokens": 200, "cost_usd": None}  # fmt: skip
    return {**usage, **values}


def test_the_judges_line_counts_judgments_and_requests_apart():
    from oloproof.report import judges_line

    usage = _judge_usage(judgments=390, requests=415)
    assert judges_line([usage, _judge_usage(model="n", calls=1, judgments=1, requests=1, retries=0, errors=0)]) == [
        "Judges: 391 judgments · 416 requests · 0 cached · 2,400 tokens · 20 retries · 2 errors"
    ]
    assert judges_line([]) == []


def test_a_manifest_of_an_earlier_version_reads_its_calls_as_judgments():
    from oloproof.records._manifest import JudgeUsage
    from oloproof.report import judges_line

    old = JudgeUsage.model_validate(_judge_usage())
    assert (old.judgments, old.requests) == (None, None)
    assert "judgments" not in old.model_dump(mode="json")  # written back as it was read
    assert judges_line([old.model_dump(mode="json")]) == [
        "Judges: 390 judgments · 410 requests · 0 cached · 1,200 tokens · 20 retries · 2 errors"
    ]
    new = JudgeUsage.model_validate(_judge_usage(judgments=390, requests=415)).model_dump(mode="json")
    assert (new["calls"], new["judgments"], new["requests"]) == (390, 390, 415)


def test_the_judges_line_reads_typed_usage_as_it_reads_stored_usage():
    from oloproof.records import JudgeUsage
    from oloproof.report import judge_error_lines, judges_line

    stored = [_judge_usage(judgments=390, requests=415), _judge_usage(model="n", errors=1)]
    typed = [JudgeUsage.model_validate(entry) for entry in stored]
    assert judges_line(typed) == judges_line(stored)
    assert judges_line(typed) == ["Judges: 780 judgments · 825 requests · 0 cached · 2,400 tokens · 40 retries · 3 errors"]
    assert judge_error_lines(typed) == judge_error_lines(stored) == ["judge provider 'local': 3 judgments missing (judge errors)"]
