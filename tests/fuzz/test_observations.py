"""Fuzzing observation conversion: every observation the server can send encodes exactly as
the plain reference encoder does and survives the bytes, and a bot's tracker fed damaged
history entries refuses them with a LocalStateError — never another exception."""

from __future__ import annotations

from google.protobuf.message import DecodeError
from hypothesis import given
from hypothesis import strategies as st
from medina.engine import GameState, observe
from medina.referee.config import MatchSettings
from medina.v1 import game_pb2
from medina.wire import convert
from medina.wire.settings import settings_to_proto
from medina_client.errors import LocalStateError
from medina_client.tracker import GameTracker
from wire.test_observation import plain

from .strategies import FUZZ, game_states


@FUZZ
@given(game_states(), st.data())
def test_observations_encode_like_the_reference(s: GameState, data: st.DataObject) -> None:
    viewer = data.draw(st.integers(-1, s.rules.players - 1))
    since = data.draw(st.integers(0, s.n_events))
    obs = observe(s, None if viewer < 0 else viewer, since=since)
    wire = convert.observation_to_proto(obs)
    assert wire == plain(obs)
    assert game_pb2.Observation.FromString(wire.SerializeToString()) == wire


@FUZZ
@given(game_states(), st.data())
def test_damaged_history_is_refused_by_the_tracker(s: GameState, data: st.DataObject) -> None:
    settings = MatchSettings(s.rules.name, s.rules.players, s.seed, start_seat=s.start_seat)
    update = convert.update_to_proto(0, list(s.events))
    raw = bytearray(update.SerializeToString())
    for _ in range(data.draw(st.integers(1, 4))):
        if not raw:
            break
        at = data.draw(st.integers(0, len(raw) - 1))
        raw[at] = data.draw(st.integers(0, 255))
    try:
        damaged = game_pb2.Update.FromString(bytes(raw))
    except DecodeError:
        return
    tracker = GameTracker(settings_to_proto(settings))
    tracker.feed(list(damaged.events))
    try:
        tracker.state  # noqa: B018 - reading it applies the history
    except LocalStateError as exc:
        assert str(exc)
