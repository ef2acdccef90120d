"""The bench's in-process sections run and count what they say (their numbers are printed by
``make bench``, never asserted here)."""

from __future__ import annotations

import gc
import random
import weakref

import pytest
from medina.engine import apply_action, legal_moves, new_game
from medina.rpc.common.admission import AdmissionLimits

from bench import QUICK_ENV, capacity, decision_path, pauses


def game_length(seed: int) -> int:
    """Decisions in the seeded random 4-player medina-v2 game the section plays for ``seed``."""
    rng = random.Random(seed)
    s = new_game("medina-v2", 4, seed)
    n = 0
    while not s.over:
        moves = legal_moves(s)
        s = apply_action(s, moves.nth(rng.randrange(len(moves))))
        n += 1
    return n


def test_the_decision_section_times_every_step_of_every_decision() -> None:
    decisions, spent = decision_path.one_pass(500, 3)
    assert decisions == sum(game_length(500 + i) for i in range(3))
    assert set(spent) == set(decision_path.STEPS)
    assert all(ns > 0 for ns in spent.values())


def test_the_decision_section_prints_its_table(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(QUICK_ENV, "1")  # 16 games a pass
    decision_path.main()
    out = capsys.readouterr().out
    for step in decision_path.STEPS:
        assert step in out
    assert "the referee path, in all" in out


class _Cyclic:
    def __init__(self) -> None:
        self.me = self


def test_the_bots_process_collects_nothing_while_a_window_is_measured() -> None:
    was_on = gc.isenabled()
    gc.enable()
    try:
        with pauses.no_collection():
            assert not gc.isenabled()
            ref = weakref.ref(_Cyclic())
            garbage = [_Cyclic() for _ in range(5 * gc.get_threshold()[0])]
            del garbage  # enough new cycles to start a collection, were the collector on
            assert ref() is not None
        assert gc.isenabled() and gc.get_freeze_count() == 0
        gc.collect()
        assert ref() is None

        gc.disable()  # a process that had it off keeps it off
        with pauses.no_collection():
            pass
        assert not gc.isenabled()
    finally:
        gc.unfreeze()
        if was_on:
            gc.enable()
        else:
            gc.disable()


def test_a_capacity_load_is_measured_once_the_start_queue_could_have_started_it() -> None:
    # The ramp is serve's own default start burst: a different default moves it too.
    assert capacity.RAMP_PER_S == AdmissionLimits().start_burst == 16
    assert capacity.warmup_s(256) == 16.0
    assert capacity.warmup_s(128) == 8.0
    assert capacity.warmup_s(1) == capacity.warmup_s(16) == capacity.WARMUP_S
