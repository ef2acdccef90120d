"""Fuzzing observation conversion: every observation survives the wire unchanged, and a
damaged Observation message is read back or refused with a ValueError (the engine's typed
errors are ValueErrors too) — never another exception."""

from __future__ import annotations

from google.protobuf.message import DecodeError
from hypothesis import given
from hypothesis import strategies as st
from medina.engine import GameState, observe
from medina.engine.view import state_from_observation
from medina.v1 import game_pb2
from medina.wire import convert

from .strategies import FUZZ, game_states


@FUZZ
@given(game_states(), st.data())
def test_observations_round_trip(s: GameState, data: st.DataObject) -> None:
    viewer = data.draw(st.integers(-1, s.rules.players - 1))
    since = data.draw(st.integers(0, s.n_events))
    obs = observe(s, None if viewer < 0 else viewer, since=since)
    wire = convert.observation_to_proto(obs)
    assert (
        convert.observation_from_proto(game_pb2.Observation.FromString(wire.SerializeToString()))
        == obs
    )


@FUZZ
@given(game_states(), st.data())
def test_damaged_observations_are_refused_with_value_errors(
    s: GameState, data: st.DataObject
) -> None:
    viewer = data.draw(st.integers(0, s.rules.players - 1))
    raw = bytearray(convert.observation_to_proto(observe(s, viewer)).SerializeToString())
    for _ in range(data.draw(st.integers(1, 4))):
        if not raw:
            break
        at = data.draw(st.integers(0, len(raw) - 1))
        raw[at] = data.draw(st.integers(0, 255))
    if data.draw(st.booleans()):
        del raw[data.draw(st.integers(0, len(raw))) :]
    try:
        msg = game_pb2.Observation.FromString(bytes(raw))
    except DecodeError:
        return
    try:
        obs = convert.observation_from_proto(msg)
    except ValueError as exc:
        assert str(exc)
        return
    # Read back: the client-side rebuild of a state refuses or accepts it, nothing else.
    try:
        state_from_observation(obs)
    except ValueError as exc:
        assert str(exc)
