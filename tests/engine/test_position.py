"""Board pictures back into states (position.py): round trips, derived facts, errors."""

from __future__ import annotations

import random

import pytest
from medina.engine import (
    NEUTRAL,
    NOBODY,
    ActionKind,
    GameState,
    NotationError,
    Phase,
    PlayerCountError,
    SetupError,
    Supply,
    UnknownRulesetError,
    apply_action,
    from_picture,
    legal_moves,
    new_game,
    render,
    result,
)

from .support import picture, position, sq, squares_named
from .test_playouts import CONFIGS, by_kind

# --- round trips ----------------------------------------------------------------------------


def reparse(s: GameState) -> GameState:
    """``from_picture`` of ``render(s)`` with everything a picture cannot show."""
    placing = s.phase is Phase.PLACING
    return from_picture(
        render(s),
        s.rules.name,
        s.players,
        to_move=s.to_move,
        start_seat=s.start_seat,
        turn=s.turn - 1,
        quota=s.quota if placing else None,
        placed=s.placed if placing else 0,
        supplies={seat: s.supply_of(seat) for seat in range(s.players)},
        tea=s.tea,
        palace_tiles=s.palace_tiles,
        tower_tiles=s.tower_tiles,
        seed=s.seed,
    )


def palace_facts(s: GameState) -> list[tuple[int, ...]]:
    return sorted(
        (
            p.colour,
            p.buildings,
            p.stables,
            p.zone,
            p.reach,
            p.owner,
            p.roof,
            p.roof_square,
            p.towers,
        )
        for p in s.palaces
    )


@pytest.mark.parametrize(("ruleset", "players"), CONFIGS)
def test_round_trip_of_random_play(ruleset: str, players: int) -> None:
    for seed in range(3):
        s = new_game(ruleset, players, seed)
        rng = random.Random(seed)
        while True:
            t = reparse(s)
            assert render(t) == render(s)
            assert t.phase is s.phase
            assert palace_facts(t) == palace_facts(s)
            assert (t.arms, t.street, t.merchants, t.walls, t.well_bonus) == (
                s.arms, s.street, s.merchants, s.walls, s.well_bonus,
            )  # fmt: skip
            assert (t.exhausted, t.tower_merchants, t.purple_claims, t.tea_pool) == (
                s.exhausted, s.tower_merchants, s.purple_claims, s.tea_pool,
            )  # fmt: skip
            assert result(t).totals == result(s).totals
            if s.phase is not Phase.OVER and not (s.turn_colours or s.turn_roofs):
                assert legal_moves(t) == legal_moves(s)
            if s.over:
                break
            s = apply_action(s, by_kind(s, rng))


def test_round_trip_with_defaults_keeps_the_picture() -> None:
    s = new_game("medina-v2", 4, seed=12)
    rng = random.Random(3)
    for _ in range(60):
        s = apply_action(s, by_kind(s, rng))
    text = render(s)
    assert render(from_picture(text, "medina-v2", 4, to_move=s.to_move)) == text


# --- what the picture fixes and what is derived ---------------------------------------------


def test_palaces_stables_and_rooftops_are_read() -> None:
    s = position("medina-v2", 4, {"C3": "gB", "C4": "GB", "D4": "sB", "K3": "o.", "K4": "s."})
    grey, orange = s.palaces
    assert (grey.colour, grey.owner, grey.roof) == (0, 2, ActionKind.ROOFTOP)
    assert grey.roof_square == sq(s, "C4")
    assert squares_named(s, grey.stables) == {"D4"} and grey.size == 3
    assert (orange.owner, orange.roof, orange.roof_square) == (-1, 0, -1)
    assert squares_named(s, orange.stables) == {"K4"}


