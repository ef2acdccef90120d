"""Turn: lazy accessors over the request, and the local engine state kept by the tracker."""

from __future__ import annotations

import random

import pytest
from medina.engine import GameState, apply_action, legal_moves, new_game
from medina.v1 import game_pb2, match_pb2
from medina.wire.convert import events_to_proto
from medina_client import LocalStateError, Turn
from medina_client.tracker import GameTracker

from .fake_arena import config_of, request


def midgame(seed: int = 5, decisions: int = 12) -> GameState:
    s = new_game("medina-v2", 3, seed)
    rng = random.Random(seed)
    for _ in range(decisions):
        moves = legal_moves(s)
        s = apply_action(s, moves.nth(rng.randrange(len(moves))))
    return s


def test_accessors_read_the_request() -> None:
    s = midgame()
    seat = s.to_move
    turn = Turn(request(s, 42, time_left_ms=1234).request, seat, lambda: s)
    assert turn.request_id == 42
    assert (turn.to_move, turn.quota, turn.placed) == (seat, s.quota, s.placed)
    assert (turn.time_left_ms, turn.bank_ms, turn.last_reply_ms) == (1234, 60_000, 3)
    assert turn.clock.time_left_ms == 1234
    assert len(turn.cells) == turn.board.cols * turn.board.rows
    assert turn.cells[s.well] == game_pb2.CELL_WELL
    own = s.supply_of(seat)
    b = turn.supply.buildings
    assert (b.grey, b.purple, b.brown, b.orange) == own.buildings
    assert (turn.supply.walls, turn.supply.merchants) == (own.walls, own.merchants)
    assert not turn.seat_view((seat + 1) % 3).HasField("supply")  # others' stay hidden
    with pytest.raises(LookupError):
        turn.seat_view(7)
    assert [e.index for e in turn.events] == list(range(s.n_events))
    assert len(turn.legal) == len(legal_moves(s))
    assert turn.state() is s


def test_state_refuses_a_local_copy_that_is_out_of_step() -> None:
    s = midgame()
    later = midgame(decisions=13)
    turn = Turn(request(s, 1).request, s.to_move, lambda: later)
    with pytest.raises(LocalStateError, match="out of step"):
        turn.state()


def test_the_tracker_follows_overlapping_batches_lazily() -> None:
    s = midgame(seed=8, decisions=40)
    events = events_to_proto(0, s.events)
    tracker = GameTracker(config_of(s))
    for start in range(0, len(events), 7):  # overlapping batches, as updates and requests are
        tracker.feed(events[max(0, start - 3) : start + 7])
    assert tracker.received == s.n_events
    rebuilt = tracker.state
    assert (rebuilt.n_events, rebuilt.to_move, rebuilt.supply) == (s.n_events, s.to_move, s.supply)
    assert tracker.state is rebuilt  # nothing new: nothing recomputed


def test_the_tracker_reports_an_unknown_ruleset() -> None:
    tracker = GameTracker(match_pb2.MatchConfig(players=2))
    with pytest.raises(LocalStateError, match="unknown ruleset 0"):
        _ = tracker.state
