"""Observations (docs/rules.md 9): own supply exact, others only what is public."""

from __future__ import annotations

from dataclasses import replace

import pytest
from medina.engine import NOBODY, EventKind, GameState, Supply, new_game, observe
from medina.engine.state import SLOTS

from .support import act, position


def test_a_seat_sees_its_own_supply_only() -> None:
    s = act(new_game("medina-v2", 4, seed=3), "wall B1")
    for seat in range(4):
        view = observe(s, seat)
        assert view.viewer == seat
        for p in view.seats:
            assert (p.supply is not None) == (p.seat == seat)
        assert view.seats[seat].supply == s.supply_of(seat)


def test_spectator_and_full_views() -> None:
    s = new_game("medina-v2", 3, seed=3)
    assert all(p.supply is None for p in observe(s, None).seats)
    assert observe(s, None).viewer == -1
    full = observe(s, None, full=True)
    assert [p.supply for p in full.seats] == [s.supply_of(seat) for seat in range(3)]


def test_public_facts_about_other_seats() -> None:
    marks = {"C3": "PR", "K3": "GB", "H7": "MM"}  # 3 players: green is neutral
    s = position("medina-v2", 3, marks, tea=[2, 0, 0])
    view = observe(s, 1)
    red = view.seats[0]
    assert red.rooftops == 0b1101  # rooftops stand in front of the screen
    assert red.neutral == 1 and view.seats[1].neutral == 1 and view.seats[2].neutral == 1
    assert red.tea == 2 and not red.out_of_pieces and not red.revealed
    assert red.rooftop_colour == 0 and red.blocking_colour == -1
    assert view.palace_tiles == (2, 0, NOBODY, NOBODY)  # grey: blue; purple: red


def test_out_of_pieces_is_public() -> None:
    none = Supply((0, 0, 0, 0), 0, 0, 0, 0, 0, 0)
    s = position("medina-v2", 4, supplies={2: none})
    assert [p.out_of_pieces for p in observe(s, 0).seats] == [False, False, True, False]


def test_board_and_turn_fields() -> None:
    s = act(new_game("medina-v2", 4, seed=8), "wall B1", "grey F6")
    view = observe(s, 2)
    assert view.buildings == tuple(s.buildings)
    assert (view.merchants, view.street, view.walls, view.well) == (
        s.merchants,
        s.street,
        s.walls,
        s.well,
    )
    assert (view.to_move, view.quota, view.placed, view.turn) == (2, 2, 0, 3)
    assert view.tower_merchants == (3, 2, 1, 0) and view.tea_pool == 6
    assert len(view.palaces) == 1 and view.palaces[0].colour == 0


def test_history_since() -> None:
    s = act(new_game("medina-v2", 4, seed=8), "wall B1", "grey F6")
    everything = observe(s, 0).events
    assert [e.kind for e in everything].count(EventKind.PLACED) == 2
    later = observe(s, 0, since=2)
    assert later.events == everything[2:] and later.first_event == 2


def perturb(s: GameState, seat: int) -> GameState:
    """A copy where ``seat``'s hidden supply differs (same piece count, so nothing public)."""
    t = s.copy()
    base = seat * SLOTS
    slots = [i for i in range(7) if t.supply[base + i]]
    assert slots, "the seat has hidden pieces"
    t.supply[base + slots[0]] -= 1
    t.supply[base + (slots[0] + 1) % 7] += 1
    return t


@pytest.mark.parametrize(("ruleset", "players"), [("medina-v2", 4), ("medina-v1-2p", 2)])
def test_another_seats_hidden_supply_never_changes_a_view(ruleset: str, players: int) -> None:
    s = new_game(ruleset, players, seed=4)
    s = act(s, "start H7") if s.merchants == 0 else s
    for seat in range(players):
        for other in range(players):
            if other != seat:
                assert observe(perturb(s, other), seat) == observe(s, seat)
                assert observe(perturb(s, other), None) == observe(s, None)
        assert observe(perturb(s, seat), seat) != observe(s, seat)


def test_revealed_supply_is_public_v1_2p() -> None:
    low = Supply((1, 0, 0, 0), 0, 0, 0, 0, 0, 0)
    s = position("medina-v1-2p", 2, {"H7": "MM"}, supplies={1: low})
    s = act(s, "wall B1", "wall C1", "wall D1")
    view = observe(s, 0)
    assert view.seats[1].revealed and view.seats[1].supply == low
    assert observe(s, None).seats[1].supply == low
    assert replace(view.seats[0], supply=None) == observe(s, None).seats[0]