def test_neutral_and_blocking_letters() -> None:
    s = position("medina-v2", 2, {"C3": "GB"})  # blue is neutral with 2 players
    assert s.palaces[0].owner == NEUTRAL and s.palaces[0].roof == ActionKind.NEUTRAL_ROOFTOP
    s = position("medina-v1-2p", 2, {"C3": "GG", "K3": "GY", "H9": "MM"})
    block, score = s.palaces
    assert (block.owner, block.roof) == (1, ActionKind.BLOCKING_ROOFTOP)
    assert (score.owner, score.roof) == (0, ActionKind.ROOFTOP)


def test_default_supplies_are_full_minus_the_rooftops_on_the_board() -> None:
    s = position("medina-v2", 3, {"C3": "GR", "K3": "PR", "C8": "GG", "K8": "BG"})
    assert s.supply_of(0) == Supply((6, 6, 6, 6), 0b1100, 0, 0, 4, 8, 12)
    assert s.supply_of(1) == Supply((6, 6, 6, 6), 0b1111, 0, 0, 4, 8, 12)  # neutral charged
    assert s.supply_of(2) == Supply((6, 6, 6, 6), 0b1111, 1, 0, 4, 8, 12)


def test_default_v1_2p_supplies_apply_the_rooftop_removal() -> None:
    s = position("medina-v1-2p", 2, {"C3": "GY", "K3": "GR", "H9": "MM"})
    assert s.supply_of(0).rooftops == 0b1110 and s.supply_of(0).blocking == 0b1110
    assert s.supply_of(1).blocking == 0b1110  # green's grey rooftop left the game
    assert not s.exhausted


def test_exhaustion_is_derived() -> None:
    s = position("medina-v2", 2, {"C3": "OR", "K3": "OY"})
    assert s.exhausted == 0b1000
    assert s.supply_of(0).buildings == (8, 8, 8, 0)


def test_arms_contacts_and_tower_tiles_are_derived() -> None:
    marks = {"B1": "##", "C1": "##", "D1": "##", "R2": "##", "C2": "GY", "Q3": "bR", "Q2": "BR"}
    s = position("medina-v2", 4, marks)
    assert squares_named(s, s.arms[0]) == {"B1", "C1", "D1"}
    assert squares_named(s, s.arms[2]) == {"R2"}
    assert s.tower_tiles == [1, NOBODY, 0, NOBODY]
    assert s.tower_merchants == [0, 2, 0, 0]


def test_tower_tile_holder_defaults_to_the_latest_contact_and_can_be_given() -> None:
    marks = {"B1": "##", "C1": "##", "D1": "##", "E1": "##", "C2": "GY", "E2": "PB"}
    s = position("medina-v2", 4, marks)
    assert s.tower_tiles[0] == 2  # E2 comes later in square order than C2
    assert position("medina-v2", 4, marks, tower_tiles=[1, -1, -1, -1]).tower_tiles[0] == 1
    assert position("medina-v2", 4, marks, tower_tiles=[2, -1, -1, -1]).tower_tiles[0] == 2
    with pytest.raises(SetupError, match="tower tile 1"):
        position("medina-v2", 4, marks, tower_tiles=[0, -1, -1, -1])
    with pytest.raises(SetupError, match="tower tile 2"):
        position("medina-v2", 4, marks, tower_tiles=[1, 3, -1, -1])


def test_palace_tiles_default_and_given() -> None:
    marks = {"C3": "GR", "C4": "gR", "K3": "GY", "K4": "gY", "K8": "g.", "K9": "g."}
    s = position("medina-v2", 4, marks)
    assert s.palace_tiles == [0, NOBODY, NOBODY, NOBODY]  # equal sizes: the lower square
    s = position("medina-v2", 4, marks, palace_tiles=[1, -1, -1, -1])
    assert s.palace_tiles[0] == 1
    nxt = apply_action(s, legal_moves(s).nth(0))
    assert nxt.palace_tiles[0] == 1  # the given holder keeps it on the next placement
    with pytest.raises(SetupError, match="grey palace tile"):
        position("medina-v2", 4, marks, palace_tiles=[2, -1, -1, -1])
    with pytest.raises(SetupError, match="purple palace tile"):
        position("medina-v2", 4, marks, palace_tiles=[0, 0, -1, -1])


