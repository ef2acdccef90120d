"""Message helpers: legal actions of every kind decoded, actions encoded, events read."""

from __future__ import annotations

import random

import pytest
from medina.engine import Action, ActionKind, apply_action, legal_moves, new_game
from medina.v1 import common_pb2, game_pb2
from medina.wire.convert import action_from_proto, events_to_proto, legal_to_proto
from medina_client.messages import (
    action_of_event,
    action_to_proto,
    actions_from_legal,
    hello,
    reply,
)

K = ActionKind
P = game_pb2.LegalPlacements

EVERY_KIND = game_pb2.LegalActions(
    placements=[
        P(kind=game_pb2.ACTION_KIND_BUILDING, colour=common_pb2.PALACE_COLOUR_GREY, squares=[20]),
        P(kind=game_pb2.ACTION_KIND_BUILDING, colour=common_pb2.PALACE_COLOUR_PURPLE, squares=[21]),
        P(kind=game_pb2.ACTION_KIND_BUILDING, colour=common_pb2.PALACE_COLOUR_BROWN, squares=[22]),
        P(
            kind=game_pb2.ACTION_KIND_BUILDING,
            colour=common_pb2.PALACE_COLOUR_ORANGE,
            squares=[23, 24],
        ),
        P(kind=game_pb2.ACTION_KIND_ROOFTOP, squares=[30]),
        P(kind=game_pb2.ACTION_KIND_NEUTRAL_ROOFTOP, squares=[31]),
        P(kind=game_pb2.ACTION_KIND_BLOCKING_ROOFTOP, squares=[32]),
        P(kind=game_pb2.ACTION_KIND_STABLE, squares=[40]),
        P(kind=game_pb2.ACTION_KIND_MERCHANT, squares=[41]),
        P(kind=game_pb2.ACTION_KIND_WALL, squares=[1, 2]),
        P(kind=game_pb2.ACTION_KIND_START_MERCHANT, squares=[50]),
    ],
    tea=True,
)

EVERY_ACTION = [
    Action(K.BUILDING, 20, 0),
    Action(K.BUILDING, 21, 1),
    Action(K.BUILDING, 22, 2),
    Action(K.BUILDING, 23, 3),
    Action(K.BUILDING, 24, 3),
    Action(K.ROOFTOP, 30),
    Action(K.NEUTRAL_ROOFTOP, 31),
    Action(K.BLOCKING_ROOFTOP, 32),
    Action(K.STABLE, 40),
    Action(K.MERCHANT, 41),
    Action(K.WALL, 1),
    Action(K.WALL, 2),
    Action(K.START_MERCHANT, 50),
    Action(K.TEA),
]


def test_legal_actions_of_every_kind_are_decoded() -> None:
    assert actions_from_legal(EVERY_KIND) == EVERY_ACTION
    assert {a.kind for a in EVERY_ACTION} == set(ActionKind)


def test_no_legal_actions_decode_to_an_empty_list() -> None:
    assert actions_from_legal(game_pb2.LegalActions()) == []


def test_an_unknown_kind_is_refused() -> None:
    msg = game_pb2.LegalActions(placements=[P(kind=99, squares=[1])])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown action kind 99"):
        actions_from_legal(msg)


@pytest.mark.parametrize("action", EVERY_ACTION, ids=lambda a: f"{a.kind.name}-{a.square}")
def test_actions_reach_the_server_unchanged(action: Action) -> None:
    geometry = new_game("medina-v2", 4, 1).rules.geometry
    assert action_from_proto(action_to_proto(action), geometry) == action


@pytest.mark.parametrize(
    ("ruleset", "players"),
    [("medina-v2", 2), ("medina-v2", 3), ("medina-v2", 4), ("medina-v1", 4), ("medina-v1-2p", 2)],
)
def test_decoding_matches_the_engine_over_a_playout(ruleset: str, players: int) -> None:
    s = new_game(ruleset, players, 6)
    rng = random.Random(6)
    while not s.over:
        moves = legal_moves(s)
        assert sorted(actions_from_legal(legal_to_proto(moves)), key=repr) == sorted(
            moves.actions(), key=repr
        )
        s = apply_action(s, moves.nth(rng.randrange(len(moves))))


def test_the_history_gives_back_every_action() -> None:
    s = new_game("medina-v2", 3, 2)
    rng = random.Random(2)
    played = []
    while not s.over:
        moves = legal_moves(s)
        action = moves.nth(rng.randrange(len(moves)))
        played.append(action)
        s = apply_action(s, action)
    recorded = [a for e in events_to_proto(0, s.events) if (a := action_of_event(e)) is not None]
    assert recorded == played


def test_hello_and_reply() -> None:
    h = hello("tok", "name", "1.0", "resume", True).hello
    assert (h.protocol_version, h.token, h.bot_name, h.bot_version) == (1, "tok", "name", "1.0")
    assert (h.resume_token, h.omit_legal_actions) == ("resume", True)
    r = reply(12, Action(K.BUILDING, 40, 2)).reply
    assert (r.request_id, r.action.kind, r.action.square, r.action.colour) == (
        12,
        game_pb2.ACTION_KIND_BUILDING,
        40,
        common_pb2.PALACE_COLOUR_BROWN,
    )
    tea = reply(13, Action(K.TEA)).reply.action
    assert (tea.kind, tea.square, tea.colour) == (game_pb2.ACTION_KIND_TEA, 0, 0)
