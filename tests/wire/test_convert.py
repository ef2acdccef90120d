"""wire.convert: engine data <-> protobuf round trips and malformed actions."""

from __future__ import annotations

import random

import pytest
from medina.engine import (
    CONFIGURATIONS,
    Action,
    ActionKind,
    GameState,
    apply_action,
    legal_moves,
    new_game,
)
from medina.engine.geometry import geometry
from medina.referee.config import MatchSettings, Policies, TimeControl, TimeoutPolicy
from medina.referee.errors import ConfigError
from medina.v1 import common_pb2, game_pb2, match_pb2
from medina.wire import convert


def playout(ruleset: str, players: int, seed: int, steps: int = 10_000) -> list[GameState]:
    rng = random.Random(seed)
    s = new_game(ruleset, players, seed)
    states = [s]
    while not s.over and len(states) < steps:
        moves = legal_moves(s)
        s = apply_action(s, moves.nth(rng.randrange(len(moves))))
        states.append(s)
    return states


@pytest.mark.parametrize(("ruleset", "players"), CONFIGURATIONS)
def test_legal_actions_round_trip(ruleset: str, players: int) -> None:
    for s in playout(ruleset, players, 5)[::5]:
        moves = legal_moves(s)
        assert convert.actions_from_legal(convert.legal_to_proto(moves)) == moves.actions()


def test_events_round_trip_and_name_their_action() -> None:
    s = playout("medina-v2", 3, 8)[-1]
    protos = convert.events_to_proto(0, s.events)
    assert [p.index for p in protos] == list(range(len(protos)))
    assert [convert.event_from_proto(p) for p in protos] == s.events
    placed = [p for p in protos if p.WhichOneof("event") == "placed"]
    assert all(convert.action_of_event(p) is not None for p in placed)


@pytest.mark.parametrize(
    ("message", "fragment"),
    [
        (game_pb2.Action(), "kind is not set"),
        (game_pb2.Action(kind=42, square=20), "42 is not a known action kind"),  # type: ignore[arg-type]
        (game_pb2.Action(kind=game_pb2.ACTION_KIND_WALL, square=234), "off the board"),
        (game_pb2.Action(kind=game_pb2.ACTION_KIND_WALL, square=-1), "off the board"),
        (game_pb2.Action(kind=game_pb2.ACTION_KIND_BUILDING, square=20), "colour is missing"),
        (
            game_pb2.Action(kind=game_pb2.ACTION_KIND_BUILDING, square=20, colour=9),  # type: ignore[arg-type]
            "9 is not a palace colour",
        ),
    ],
)
def test_malformed_actions_are_typed_errors(message: game_pb2.Action, fragment: str) -> None:
    with pytest.raises(convert.MalformedActionError, match=fragment):
        convert.action_from_proto(message, geometry(18, 13))


def test_actions_round_trip() -> None:
    g = geometry(18, 13)
    for action in (
        Action(ActionKind.BUILDING, 20, 3),
        Action(ActionKind.ROOFTOP, 40),
        Action(ActionKind.WALL, 1),
        Action(ActionKind.TEA),
    ):
        assert convert.action_from_proto(convert.action_to_proto(action), g) == action


def test_settings_round_trip_and_defaults() -> None:
    settings = MatchSettings(
        "medina-v1-2p",
        2,
        2**63,
        start_seat=1,
        time=TimeControl(1000, 2000, 30, 400, 50),
        policies=Policies(TimeoutPolicy.FORFEIT, 2, 1, 700),
        seat_names=("a", "b"),
    )
    assert convert.settings_from_proto(convert.settings_to_proto(settings)) == settings
    bare = convert.settings_from_proto(
        match_pb2.MatchConfig(ruleset=common_pb2.RULESET_MEDINA_V2, players=3)
    )
    assert bare.time == TimeControl() and bare.policies == Policies()


@pytest.mark.parametrize(
    ("config", "fragment"),
    [
        (match_pb2.MatchConfig(players=4), "ruleset 0 is not a known ruleset"),
        (match_pb2.MatchConfig(ruleset=common_pb2.RULESET_MEDINA_V1, players=2), "2 players"),
        (
            match_pb2.MatchConfig(ruleset=common_pb2.RULESET_MEDINA_V2, players=4, start_seat=4),
            "start_seat 4",
        ),
        (
            match_pb2.MatchConfig(
                ruleset=common_pb2.RULESET_MEDINA_V2,
                players=2,
                policies=match_pb2.Policies(on_timeout=7),  # type: ignore[arg-type]
            ),
            "on_timeout",
        ),
    ],
)
def test_bad_configs_name_the_field(config: match_pb2.MatchConfig, fragment: str) -> None:
    with pytest.raises(ConfigError, match=fragment):
        convert.settings_from_proto(config)


def test_malformed_action_errors_name_the_enum_values_json_authors_write() -> None:
    with pytest.raises(convert.MalformedActionError) as kind:
        convert.action_from_proto(game_pb2.Action(kind=77), geometry(18, 13))  # type: ignore[arg-type]
    assert "ACTION_KIND_WALL" in str(kind.value) and "1.." not in str(kind.value)
    with pytest.raises(convert.MalformedActionError) as colour:
        convert.action_from_proto(
            game_pb2.Action(kind=game_pb2.ACTION_KIND_BUILDING, square=20), geometry(18, 13)
        )
    assert "building colour is missing (expected one of PALACE_COLOUR_GREY" in str(colour.value)
