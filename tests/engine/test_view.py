"""engine.view: a GameState rebuilt from an observation plays exactly like the original."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import replace

import pytest
from medina.engine import (
    CONFIGURATIONS,
    GameState,
    Observation,
    Supply,
    apply_action,
    get_ruleset,
    legal_moves,
    new_game,
    observe,
    render,
    result,
)
from medina.engine.state import SLOTS
from medina.engine.view import ViewError, state_from_observation, tower_arms

from .support import act, position

#: Fields that an observation cannot carry and that do not affect the rules.
UNSEEN = ("seed", "legal_cache", "_events")


def playout(ruleset: str, players: int, seed: int) -> Iterator[tuple[GameState, random.Random]]:
    """Every state of a seeded random game (start seat varies with the seed)."""
    rng = random.Random(seed)
    s = new_game(ruleset, players, seed, start_seat=seed % players)
    while True:
        yield s, rng
        if s.over:
            return
        moves = legal_moves(s)
        s = apply_action(s, moves.nth(rng.randrange(len(moves))))


def differences(a: GameState, b: GameState, skip: tuple[str, ...] = UNSEEN) -> list[str]:
    return [
        name
        for name in GameState.__slots__
        if name not in skip and getattr(a, name) != getattr(b, name)
    ]


def assert_plays_alike(s: GameState, r: GameState) -> None:
    assert legal_moves(r) == legal_moves(s)
    assert result(r) == result(s)
    assert render(r) == render(s)


@pytest.mark.parametrize(("ruleset", "players"), CONFIGURATIONS)
@pytest.mark.parametrize("seed", [1, 2])
def test_the_full_view_rebuilds_the_state(ruleset: str, players: int, seed: int) -> None:
    for s, rng in playout(ruleset, players, seed):
        r = state_from_observation(observe(s, None, full=True))
        assert differences(s, r) == [], f"decision {s.decisions}"
        assert r.events == s.events
        assert_plays_alike(s, r)
        if s.over:
            continue
        moves = legal_moves(s)
        a = moves.nth(rng.randrange(len(moves)))
        s2, r2 = apply_action(s, a), apply_action(r, a)
        assert_plays_alike(s2, r2)
        assert r2.events_since(r.n_events) == s2.events_since(s.n_events)


@pytest.mark.parametrize(("ruleset", "players"), CONFIGURATIONS)
def test_a_seat_with_the_whole_history_deduces_every_supply(ruleset: str, players: int) -> None:
    checked = 0
    for s, _rng in playout(ruleset, players, 3):
        seat = s.to_move
        r = state_from_observation(observe(s, seat))
        assert r.supply == s.supply, f"decision {s.decisions}"
        assert legal_moves(r) == legal_moves(s)
        if not s.over:
            other = (seat + 1) % players
            assert state_from_observation(observe(s, other)).supply == s.supply
            checked += 1
    assert checked > 20


def mid_game(ruleset: str, players: int, decisions: int, seed: int = 4) -> GameState:
    for s, _rng in playout(ruleset, players, seed):
        if s.decisions >= decisions:
            return s
    raise AssertionError("game too short")


def test_a_cut_history_takes_given_supplies_else_the_starting_ones() -> None:
    s = mid_game("medina-v2", 4, 30)
    view = observe(s, 1, since=s.n_events - 2)
    guessed = state_from_observation(view)
    start = new_game("medina-v2", 4, 0)
    for seat in range(4):
        b = seat * SLOTS
        if seat == 1:
            assert guessed.supply_of(1) == s.supply_of(1)
        else:
            assert guessed.supply[b : b + 7] == start.supply[b : b + 7]
            assert guessed.roofs[seat] == s.roofs[seat]  # rooftops are public
    given = {seat: s.supply_of(seat) for seat in (0, 2, 3)}
    exact = state_from_observation(view, supplies=given)
    assert differences(s, exact, (*UNSEEN, "n_events", "turn_colours", "turn_roofs")) == []
    assert exact.n_events == 2 and exact.events == s.events[-2:]


def test_a_cut_history_still_gives_turn_decisions_and_start_seat() -> None:
    for ruleset, players in CONFIGURATIONS:
        s = mid_game(ruleset, players, 40, seed=5)
        r = state_from_observation(observe(s, None, full=True, since=s.n_events))
        assert (r.ply, r.decisions, r.start_seat) == (s.ply, s.decisions, s.start_seat)
        assert r.purple_claims == s.purple_claims


def test_a_seat_out_of_pieces_holds_nothing() -> None:
    none = Supply((0, 0, 0, 0), 0, 0, 0, 0, 0, 0)
    s = position("medina-v2", 4, supplies={2: none})
    r = state_from_observation(observe(s, 0, since=s.n_events))
    assert r.supply_of(2) == none
    assert r.pieces_left(3) > 0


def test_exhausted_colours_leave_guessed_supplies() -> None:
    # Every seat has claimed grey: grey buildings left the game.
    marks = {"C3": "GR", "G3": "GY", "K3": "GB", "O3": "GG", "H8": "MM"}
    s = position("medina-v2", 4, marks)
    assert s.exhausted == 0b0001
    r = state_from_observation(observe(s, 0, since=s.n_events))
    assert all(r.supply_of(seat).buildings[0] == 0 for seat in range(4))
    assert all(r.supply_of(seat).buildings[1] == 5 for seat in range(4))


def test_the_current_turn_is_read_from_the_history() -> None:
    s = act(new_game("medina-v1-2p", 2, 0), "start H7", "grey D4", "grey D5")
    assert (s.to_move, s.placed) == (0, 1)
    r = state_from_observation(observe(s, 0))
    assert (r.turn_colours, r.turn_roofs) == (s.turn_colours, s.turn_roofs) == (0b0001, 0)
    assert legal_moves(r) == legal_moves(s)  # no second grey building this turn


def test_arms_are_walked_from_their_towers() -> None:
    s = act(new_game("medina-v2", 4, 1), "wall B1", "wall C1", "wall Q1", "wall R12")
    r = state_from_observation(observe(s, None))
    assert r.arms == s.arms and tower_arms(s.rules.geometry, s.walls) == s.arms


def full_view(ruleset: str = "medina-v2", players: int = 4) -> Observation:
    return observe(mid_game(ruleset, players, 12), None, full=True)


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        ({"cols": 16, "rows": 12}, "board is 16x12"),
        ({"to_move": 7}, "seat to move 7"),
        ({"walls": 1 << 9}, "not connected to any tower"),
        ({"walls": 1 << 40}, "off the wall spaces"),
    ],
)
def test_impossible_observations_are_refused(change: dict[str, int], fragment: str) -> None:
    obs = replace(full_view(), **change)  # type: ignore[arg-type]
    with pytest.raises(ViewError, match=fragment):
        state_from_observation(obs)


def test_bad_supplies_and_seats_are_refused() -> None:
    obs = full_view()
    with pytest.raises(ViewError, match="seat 9"):
        state_from_observation(obs, supplies={9: get_supply(obs)})
    with pytest.raises(ViewError, match="one seat view per seat"):
        state_from_observation(replace(obs, seats=obs.seats[:2]))


def get_supply(obs: Observation) -> Supply:
    supply = obs.seats[0].supply
    assert supply is not None
    return supply


def test_the_geometry_follows_the_ruleset() -> None:
    obs = full_view("medina-v2", 2)
    r = state_from_observation(obs)
    assert r.rules == get_ruleset("medina-v2", 2) and (obs.cols, obs.rows) == (16, 12)