def test_tea_defaults_and_pool() -> None:
    s = position("medina-v2", 4, {"C3": "PR", "K3": "PY"})
    assert s.purple_claims == 2 and s.tea == [0, 0, 0, 0] and s.tea_pool == 1
    s = position("medina-v2", 4, {"C3": "PR", "K3": "PY"}, tea=[2, 1, 0, 0])
    assert s.tea == [2, 1, 0, 0]
    with pytest.raises(SetupError, match="tea"):
        position("medina-v2", 4, {"C3": "PR"}, tea=[4, 0, 0, 0])
    with pytest.raises(SetupError, match="tea"):
        position("medina-v1", 4, {"H7": "MM"}, tea=[1, 0, 0, 0])


def test_turn_quota_and_phase() -> None:
    s = position("medina-v2", 4)
    assert (s.phase, s.quota, s.turn, s.placed) == (Phase.PLACING, 2, 4, 0)
    assert position("medina-v2", 4, turn=0).quota == 1
    assert position("medina-v1-2p", 2, {"H7": "MM"}).quota == 3
    s = position("medina-v2", 4, to_move=3, placed=1)
    assert (s.to_move, s.placed) == (3, 1)
    s = position("medina-v1", 3, start_seat=2)
    assert s.phase is Phase.START_MERCHANT and s.to_move == 2
    assert len(legal_moves(s)) == 126


def test_a_finished_board_is_over() -> None:
    none = Supply((0, 0, 0, 0), 0, 0, 0, 0, 0, 0)
    s = position("medina-v2", 2, supplies={0: none, 1: none})
    assert s.over and len(legal_moves(s)) == 0


# --- errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ruleset", "players", "marks", "words"),
    [
        ("medina-v2", 4, {"F6": "xx"}, "unknown token 'xx' at F6"),
        ("medina-v2", 4, {"F6": "g"}, "unknown token 'g' at F6"),
        ("medina-v2", 4, {"F6": "gX"}, "unknown token 'gX' at F6"),
        ("medina-v2", 4, {"F6": "S."}, "unknown token 'S.' at F6"),
        ("medina-v2", 4, {"F6": "##"}, "unknown token '##' at F6"),
        ("medina-v2", 4, {"A1": "T2"}, "'T2' at A1: this corner holds T1"),
        ("medina-v2", 4, {"A5": ".."}, "'..' at A5: a wall space holds"),
        ("medina-v2", 4, {"A5": "##"}, "wall at A5 is not connected to a tower"),
        ("medina-v2", 4, {f"{c}1": "##" for c in "BCDEFGHIJKLMNOPQ"}, "top side is walled"),
        ("medina-v2", 4, {f"A{r}": "##" for r in range(2, 13)}, "left side is walled"),
        ("medina-v2", 4, {"C3": "@@"}, "needs one well '@@', found 2"),
        ("medina-v2", 4, {"B7": "@@", "O10": ".."}, "well at B7 must be in the inner city"),
        ("medina-v1", 4, {"C3": "@@", "H7": "MM"}, "has no well, but '@@' is at C3"),
        ("medina-v2", 4, {"C3": "mm"}, "no current street"),
        ("medina-v2", 4, {"C3": "MM", "C4": "mm"}, "merchant at C4 breaks it"),
        ("medina-v2", 4, {"C3": "s."}, "stable at C3 is next to no building"),
        ("medina-v2", 4, {"C3": "g.", "C5": "b.", "C4": "s."}, "stable at C4 borders two"),
        ("medina-v2", 4, {"C3": "gR", "C4": "GY"}, "mixes rooftop letters RY"),
        ("medina-v2", 4, {"C3": "GR", "C4": "sY"}, "mixes rooftop letters RY"),
        ("medina-v2", 4, {"C3": "gR", "C4": "gR"}, "exactly one of its buildings"),
        ("medina-v2", 4, {"C3": "GR", "C4": "GR"}, "found 2"),
        ("medina-v2", 4, {"C3": "G."}, "a capital marks the rooftop"),
        ("medina-v2", 2, {"C3": "GG"}, "green rooftop, a colour not in play"),
        ("medina-v1-2p", 2, {"C3": "GB", "K3": "GB", "H7": "MM"}, "seat 1 has two grey"),
        ("medina-v2", 4, {"C3": "g.", "D4": "b."}, "grey palace at C3 touches the brown"),
        ("medina-v2", 4, {"C3": "g.", "C4": "s.", "D5": "b."}, "touches the brown palace"),
        ("medina-v2", 4, {"C3": "g.", "E3": "g."} | {"D4": "g."}, "touches"),
        ("medina-v2", 4, {"N9": "g."}, "N9 of the grey palace at N9 is next to the well"),
        ("medina-v2", 3, {"C3": "GG", "K3": "GG", "C8": "GG", "K8": "GG"}, "more neutral"),
        ("medina-v1", 4, {"C3": "g."}, "needs a merchant"),
    ],
)
def test_bad_pictures_raise_notation_error(
    ruleset: str, players: int, marks: dict[str, str], words: str
) -> None:
    with pytest.raises(NotationError, match=words.replace("(", r"\(")):
        position(ruleset, players, marks)


