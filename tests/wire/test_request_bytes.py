"""The decision requests and updates a seat writes as wire bytes are the messages the schema
describes: they parse to exactly what the protobuf API builds field by field, presence
included."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest
from medina.engine import (
    CONFIGURATIONS,
    GameState,
    LegalMoves,
    apply_action,
    legal_moves,
    new_game,
    observe,
)
from medina.referee.seat import ClockView, DecisionRequest
from medina.v1 import arena_pb2, game_pb2
from medina.wire import convert
from medina.wire.play import request_bytes, update

CLOCKS = [
    ClockView(100, 0, None, 0, has_bank=False),  # no bank: bank_left_ms absent
    ClockView(100, 0, None, 0, has_bank=True),  # an empty bank: bank_left_ms present, 0
    ClockView(0, 0, 0, 0, has_bank=False),  # everything zero but present: still sent
    ClockView(0, 0, None, 0, has_bank=False),  # an all-default clock is present too
    ClockView(250, 60_000, 17, 2, has_bank=True, strikes_left=1),
    ClockView(2**31, 2**32 - 1, 2**32 - 1, 300, has_bank=True, strikes_left=2**32 - 1),
]


def reference(request: DecisionRequest, with_legal: bool) -> arena_pb2.PlayResponse:
    """The request built with the protobuf API."""
    clock = arena_pb2.Clock(
        time_left_ms=request.clock.time_left_ms,
        bank_ms=request.clock.bank_ms,
        strikes=request.clock.strikes,
        strikes_left=request.clock.strikes_left,
    )
    if request.clock.has_bank:
        clock.bank_left_ms = request.clock.bank_ms
    if request.clock.last_reply_ms is not None:
        clock.last_reply_ms = request.clock.last_reply_ms
    msg = arena_pb2.DecisionRequest(
        request_id=request.request_id,
        observation=convert.observation_to_proto(request.observation),
        clock=clock,
    )
    if with_legal:
        msg.legal.CopyFrom(convert.legal_to_proto(request.legal))
    return arena_pb2.PlayResponse(request=msg)


def random_game(ruleset: str, players: int, seed: int) -> Iterator[tuple[GameState, LegalMoves]]:
    """Each decision of a seeded game of uniformly random legal moves: its state and moves."""
    rng = random.Random(seed)
    s = new_game(ruleset, players, seed)
    while not s.over:
        moves = legal_moves(s)
        yield s, moves
        s = apply_action(s, moves.nth(rng.randrange(len(moves))))


@pytest.mark.parametrize(("ruleset", "players"), CONFIGURATIONS)
def test_request_bytes_parse_to_the_reference_message(ruleset: str, players: int) -> None:
    for rid, (s, moves) in enumerate(random_game(ruleset, players, 7), start=1):
        if rid % 5:
            continue
        request = DecisionRequest(
            rid * 1009,  # ids beyond one varint byte too
            s.to_move,
            observe(s, s.to_move, since=max(0, s.n_events - 9)),
            moves,
            CLOCKS[rid % len(CLOCKS)],
        )
        for with_legal in (True, False):
            wire = arena_pb2.PlayResponse.FromString(request_bytes(request, with_legal=with_legal))
            assert wire == reference(request, with_legal)
            assert wire.request.HasField("clock")
            assert wire.request.HasField("legal") is with_legal


@pytest.mark.parametrize(("ruleset", "players"), CONFIGURATIONS)
def test_update_bytes_parse_to_the_reference_message(ruleset: str, players: int) -> None:
    first = updates = 0
    for s, _ in random_game(ruleset, players, 11):
        if s.placed == 0 and s.n_events > first:  # a turn ended: the referee sends updates
            events = s.events_since(first)
            got = arena_pb2.PlayResponse.FromString(update(first, events))
            want = arena_pb2.PlayResponse(
                update=game_pb2.Update(events=convert.events_to_proto(first, events))
            )
            assert got == want
            assert got.WhichOneof("message") == "update"
            first = s.n_events
            updates += 1
    assert updates > 10
    # an update without events is still an update (the oneof is set)
    assert arena_pb2.PlayResponse.FromString(update(first, [])).WhichOneof("message") == "update"
