"""Legal actions (movegen.py): the LegalMoves API and golden counts for fixed positions."""

from __future__ import annotations

import pytest
from medina.engine import (
    ActionKind,
    Supply,
    from_picture,
    is_legal,
    legal_actions,
    legal_moves,
    new_game,
)

from . import reference as ref
from .support import act, action, squares_named
from .test_scoring import SCORING_EXAMPLE


@pytest.mark.parametrize(
    ("ruleset", "players", "count"),
    [
        # medina-v2 seed 1: well H4 and start merchant D9 (2 players), else well F4 and
        # merchant F8. Each colour may start a palace on every city square but the merchant,
        # the well and its ring: 140 - 10 = 130 or 176 - 10 = 166; the lone merchant has 4
        # free neighbours; each tower has 2 wall spaces next to it.
        ("medina-v2", 2, 4 * 130 + 4 + 8),
        ("medina-v2", 3, 4 * 166 + 4 + 8),
        ("medina-v2", 4, 4 * 166 + 4 + 8),
        # 1st edition: the start merchant on any of the 14 x 9 inner squares.
        ("medina-v1", 3, 126),
        ("medina-v1", 4, 126),
        ("medina-v1-2p", 2, 126),
    ],
)
def test_golden_opening_counts(ruleset: str, players: int, count: int) -> None:
    s = new_game(ruleset, players, seed=1)
    assert len(legal_moves(s)) == count == len(ref.legal_actions(s))


@pytest.mark.parametrize(("ruleset", "players"), [("medina-v1", 4), ("medina-v1-2p", 2)])
def test_golden_first_edition_first_turn(ruleset: str, players: int) -> None:
    s = act(new_game(ruleset, players, seed=1), "start H7")
    # 175 free city squares per colour, the merchant's 4 neighbours, 8 wall spaces.
    assert len(legal_moves(s)) == 4 * 175 + 4 + 8 == 712


def test_golden_scoring_example_count() -> None:
    s = from_picture(SCORING_EXAMPLE, "medina-v2", 4)
    m = legal_moves(s)
    # 148 empty squares, 33 of them touch a palace or are in the well ring: 115 per colour
    # (every palace is claimed, so each colour starts a new palace). Stables: grey C3,
    # purple C5 D4 E4 F4 G5 G6 F8, orange B11 C11, brown L2 O3 L4 N4. Merchants beside the
    # lone current merchant G7. Walls at the end of each of the 8 arms.
    assert [b.bit_count() for b in m.buildings] == [115] * 4
    assert squares_named(s, m.stable) == {
        "C3", "C5", "D4", "E4", "F4", "G5", "G6", "F8", "B11", "C11", "L2", "O3", "L4", "N4",
    }  # fmt: skip
    assert squares_named(s, m.merchant) == {"G6", "G8", "H7"}
    assert squares_named(s, m.wall) == {"D1", "A4", "A8", "B13", "L1", "R2", "Q13", "R12"}
    assert m.rooftop == m.neutral == m.blocking == 0 and not m.tea
    assert len(m) == 485 == len(ref.legal_actions(s))


MIDGAME_V2_3P = """
   A  B  C  D  E  F  G  H  I  J  K  L  M  N  O  P  Q  R
 1 T1 ++ ++ ++ ++ ++ ++ ++ ++ ++ ++ ++ ++ ++ ++ ++ ++ T3
 2 ## sR .. GR .. .. .. .. PR pR .. .. .. .. .. .. .. ++
 3 ++ gR gR gR gR .. .. .. pR pR pR .. .. .. .. .. .. ++
 4 ++ gR .. .. .. .. .. .. .. .. .. .. .. .. .. OY .. ++
 5 ++ .. .. .. @@ .. .. OR oR oR .. .. .. .. .. .. .. ++
 6 ++ .. .. .. .. .. .. .. MM oR .. g. g. g. g. .. o. ++
 7 ++ .. PB .. .. .. .. .. MM .. .. .. g. g. .. .. .. ++
 8 ++ .. pB .. PG .. .. .. MM .. .. .. MM .. .. .. .. ++
 9 ++ .. .. .. .. .. .. .. MM MM .. .. MM .. .. .. b. ++
10 ++ .. .. .. .. .. .. .. sR MM MM MM MM sY sY .. .. ++
11 ++ .. sG .. .. .. .. BR bR .. .. sY BY bY bY bY sY ++
12 ++ sG PG sG .. .. .. .. .. .. .. .. .. bY bY sY .. ++
13 T4 ++ ++ ++ ++ ++ ++ ++ ++ ++ ++ ++ ++ ++ ## ## ## T2
"""