def test_bad_shapes_raise_notation_error() -> None:
    with pytest.raises(NotationError, match="row 2 has 17 squares"):
        from_picture(picture("medina-v2", 4).replace(" 2 ++ ..", " 2 ++", 1), "medina-v2", 4)
    with pytest.raises(NotationError, match="row 1 has 16 squares, expected 18"):
        from_picture(picture("medina-v2", 2), "medina-v2", 4)  # the 2-player board


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"ruleset": "medina-v9"}, UnknownRulesetError, "'medina-v9'"),
        ({"players": 5}, PlayerCountError, "5 players"),
        ({"to_move": 4}, SetupError, "seat to move 4"),
        ({"start_seat": -1}, SetupError, "start seat -1"),
        ({"placed": 2}, SetupError, "placed 2"),
        ({"quota": 3, "placed": 3}, SetupError, "placed 3"),
        ({"supplies": {7: Supply((0, 0, 0, 0), 0, 0, 0, 0, 0, 0)}}, SetupError, "seat 7"),
        ({"supplies": {0: Supply((-1, 0, 0, 0), 0, 0, 0, 0, 0, 0)}}, SetupError, "negative"),
        ({"supplies": {0: Supply((5, 5, 5, 5), 0b1111, 0, 0, 3, 6, 9)}}, SetupError, "grey"),
        ({"palace_tiles": [0, 0]}, SetupError, "one holder per palace colour"),
        ({"tower_tiles": [0]}, SetupError, "one holder per tower"),
    ],
)
def test_bad_arguments_raise_typed_errors(
    kwargs: dict[str, object], error: type[Exception], words: str
) -> None:
    args: dict[str, object] = {"ruleset": "medina-v2", "players": 4} | kwargs
    text = picture("medina-v2", 4, {"C3": "GR"})
    with pytest.raises(error, match=words):
        from_picture(text, **args)  # type: ignore[arg-type]


def test_a_seat_that_would_pass_is_not_to_move() -> None:
    none = Supply((0, 0, 0, 0), 0, 0, 0, 0, 0, 0)
    with pytest.raises(SetupError, match="seat 1 has no legal placement"):
        position("medina-v2", 4, to_move=1, supplies={1: none})


def test_the_header_line_is_optional() -> None:
    text = picture("medina-v2", 4, {"C3": "GR"})
    assert render(from_picture(text.split("\n", 1)[1], "medina-v2", 4)) == text
