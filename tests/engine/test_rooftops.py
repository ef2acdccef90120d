"""Rooftops (docs/rules.md 6.3): claiming palaces, neutral and blocking rooftops, removal."""

from __future__ import annotations

import pytest
from medina.engine import NEUTRAL, ActionKind, EventKind, Supply, legal_moves, render

from .support import act, illegal, legal, position, sq, squares_named

TWO_GREY = {"F6": "g.", "G6": "g.", "G7": "s."}
V12P = {"H9": "MM"}  # 1st-edition boards need the start merchant


@pytest.mark.parametrize("square", ["F6", "G6"])
def test_any_building_square_names_the_palace(square: str) -> None:
    s = position("medina-v2", 4, TWO_GREY)
    assert squares_named(s, legal_moves(s).rooftop) == {"F6"}  # one square per palace
    t = act(s, f"roof {square}")
    palace = t.palaces[0]
    assert palace.owner == 0 and palace.roof == ActionKind.ROOFTOP
    assert squares_named(t, 1 << palace.roof_square) == {square}
    assert t.supply_of(0).rooftops == 0b1110
    assert render(t).count("GR") == 1


def test_a_palace_of_any_size_may_be_claimed_even_if_it_could_grow() -> None:
    s = position("medina-v2", 4, {"K10": "o."})
    assert legal(s, "roof K10")


@pytest.mark.parametrize(
    ("marks", "text", "rule", "named"),
    [
        (TWO_GREY, "roof G7", "rooftop-on-building", ("G7",)),  # a stable
        (TWO_GREY, "roof K10", "rooftop-on-building", ("K10",)),  # nothing there
        ({"K9": "MM"}, "roof K9", "rooftop-on-building", ("K9",)),
        ({"F6": "GY", "G6": "gY"}, "roof G6", "already-claimed", ("F6",)),
        ({"C3": "GR", "K3": "g."}, "roof K3", "colour-claimed", ("K3",)),
        ({"K3": "g."}, "neutral K3", "no-such-piece", ()),  # 4 players: no neutral rooftops
        ({"K3": "g."}, "block K3", "no-such-piece", ()),
    ],
)
def test_illegal_rooftops(
    marks: dict[str, str], text: str, rule: str, named: tuple[str, ...]
) -> None:
    illegal(position("medina-v2", 4, marks), text, rule, *named)


def test_claiming_each_colour_once_with_own_rooftops() -> None:
    s = position("medina-v2", 4, {"C3": "GR", "K3": "g.", "K8": "b."})
    assert squares_named(s, legal_moves(s).rooftop) == {"K8"}
    err = illegal(s, "roof K3", "colour-claimed", "K3")
    assert "grey palace with a red rooftop" in err.message


def test_no_rooftops_left() -> None:
    none = Supply((5, 5, 5, 5), 0, 0, 0, 3, 6, 9)
    s = position("medina-v2", 4, {"K3": "g."}, supplies={0: none})
    illegal(s, "roof K3", "no-supply")


def test_stables_may_join_a_claimed_palace_but_buildings_may_not() -> None:
    s = position("medina-v2", 4, {"F6": "GB", "G6": "gB"})
    assert legal(s, "stable F7")
    illegal(s, "grey F7", "palace-separation", "F7")


def test_neutral_rooftops_go_on_any_colour_any_number_of_times() -> None:
    # medina-v2 with 2 players: blue is the neutral colour; seat 0 holds two neutrals.
    s = position("medina-v2", 2, {"C3": "GB", "J3": "g.", "C8": "GR", "J8": "p."})
    assert s.supply_of(0).neutral == 1 and s.supply_of(1).neutral == 2
    assert squares_named(s, legal_moves(s).neutral) == {"J3", "J8"}
    t = act(s, "neutral J3")
    claimed = [p for p in t.palaces if p.colour == 0 and p.owner == NEUTRAL]
    assert len(claimed) == 2
    assert t.supply_of(0).neutral == 0 and t.supply_of(0).rooftops == 0b1110
    assert t.to_move == 0 and t.placed == 1
    illegal(t, "neutral J8", "no-supply", "J8")