def test_golden_v2_three_player_midgame() -> None:
    red = Supply((2, 4, 2, 3), 0, 1, 0, 2, 9, 11)
    s = from_picture(MIDGAME_V2_3P, "medina-v2", 3, supplies={0: red}, tea=[1, 0, 0])
    m = legal_moves(s)
    # Grey must grow its open palace (L5 M5 N5 L7 O7 N8; O5 touches P4, P6 touches Q6, K6
    # touches J6); purple starts anew anywhere (24 squares); the open brown palace grows
    # only to Q8, the open orange one only to Q7. Red holds one neutral rooftop for the
    # three unclaimed palaces. The current street ends at I6 and M8.
    assert [b.bit_count() for b in m.buildings] == [6, 24, 1, 1]
    assert squares_named(s, m.buildings[0]) == {"L5", "M5", "N5", "L7", "O7", "N8"}
    assert squares_named(s, m.buildings[2] | m.buildings[3]) == {"Q8", "Q7"}
    assert squares_named(s, m.neutral) == {"L6", "Q6", "Q9"}
    assert squares_named(s, m.merchant) == {"H6", "L8", "N8"}
    assert squares_named(s, m.wall) == {"B1", "A3", "Q1", "R2", "N13", "R12", "B13", "A12"}
    assert m.stable.bit_count() == 36 and m.rooftop == 0 and not m.tea
    assert len(m) == 82 == len(ref.legal_actions(s))
    s = act(s, "merchant H6")
    assert legal_moves(s).tea and len(legal_moves(s)) == len(ref.legal_actions(s))


MIDGAME_V1_2P = """
   A  B  C  D  E  F  G  H  I  J  K  L  M  N  O  P  Q  R
 1 T1 ## ## ++ ++ ++ ++ ++ ++ ++ ++ ++ ++ ++ ++ ++ ## T3
 2 ## .. .. sB OB .. b. s. .. .. .. .. .. .. .. .. sR ##
 3 ## OG .. .. .. .. .. .. .. .. .. .. .. PB sB .. PR ##
 4 ## sG .. .. .. .. PY .. sG GG .. .. MM MM MM .. sR ++
 5 ++ .. .. .. .. .. .. .. .. .. .. MM MM OR oR .. .. ++
 6 ++ .. .. .. .. .. .. .. .. .. MM MM .. oR .. .. .. ++
 7 ++ .. .. OY .. .. .. .. .. .. MM .. .. sR .. .. .. ++
 8 ++ .. .. sY .. .. .. GB sB .. MM .. .. .. .. .. .. ++
 9 ++ .. .. .. .. BG .. sB .. .. MM MM MM .. .. .. .. ##
10 ++ .. .. .. .. .. .. .. .. GR sR .. MM GY .. BB .. ##
11 ++ .. .. .. .. .. .. .. .. MM MM MM MM gY .. .. .. ##
12 ## .. .. .. .. .. .. BY bY MM .. .. .. .. .. .. .. ##
13 T4 ## ## ## ++ ++ ++ ++ ++ ++ ++ ++ ++ ++ ## ## ## T2
"""


def test_golden_v1_2p_endgame() -> None:
    # Every colour is exhausted; only merchants and walls are left.
    supplies = {
        0: Supply((0, 0, 0, 0), 0, 0, 0, 0, 3, 6),
        1: Supply((0, 0, 0, 0), 0, 0, 0, 0, 4, 7),
    }
    s = from_picture(MIDGAME_V1_2P, "medina-v1-2p", 2, supplies=supplies, to_move=1)
    assert s.exhausted == 0b1111
    m = legal_moves(s)
    # The brown palace at G2 stays unclaimed: nobody holds a rooftop for it any more.
    # The current street's ends are O4 and J12; only O4 has room (P4): K12 is beside two.
    assert squares_named(s, m.merchant) == {"P4"}
    assert len(m) == 1 + 8 == len(ref.legal_actions(s))


def test_actions_nth_len_and_mask_agree() -> None:
    s = from_picture(MIDGAME_V2_3P, "medina-v2", 3, tea=[1, 0, 0])
    s = act(s, "merchant H6")
    m = legal_moves(s)
    listed = m.actions()
    assert len(listed) == len(m) == len(set(listed))
    assert [m.nth(i) for i in range(len(m))] == listed
    assert listed[-1].kind is ActionKind.TEA
    assert listed == legal_actions(s)
    for a in listed:
        assert is_legal(s, a)
        if a.kind is not ActionKind.TEA:
            assert m.mask(a.kind, a.colour) >> a.square & 1
    with pytest.raises(IndexError):
        m.nth(len(m))
    assert m.has_placement()
    assert m.mask(ActionKind.BUILDING, 7) == 0


def test_rooftop_may_name_any_building_of_the_palace() -> None:
    s = from_picture(MIDGAME_V2_3P, "medina-v2", 3, to_move=2)  # blue: one neutral left
    for name in ("L6", "M6", "N6", "O6", "M7", "N7"):
        assert is_legal(s, action(s, f"neutral {name}"))
    assert not is_legal(s, action(s, "neutral L5"))
