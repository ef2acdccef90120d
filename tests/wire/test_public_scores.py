"""Protocol 1.1: every observation carries every seat's public score, equal to the engine's
scoring at every decision, computed from public facts only (a hidden supply never changes
it), and the same for every viewer."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from medina.engine import CONFIGURATIONS, apply_action, legal_moves, new_game, observe, result
from medina.wire import convert
from medina.wire.shared.scores import breakdown_to_proto


@pytest.mark.parametrize(("ruleset", "players"), CONFIGURATIONS)
def test_observed_scores_are_the_engines_at_every_decision(ruleset: str, players: int) -> None:
    for seed in range(4):
        rng = random.Random(seed)
        s = new_game(ruleset, players, seed)
        while True:
            expected = result(s)
            for viewer in (*range(players), None):
                msg = convert.observation_to_proto(observe(s, viewer))
                assert len(msg.seats) == players
                for p, view in enumerate(msg.seats):
                    assert view.HasField("score")
                    assert view.score == breakdown_to_proto(expected.breakdowns[p])
                    assert view.score.total == expected.totals[p]
            if s.over:
                break
            moves = legal_moves(s)
            s = apply_action(s, moves.nth(rng.randrange(len(moves))))


def test_scores_read_no_hidden_supply() -> None:
    rng = random.Random(3)
    s = new_game("medina-v2", 4, 3)
    for _ in range(60):
        moves = legal_moves(s)
        s = apply_action(s, moves.nth(rng.randrange(len(moves))))
    before = observe(s, 0).seats
    hidden = s.copy()
    hidden.supply = [0] * len(s.supply)  # every supply emptied: not a public fact
    after = observe(hidden, 0).seats
    assert [v.score for v in after] == [v.score for v in before]
    assert any(v.score is not None and v.score.total for v in before)
    assert replace(before[1], supply=None) == before[1]  # another seat's supply stays hidden
