"""Fuzzing action validation: any Action message, in any state, is either malformed
(MalformedActionError), illegal (IllegalActionError naming a rule) or legal and playable.
Arbitrary bytes are PlayRequests or DecodeErrors. Nothing else escapes."""

from __future__ import annotations

from google.protobuf.message import DecodeError
from hypothesis import given
from hypothesis import strategies as st
from medina.engine import (
    GameState,
    IllegalActionError,
    apply_action,
    is_legal,
    new_game,
)
from medina.engine.turn import explain
from medina.v1 import arena_pb2, game_pb2
from medina.wire import convert

from .strategies import FUZZ, game_states, int32s


def judge(s: GameState, msg: game_pb2.Action) -> str:
    """What the referee would say: "malformed", "illegal:<rule>" or "legal"."""
    try:
        action = convert.action_from_proto(msg, s.rules.geometry)
    except convert.MalformedActionError as exc:
        assert str(exc)
        return "malformed"
    if is_legal(s, action):
        after = apply_action(s, action)
        assert after.decisions == s.decisions + 1
        return "legal"
    error = explain(s, action)
    assert isinstance(error, IllegalActionError) and error.rule and str(error)
    try:
        apply_action(s, action)
    except IllegalActionError as exc:
        assert exc.rule == error.rule
    else:
        raise AssertionError(f"{action} is not legal but was applied")
    return f"illegal:{error.rule}"


@FUZZ
@given(game_states(), int32s, int32s, int32s)
def test_any_action_is_malformed_illegal_or_legal(
    s: GameState, kind: int, square: int, colour: int
) -> None:
    msg = game_pb2.Action(kind=kind, square=square, colour=colour)  # type: ignore[arg-type]
    verdict = judge(s, msg)
    if s.over:
        assert verdict != "legal"


@FUZZ
@given(game_states(), st.data())
def test_legal_squares_with_any_colour_or_kind_nearby(s: GameState, data: st.DataObject) -> None:
    # Near-misses: a real square with a kind or colour that may not fit it.
    square = data.draw(st.integers(0, s.rules.geometry.size - 1))
    kind = data.draw(st.integers(0, 10))
    colour = data.draw(st.integers(0, 5))
    judge(s, game_pb2.Action(kind=kind, square=square, colour=colour))  # type: ignore[arg-type]


@FUZZ
@given(st.binary(max_size=200))
def test_arbitrary_bytes_are_a_play_request_or_a_decode_error(data: bytes) -> None:
    try:
        message = arena_pb2.PlayRequest.FromString(data)
    except DecodeError:
        return
    if message.HasField("reply"):
        judge(new_game("medina-v2", 3, 1), message.reply.action)
