"""The plan's sentence on the repeats that make a gate's verdict repeat."""

from __future__ import annotations

from oloproof._cli._compare import _stable_text


def test_the_recommended_repeats_and_their_simulated_flip_rate_are_stated():
    text = _stable_text({"stable_repeats": 6, "stable_flip_rate": 0.015, "stable_verdict": "PASS",
                         "stable_from": "pilot"})  # type: ignore[typeddict-item]
    assert text == ("; for a verdict that repeats, run the candidate with 6 repeats: then 1.5% of simulated pairs of "
                    "identical runs (drawn from the pilot's samples) get different verdicts (most often PASS)")


def test_a_gate_no_repeats_can_steady_says_it_needs_cases():
    text = _stable_text({"stable_repeats": None, "stable_flip_rate": 0.12, "stable_verdict": "PASS",
                         "stable_from": "baseline"})  # type: ignore[typeddict-item]
    assert "no number of repeats up to 32 keeps the verdict: at 32, 12.0%" in text
    assert "add cases, or state a wider margin" in text


def test_without_a_simulation_nothing_is_said():
    assert _stable_text({}) == ""  # type: ignore[typeddict-item]
