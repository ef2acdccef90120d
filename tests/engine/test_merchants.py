"""Merchants (docs/rules.md 6.5 and 12): extend the current street at an end, never beside two."""

from __future__ import annotations

import random

import pytest
from medina.engine import ActionKind, Supply, apply_action, legal_moves, new_game, render
from medina.engine.board import empty_city

from .support import act, illegal, legal, position, squares_named

LONE = {"H7": "MM"}
PAIR = {"H7": "MM", "I7": "MM"}
LINE = {"H7": "MM", "I7": "MM", "J7": "MM"}
ELL = {"H7": "MM", "I7": "MM", "I8": "MM"}
TEE = {"H7": "MM", "I7": "MM", "J7": "MM", "I8": "MM"}
# The current street (Q12) is shut in by an orange palace; the dead street B5-B7 is shut in
# by a grey and a brown palace except beside its middle merchant (C6).
SHUT_IN = {
    "Q12": "MM", "P11": "o.", "P12": "o.", "Q11": "o.",
    "B5": "mm", "B6": "mm", "B7": "mm",
    "B4": "g.", "C4": "g.", "C5": "g.",
    "B8": "b.", "C8": "b.", "C7": "b.",
}  # fmt: skip


@pytest.mark.parametrize(
    ("marks", "sites"),
    [
        (LONE, {"H6", "H8", "G7", "I7"}),  # a lone merchant is both ends
        (PAIR, {"G7", "H6", "H8", "I6", "I8", "J7"}),
        (LINE, {"G7", "H6", "H8", "J6", "J8", "K7"}),
        (ELL, {"G7", "H6", "I9", "J8"}),  # H8 is beside two merchants; I7 is no end
        (TEE, {"G7", "H6", "K7", "J6", "I9"}),  # three ends; I6 is beside the middle
    ],
)
def test_merchant_sites_are_next_to_an_end(marks: dict[str, str], sites: set[str]) -> None:
    s = position("medina-v2", 4, marks)
    assert squares_named(s, legal_moves(s).merchant) == sites


@pytest.mark.parametrize(
    ("marks", "text", "rule", "named"),
    [
        (LINE, "merchant I6", "street-end", ("I6", "G7", "K7")),
        (LINE, "merchant M3", "street-end", ("M3",)),
        (ELL, "merchant H8", "merchant-crowded", ("H8",)),
        (LINE, "merchant H7", "occupied", ("H7",)),
        ({"M9": "MM"}, "merchant O10", "occupied", ("O10",)),  # the well
        (LONE, "merchant A7", "city-square", ("A7",)),
        ({"B3": "MM"}, "merchant A3", "city-square", ("A3",)),
    ],
)
def test_illegal_merchants(
    marks: dict[str, str], text: str, rule: str, named: tuple[str, ...]
) -> None:
    illegal(position("medina-v2", 4, marks), text, rule, *named)


def test_crowded_message_counts_the_merchants() -> None:
    err = illegal(position("medina-v2", 4, ELL), "merchant H8", "merchant-crowded", "H8")
    assert "next to 2 merchants" in err.message


def test_merchant_may_stand_next_to_the_well() -> None:
    s = position("medina-v2", 4, {"M9": "MM"})
    assert legal(s, "merchant N9")  # N9 touches the well at O10
    s = act(s, "merchant N9", "merchant N10")
    assert squares_named(s, s.street) == {"M9", "N9", "N10"}


def test_extending_the_current_street() -> None:
    s = act(position("medina-v2", 4, PAIR), "merchant J7")
    assert squares_named(s, s.street) == {"H7", "I7", "J7"}


def test_new_street_when_the_current_one_is_shut_in() -> None:
    s = position("medina-v2", 4, SHUT_IN, well="K10")
    sites = legal_moves(s).merchant
    assert "C6" in squares_named(s, sites) and "F3" in squares_named(s, sites)
    s = act(s, "merchant F3")
    assert squares_named(s, s.street) == {"F3"}
    assert render(s).count("MM") == 1  # Q12 and B5-B7 are dead ("mm")


def test_new_street_may_touch_a_dead_street_and_merges_with_it_d6() -> None:
    s = act(position("medina-v2", 4, SHUT_IN, well="K10"), "merchant C6")
    assert squares_named(s, s.street) == {"B5", "B6", "B7", "C6"}
    # The old ends B5 and B7 stay dead: only C6 can grow, away from the dead street.
    assert squares_named(s, legal_moves(s).merchant) == {"D6"}


def test_no_merchant_without_one_in_supply() -> None:
    none = Supply((5, 5, 5, 5), 0b1111, 0, 0, 3, 0, 9)
    s = position("medina-v2", 4, LONE, supplies={0: none})
    assert legal_moves(s).merchant == 0
    illegal(s, "merchant H6", "no-supply")


@pytest.mark.parametrize(("ruleset", "players"), [("medina-v2", 2), ("medina-v1", 3)])
def test_dead_street_ends_never_offer_a_square_section_12(ruleset: str, players: int) -> None:
    # Section 12 "the old ends stay dead" holds without code: a street dies only when no
    # square beside its ends is legal, and squares only fill up (docs/rules.md 6.5).
    rng = random.Random(5)
    seen_dead = 0
    for seed in range(4):
        s = new_game(ruleset, players, seed)
        while not s.over:
            g = s.rules.geometry
            crowded = g.at_least_two_adjacent(s.merchants)
            dead = s.merchants & ~s.street
            seen_dead += dead != 0
            assert not g.adj(dead & ~crowded) & empty_city(s) & ~crowded, render(s)
            actions = legal_moves(s).actions()
            merchants = [a for a in actions if a.kind is ActionKind.MERCHANT]
            pick = merchants if merchants and rng.random() < 0.3 else actions
            s = apply_action(s, rng.choice(pick))
    assert seen_dead  # the playouts did reach dead streets
