"""``collecting_less``: a run's collector thresholds, raised while it lasts and put back."""

from __future__ import annotations

import gc
import threading

import pytest

from oloproof.flows._collector import RUN_THRESHOLDS, collecting_less


@pytest.fixture(autouse=True)
def _thresholds():
    saved = gc.get_threshold()
    yield
    gc.set_threshold(*saved)


def test_a_run_raises_the_thresholds_freezes_its_start_and_restores_both():
    gc.set_threshold(700, 10, 10)
    frozen = gc.get_freeze_count()
    with collecting_less():
        assert gc.get_threshold() == RUN_THRESHOLDS
        assert gc.get_freeze_count() > frozen
    assert gc.get_threshold() == (700, 10, 10)
    assert gc.get_freeze_count() == 0


def test_a_threshold_set_higher_by_the_process_is_kept():
    gc.set_threshold(100_000, 5, 1000)
    with collecting_less():
        assert gc.get_threshold() == (100_000, RUN_THRESHOLDS[1], 1000)
    assert gc.get_threshold() == (100_000, 5, 1000)


def test_runs_at_once_share_the_raise_and_the_last_to_finish_restores():
    gc.set_threshold(700, 10, 10)
    inside, release = threading.Event(), threading.Event()

    def other_run():
        with collecting_less():
            inside.set()
            release.wait(30)

    thread = threading.Thread(target=other_run)
    with collecting_less():
        thread.start()
        assert inside.wait(30)
    assert gc.get_threshold() == RUN_THRESHOLDS  # the other run is still in flight
    release.set()
    thread.join(30)
    assert gc.get_threshold() == (700, 10, 10)


def test_a_failing_run_restores_the_thresholds():
    gc.set_threshold(700, 10, 10)
    with pytest.raises(RuntimeError), collecting_less():
        raise RuntimeError("boom")
    assert gc.get_threshold() == (700, 10, 10)
