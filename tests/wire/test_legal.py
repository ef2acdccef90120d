"""wire.legal: legal actions built as wire bytes equal the plain messages."""

from __future__ import annotations

import random

import pytest
from medina.engine import (
    CONFIGURATIONS,
    ActionKind,
    LegalMoves,
    apply_action,
    legal_moves,
    new_game,
    squares,
)
from medina.v1 import game_pb2
from medina.wire.convert import actions_from_legal, legal_to_proto

FIELDS = ("rooftop", "neutral", "blocking", "stable", "merchant", "wall", "start_merchant")


def plain(moves: LegalMoves) -> game_pb2.LegalActions:
    groups = [
        game_pb2.LegalPlacements(kind=1, colour=c + 1, squares=squares(m))  # type: ignore[arg-type]
        for c, m in enumerate(moves.buildings)
        if m
    ]
    for kind, name in zip(range(2, 9), FIELDS, strict=True):
        mask = getattr(moves, name)
        if mask:
            groups.append(game_pb2.LegalPlacements(kind=kind, squares=squares(mask)))  # type: ignore[arg-type]
    return game_pb2.LegalActions(placements=groups, tea=moves.tea)


@pytest.mark.parametrize(("ruleset", "players"), CONFIGURATIONS)
def test_legal_actions_equal_the_plain_message(ruleset: str, players: int) -> None:
    rng = random.Random(2)
    s = new_game(ruleset, players, 2)
    while not s.over:
        moves = legal_moves(s)
        msg = legal_to_proto(moves)
        assert msg == plain(moves)
        assert actions_from_legal(msg) == moves.actions()
        s = apply_action(s, moves.nth(rng.randrange(len(moves))))
    assert legal_to_proto(legal_moves(s)) == game_pb2.LegalActions()


def test_squares_beyond_one_varint_byte_and_tea() -> None:
    moves = LegalMoves(buildings=(1 << 233 | 1 << 127 | 1 << 128, 0, 0, 1), wall=1 << 17, tea=True)
    msg = legal_to_proto(moves)
    assert list(msg.placements[0].squares) == [127, 128, 233]
    assert msg == plain(moves) and msg.tea


@pytest.mark.parametrize(
    ("group", "fragment"),
    [
        (game_pb2.LegalPlacements(kind=42, squares=[3]), "unknown action kind 42"),  # type: ignore[arg-type]
        (game_pb2.LegalPlacements(kind=ActionKind.BUILDING, squares=[3]), "colour 0"),  # type: ignore[arg-type]
    ],
)
def test_malformed_legal_actions_are_value_errors(
    group: game_pb2.LegalPlacements, fragment: str
) -> None:
    with pytest.raises(ValueError, match=fragment):
        actions_from_legal(game_pb2.LegalActions(placements=[group]))
