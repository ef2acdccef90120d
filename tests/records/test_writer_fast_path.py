"""The decision-line fast path writes exactly what the generic protobuf-JSON printer writes."""

from __future__ import annotations

import random

from medina.engine import apply_action as apply
from medina.engine import legal_moves, new_game
from medina.records.writer import decision_line, entry_line
from medina.referee.record import DecisionEntry, DecisionSource, ErrorCode, Rejection
from medina.wire.records import decision_entry


def test_every_decision_of_games_in_each_ruleset_matches_the_generic_line() -> None:
    rng = random.Random(5)
    checked = 0
    for ruleset, players in (("medina-v2", 4), ("medina-v1", 3), ("medina-v1-2p", 2)):
        s = new_game(ruleset, players, 9)
        while not s.over:
            moves = legal_moves(s)
            action = moves.nth(rng.randrange(len(moves)))
            entry = DecisionEntry(
                index=s.decisions,
                seat=s.to_move,
                request_id=rng.choice([0, s.decisions + 1]),
                action=action,
                time_ms=rng.choice([0, 1, 250, 99_999]),
                rejections=(),
                source=rng.choice(list(DecisionSource)),
            )
            assert decision_line(entry) == entry_line(decision_entry(entry))
            s = apply(s, action)
            checked += 1
    assert checked > 100


def test_a_decision_with_rejections_takes_the_generic_path() -> None:
    s = new_game("medina-v2", 4, 1)
    action = legal_moves(s).nth(0)
    entry = DecisionEntry(
        index=0,
        seat=0,
        request_id=1,
        action=action,
        time_ms=3,
        rejections=(Rejection(action, ErrorCode.ILLEGAL_ACTION, "r", "m"),),
        source=DecisionSource.BOT,
    )
    assert decision_line(entry) == entry_line(decision_entry(entry))
