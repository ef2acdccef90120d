"""Buildings and palaces (docs/rules.md 6.2): grow the open palace, else start apart from all."""

from __future__ import annotations

import pytest
from medina.engine import EventKind, Supply, legal_moves

from .support import act, illegal, legal, position, squares_named

GREY_F6 = {"F6": "g."}
GREY_F6_BROWN_H6 = {"F6": "g.", "H6": "b."}
GREY_F6_STABLE_F7 = {"F6": "g.", "F7": "s."}
GREY_F6_CLAIMED = {"F6": "GR"}
# Grey at B2 cannot grow: B3 holds a merchant and C2 touches the brown palace at D3.
GREY_B2_BLOCKED = {"B2": "g.", "D3": "b.", "B3": "MM"}
WALLED_A5 = {"A2": "##", "A3": "##", "A4": "##", "A5": "##"}


@pytest.mark.parametrize(
    ("marks", "text"),
    [
        ({}, "grey K10"),  # a new palace anywhere
        ({}, "orange B2"),  # even in a corner of the city
        (GREY_F6, "grey F5"),  # grows the open grey palace
        (GREY_F6, "grey G6"),
        (GREY_F6, "brown H6"),  # a new brown palace one square apart
        (GREY_F6, "brown F8"),
        (GREY_F6_BROWN_H6, "grey E6"),
        (GREY_F6_STABLE_F7, "grey G6"),
        (GREY_F6_CLAIMED, "grey K10"),  # claimed: a new grey palace
        (GREY_B2_BLOCKED, "grey K10"),  # blocked: a new grey palace
        (GREY_B2_BLOCKED, "brown E3"),
        (WALLED_A5 | {"C5": "MM"}, "purple B5"),  # next to a wall and a merchant
        ({"L9": "MM"}, "grey L10"),  # next to a merchant
    ],
)
def test_legal_buildings(marks: dict[str, str], text: str) -> None:
    s = position("medina-v2", 4, marks)
    assert legal(s, text)
    act(s, text)


@pytest.mark.parametrize(
    ("marks", "text", "rule", "named"),
    [
        (GREY_F6, "grey K10", "must-expand", ("K10", "F6", "F5", "E6", "G6", "F7")),
        (GREY_F6, "grey G7", "must-expand", ("G7", "F6")),  # diagonal is not adjacent
        (GREY_F6, "brown G7", "palace-separation", ("G7", "F6")),
        (GREY_F6, "brown G6", "palace-separation", ("G6", "F6")),
        (GREY_F6_BROWN_H6, "grey G6", "palace-separation", ("G6", "H6")),
        (GREY_F6_BROWN_H6, "grey K10", "must-expand", ("K10", "F5", "E6", "F7")),
        (GREY_F6_STABLE_F7, "grey F8", "must-expand", ("F8", "F6")),  # D5: not via a stable
        (GREY_F6_STABLE_F7, "purple F8", "palace-separation", ("F8", "F6")),
        (GREY_F6_STABLE_F7, "purple E8", "palace-separation", ("E8", "F6")),  # touches F7
        (GREY_F6_CLAIMED, "grey F5", "palace-separation", ("F5", "F6")),
        (GREY_B2_BLOCKED, "grey C2", "palace-separation", ("C2", "B2")),
        (GREY_F6, "grey F6", "occupied", ("F6",)),
        ({"K9": "MM"}, "grey K9", "occupied", ("K9",)),
        ({}, "grey O10", "occupied", ("O10",)),  # the well
        ({}, "grey N9", "well-ring", ("N9", "O10")),
        ({}, "orange P11", "well-ring", ("P11", "O10")),
        ({"M10": "p."}, "purple N10", "well-ring", ("N10", "O10")),
        ({}, "grey A5", "city-square", ("A5",)),
    ],
)
def test_illegal_buildings(
    marks: dict[str, str], text: str, rule: str, named: tuple[str, ...]
) -> None:
    illegal(position("medina-v2", 4, marks), text, rule, *named)


def test_error_message_names_both_palace_and_square() -> None:
    s = position("medina-v2", 4, {"G8": "b.", "G9": "b."})
    err = illegal(s, "grey F7", "palace-separation", "F7", "G8")
    assert err.message == "building at F7 touches the brown palace at G8"


def test_open_palace_sites_are_its_expansion_squares() -> None:
    s = position("medina-v2", 4, {"F6": "g.", "G6": "g.", "I7": "o."})
    sites = squares_named(s, legal_moves(s).buildings[0])
    # H6 touches the orange palace at I7; the rest of the grey palace's neighbours are free.
    assert sites == {"F5", "G5", "E6", "F7", "G7"}


