"""Stables (docs/rules.md 6.4): next to a building, in exactly one palace, apart from others."""

from __future__ import annotations

import pytest
from medina.engine import Supply, legal_moves

from .support import act, illegal, legal, position, sq, squares_named

GREY_F6 = {"F6": "g."}
GREY_F6_BROWN_H7 = {"F6": "g.", "H7": "b."}
CLAIMED = {"F6": "GB", "G6": "gB", "F7": "sB"}


@pytest.mark.parametrize(
    ("marks", "text"),
    [
        (GREY_F6, "stable F5"),
        (GREY_F6, "stable G6"),
        (GREY_F6_BROWN_H7, "stable F7"),
        (GREY_F6_BROWN_H7, "stable E6"),
        (CLAIMED, "stable H6"),  # another player's claimed palace
        (CLAIMED, "stable G7"),  # next to a building and to the palace's own stable
        ({"M10": "g."}, "stable L10"),
    ],
)
def test_legal_stables(marks: dict[str, str], text: str) -> None:
    s = position("medina-v2", 4, marks)
    assert legal(s, text)
    act(s, text)


@pytest.mark.parametrize(
    ("marks", "text", "rule", "named"),
    [
        ({}, "stable K5", "stable-adjacent", ("K5",)),
        (CLAIMED, "stable F8", "stable-adjacent", ("F8",)),  # only next to a stable
        (GREY_F6_BROWN_H7, "stable G6", "palace-separation", ("G6", "H7", "F6")),
        (GREY_F6_BROWN_H7, "stable G7", "palace-separation", ("G7", "H7", "F6")),
        ({"F6": "g.", "H6": "b."}, "stable G6", "palace-separation", ("G6", "F6", "H6")),
        ({"F6": "g.", "F7": "s.", "G9": "b."}, "stable G8", "palace-separation", ("G8",)),
        ({"M10": "g."}, "stable N10", "well-ring", ("N10", "O10")),
        (GREY_F6, "stable F6", "occupied", ("F6",)),
        (GREY_F6, "stable A6", "city-square", ("A6",)),
    ],
)
def test_illegal_stables(
    marks: dict[str, str], text: str, rule: str, named: tuple[str, ...]
) -> None:
    illegal(position("medina-v2", 4, marks), text, rule, *named)


def test_stable_next_to_a_stable_only_explains_why() -> None:
    err = illegal(position("medina-v2", 4, CLAIMED), "stable F8", "stable-adjacent", "F8")
    assert "next to a stable is not enough" in err.message


def test_stable_sites() -> None:
    s = position("medina-v2", 4, GREY_F6_BROWN_H7)
    assert squares_named(s, legal_moves(s).stable) == {
        "F5", "E6", "F7",  # grey; G6 and G7 would touch both palaces
        "H6", "I7", "H8",  # brown; G8 is only diagonal to H7
    }  # fmt: skip


def test_a_stable_joins_the_palace_of_the_building_it_borders() -> None:
    s = act(position("medina-v2", 4, CLAIMED), "stable H6")
    palace = s.palace_at(sq(s, "F6"))
    assert palace is not None and palace.size == 4
    assert palace.stables == (1 << sq(s, "F7")) | (1 << sq(s, "H6"))
    assert palace.time == s.ply  # the palace's time is its last stable (D11)


def test_a_stable_joins_an_unclaimed_palace_without_letting_it_grow_d5() -> None:
    s = act(position("medina-v2", 4, GREY_F6), "stable F7")
    palace = s.palaces[0]
    assert palace.stables == 1 << sq(s, "F7") and palace.time == 0
    assert squares_named(s, legal_moves(s).buildings[0]) == {"F5", "E6", "G6"}


def test_no_stable_without_one_in_supply() -> None:
    none = Supply((5, 5, 5, 5), 0b1111, 0, 0, 0, 6, 9)
    s = position("medina-v2", 4, GREY_F6, supplies={0: none})
    assert legal_moves(s).stable == 0
    illegal(s, "stable F7", "no-supply")