def test_a_neutral_rooftop_may_claim_an_unclaimed_palace_of_an_exhausted_colour() -> None:
    # docs/rules.md "Other choices": the leftover palace stays; only a neutral may roof it.
    s = position("medina-v2", 3, {"C3": "GR", "G3": "GY", "K3": "GB", "D8": "g."})
    assert s.exhausted == 0b0001
    moves = legal_moves(s)
    assert not moves.rooftop and squares_named(s, moves.neutral) == {"D8"}
    palace = act(s, "neutral D8").palace_at(sq(s, "D8"))
    assert palace is not None and palace.owner == NEUTRAL


def test_neutral_rooftop_when_none_left() -> None:
    s = position("medina-v2", 3, {"C3": "GG", "J3": "g."})  # green is neutral with 3 players
    assert s.supply_of(0).neutral == 0 and s.supply_of(1).neutral == 1
    illegal(s, "neutral J3", "no-supply", "J3")
    assert legal(position("medina-v2", 3, {"C3": "GG", "J3": "g."}, to_move=1), "neutral J3")


def test_v1_2p_blocking_rooftop_finishes_a_palace() -> None:
    s = position("medina-v1-2p", 2, V12P | {"F6": "g.", "G6": "g."})
    s = act(s, "block F6")  # seat 0 blocks with red
    palace = s.palaces[0]
    assert palace.owner == 0 and palace.roof == ActionKind.BLOCKING_ROOFTOP
    assert not palace.competes and not palace.scores
    assert render(s).count("GR") == 1
    assert legal(s, "grey K10")  # a new grey palace may start
    assert s.supply_of(0).blocking == 0b1110


def test_v1_2p_each_rooftop_colour_claims_each_palace_colour_once() -> None:
    s = position("medina-v1-2p", 2, V12P | {"C3": "GR", "K3": "g."})
    illegal(s, "block K3", "colour-claimed", "K3")
    assert legal(s, "roof K3")  # yellow may still claim grey


def test_v1_2p_one_rooftop_of_each_colour_per_turn() -> None:
    s = position("medina-v1-2p", 2, V12P | {"C3": "g.", "K3": "b.", "C8": "p."})
    s = act(s, "roof C3")
    err = illegal(s, "roof K3", "turn-limit", "yellow")  # names the colour already placed
    assert "your yellow rooftop" in err.message
    s = act(s, "block K3")
    err = illegal(s, "block C8", "turn-limit", "red")
    assert "your red blocking rooftop" in err.message
    s = act(s, "wall B1")
    assert s.to_move == 1


def test_v1_2p_blocking_rooftop_removal() -> None:
    # Seat 0 (yellow + red) claimed grey with yellow; seat 1 still holds green for grey.
    s = position("medina-v1-2p", 2, V12P | {"C3": "GY", "K3": "g."})
    assert s.supply_of(1).blocking == 0b1111
    s = act(s, "block K3")
    assert s.supply_of(1).blocking == 0b1110
    removed = [e for e in s.events if e.kind is EventKind.ROOFTOP_REMOVED]
    assert [(e.seat, e.colour) for e in removed] == [(1, 0)]
    assert not s.exhausted  # blue may still claim grey


def test_v1_2p_no_removal_when_the_blocking_rooftop_is_placed() -> None:
    s = position("medina-v1-2p", 2, V12P | {"C3": "GY", "K3": "g.", "C8": "GG"})
    s = act(s, "block K3")
    assert not [e for e in s.events if e.kind is EventKind.ROOFTOP_REMOVED]
    assert not s.exhausted  # blue has not claimed grey


def test_v1_2p_removal_can_complete_exhaustion_section_12() -> None:
    s = position("medina-v1-2p", 2, V12P | {"C3": "GY", "K3": "g.", "C8": "GB"})
    s = act(s, "block K3")
    kinds = [e.kind for e in s.events]
    assert kinds.index(EventKind.ROOFTOP_REMOVED) < kinds.index(EventKind.COLOUR_EXHAUSTED)
    assert s.exhausted == 0b0001
    assert s.supply_of(0).buildings[0] == s.supply_of(1).buildings[0] == 0


def test_rooftop_actions_are_listed_once_per_palace() -> None:
    s = position("medina-v2", 4, {"C3": "g.", "C4": "g.", "K3": "b.", "K8": "OR"})
    assert squares_named(s, legal_moves(s).rooftop) == {"C3", "K3"}
    assert sq(s, "C4") not in [a.square for a in legal_moves(s).actions() if a.kind == 2]
