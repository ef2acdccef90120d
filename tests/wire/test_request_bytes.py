"""The decision requests and updates a seat writes as wire bytes are the messages the schema
describes: they parse to exactly what the protobuf API builds field by field, presence
included."""

from __future__ import annotations

import random

import pytest
from medina.engine import CONFIGURATIONS, apply_action, legal_moves, new_game, observe
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


@pytest.mark.parametrize(("ruleset", "players"), CONFIGURATIONS)
def test_request_bytes_parse_to_the_reference_message(ruleset: str, players: int) -> None:
    rng = random.Random(7)
    s = new_game(ruleset, players, 7)
    rid = 1
    while not s.over:
        moves = legal_moves(s)
        if rid % 5 == 0:
            request = DecisionRequest(
                rid * 1009,  # ids beyond one varint byte too
                s.to_move,
                observe(s, s.to_move, since=max(0, s.n_events - 9)),
                moves,
                CLOCKS[rid % len(CLOCKS)],
            )
            for with_legal in (True, False):
                wire = arena_pb2.PlayResponse.FromString(
                    request_bytes(request, with_legal=with_legal)
                )
                assert wire == reference(request, with_legal)
                assert wire.request.HasField("clock")
                assert wire.request.HasField("legal") is with_legal
        s = apply_action(s, moves.nth(rng.randrange(len(moves))))
        rid += 1


@pytest.mark.parametrize(("ruleset", "players"), CONFIGURATIONS)
def test_update_bytes_parse_to_the_reference_message(ruleset: str, players: int) -> None:
    rng = random.Random(11)
    s = new_game(ruleset, players, 11)
    first = 0
    while not s.over:
        s = apply_action(s, legal_moves(s).nth(rng.randrange(len(legal_moves(s)))))
        if s.placed == 0 or s.over:  # a turn's end, when the referee sends updates
            events = s.events_since(first)
            got = arena_pb2.PlayResponse.FromString(update(first, events))
            want = arena_pb2.PlayResponse(
                update=game_pb2.Update(events=convert.events_to_proto(first, events))
            )
            assert got == want
            assert got.WhichOneof("message") == "update"
            first = s.n_events
    # an update without events is still an update (the oneof is set)
    assert arena_pb2.PlayResponse.FromString(update(first, [])).WhichOneof("message") == "update"