def test_new_palace_sites_avoid_every_zone_and_the_well_ring() -> None:
    s = position("medina-v2", 4)
    assert legal_moves(s).buildings[0].bit_count() == 176 - 9  # the well and its ring
    s = position("medina-v2", 4, {"F6": "gR", "F7": "GR"})
    # 3x4 squares touch the claimed palace, 9 are the well and its ring.
    assert legal_moves(s).buildings[0].bit_count() == 176 - 12 - 9


def test_well_ring_limits_expansion() -> None:
    s = position("medina-v2", 4, {"M10": "g."})
    assert squares_named(s, legal_moves(s).buildings[0]) == {"M9", "M11", "L10"}


def test_palace_hemmed_in_by_the_well_ring_cannot_grow() -> None:
    # Grey M10 could only grow to N10, which is in the well ring (well at O10).
    marks = {"M10": "g.", "M11": "s.", "M9": "MM", "L10": "mm"}
    s = position("medina-v2", 4, marks)
    assert legal(s, "grey K3")  # so a new grey palace may start
    illegal(s, "grey N10", "well-ring", "N10", "O10")


def test_a_building_joins_the_palace_it_extends() -> None:
    s = act(position("medina-v2", 4, GREY_F6), "grey F5")
    palace = s.palace_at(s.rules.geometry.square(4, 5))
    assert palace is not None and palace.size == 2 and len(s.palaces) == 1


def test_blocked_palace_stays_and_can_still_be_roofed() -> None:
    s = position("medina-v2", 4, GREY_B2_BLOCKED)
    assert legal(s, "roof B2")
    s = act(s, "grey K10", "roof B2")
    owners = {squares_named(s, p.buildings).pop(): p.owner for p in s.palaces if p.colour == 0}
    assert owners == {"B2": 0, "K10": -1}


def test_claimed_palace_takes_no_building() -> None:
    s = position("medina-v2", 4, {"F6": "g."})
    s = act(s, "roof F6", "grey F9")
    assert [p.buildings.bit_count() for p in s.palaces if p.colour == 0] == [1, 1]


def test_no_building_without_one_in_supply() -> None:
    empty_grey = Supply((0, 5, 5, 5), 0b1111, 0, 0, 3, 6, 9)
    s = position("medina-v2", 4, supplies={0: empty_grey})
    assert legal_moves(s).buildings[0] == 0
    illegal(s, "grey K10", "no-supply")


def test_colour_exhaustion_removes_every_supplys_buildings() -> None:
    marks = {"C3": "GR", "G3": "GY", "K3": "GB", "D8": "g.", "D9": "g."}
    s = position("medina-v2", 4, marks, to_move=3)
    assert not s.exhausted
    s = act(s, "roof D8")  # green claims the last grey palace
    assert s.exhausted == 0b0001
    assert all(s.supply_of(seat).buildings[0] == 0 for seat in range(4))
    assert all(s.supply_of(seat).buildings[1] == 5 for seat in range(4))
    assert [e.colour for e in s.events if e.kind is EventKind.COLOUR_EXHAUSTED] == [0]
    err = illegal(s, "grey K10", "no-supply")
    assert "left the game" in err.message


def test_neutral_rooftops_do_not_count_for_exhaustion() -> None:
    s = position("medina-v2", 2, {"C3": "GR", "G3": "GB", "K3": "g."}, to_move=1)
    assert not s.exhausted  # red and a neutral (blue) rooftop: yellow still to claim
    s = act(s, "roof K3")
    assert s.exhausted == 0b0001


def test_v1_exhaustion_needs_every_seat() -> None:
    s = position("medina-v1", 3, {"C3": "OR", "G3": "OY", "K3": "o.", "H7": "MM"}, to_move=2)
    assert not s.exhausted
    assert act(s, "roof K3").exhausted == 0b1000


def test_v1_2p_exhaustion_needs_all_four_rooftops_d18() -> None:
    # Yellow and red (seat 0) and green (seat 1's blocking colour) are on grey palaces.
    marks = {"C3": "GY", "G3": "GR", "K3": "GG", "D8": "g.", "H7": "MM"}
    s = position("medina-v1-2p", 2, marks, to_move=1)
    assert not s.exhausted
    s = act(s, "roof D8")  # blue, the fourth
    assert s.exhausted == 0b0001
