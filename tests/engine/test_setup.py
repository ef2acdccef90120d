"""Setup (docs/rules.md sections 3 and 4): components, seeded draws, overrides and typed errors."""

from __future__ import annotations

import random

import pytest
from medina.engine import (
    NOBODY,
    ROOFTOP_COLOURS,
    EventKind,
    Phase,
    PlayerCountError,
    SetupError,
    Supply,
    UnknownRulesetError,
    get_ruleset,
    legal_moves,
    new_game,
    observe,
    render,
    result,
    squares,
)
from medina.engine.variants import CONFIGURATIONS

from .support import sq

ALL = list(CONFIGURATIONS)

COMPONENTS = [
    # ruleset, players, buildings per colour, neutral, blocking mask, stables, merchants, walls
    ("medina-v2", 2, 8, 2, 0, 4, 12, 15),
    ("medina-v2", 3, 6, 1, 0, 4, 8, 12),
    ("medina-v2", 4, 5, 0, 0, 3, 6, 9),
    ("medina-v1", 3, 6, 0, 0, 4, 8, 10),
    ("medina-v1", 4, 5, 0, 0, 3, 6, 8),
    ("medina-v1-2p", 2, 9, 0, 0b1111, 6, 12, 16),
]


@pytest.mark.parametrize(
    ("ruleset", "players", "buildings", "neutral", "blocking", "stables", "merchants", "walls"),
    COMPONENTS,
)
def test_every_seat_starts_with_the_components_of_section_3(
    ruleset: str,
    players: int,
    buildings: int,
    neutral: int,
    blocking: int,
    stables: int,
    merchants: int,
    walls: int,
) -> None:
    s = new_game(ruleset, players, seed=1)
    expected = Supply((buildings,) * 4, 0b1111, neutral, blocking, stables, merchants, walls)
    assert [s.supply_of(seat) for seat in range(players)] == [expected] * players


@pytest.mark.parametrize(
    ("ruleset", "players", "own", "blocking", "neutral"),
    [
        ("medina-v2", 2, ("red", "yellow"), (), "blue"),
        ("medina-v2", 3, ("red", "yellow", "blue"), (), "green"),
        ("medina-v2", 4, ("red", "yellow", "blue", "green"), (), None),
        ("medina-v1", 4, ("red", "yellow", "blue", "green"), (), None),
        ("medina-v1-2p", 2, ("yellow", "blue"), ("red", "green"), None),
    ],
)
def test_rooftop_colours_per_seat(
    ruleset: str, players: int, own: tuple[str, ...], blocking: tuple[str, ...], neutral: str | None
) -> None:
    rules = get_ruleset(ruleset, players)
    assert tuple(ROOFTOP_COLOURS[c] for c in rules.rooftop_colours) == own
    assert tuple(ROOFTOP_COLOURS[c] for c in rules.blocking_colours) == blocking
    assert (ROOFTOP_COLOURS[rules.neutral_colour] if rules.neutral_colour >= 0 else None) == neutral


@pytest.mark.parametrize(
    ("ruleset", "players", "own", "blocking", "neutral"),
    [
        ("medina-v2", 3, (3, 0, 2), None, "yellow"),  # the colour no seat uses
        ("medina-v2", 2, (2, 0), None, "yellow"),  # the first of the two left
        ("medina-v2", 4, (3, 2, 1, 0), None, None),
        ("medina-v1-2p", 2, (2, 1), (3, 0), None),
    ],
)
def test_the_match_may_assign_rooftop_colours_section_3(
    ruleset: str,
    players: int,
    own: tuple[int, ...],
    blocking: tuple[int, ...] | None,
    neutral: str | None,
) -> None:
    s = new_game(ruleset, players, 1, rooftop_colours=own, blocking_colours=blocking)
    assert s.rules.rooftop_colours == own
    if blocking is not None:
        assert s.rules.blocking_colours == blocking
    colour = s.rules.neutral_colour
    assert (ROOFTOP_COLOURS[colour] if colour >= 0 else None) == neutral


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"rooftop_colours": (0, 0, 1)}, "repeat a colour"),
        ({"rooftop_colours": (0, 1)}, "2 rooftop colours given for 3 seats"),
        ({"rooftop_colours": (0, 1, 4)}, "colour 4 is not a colour"),
        ({"blocking_colours": (2, 3, 0)}, "has no blocking rooftops"),
    ],
)
def test_bad_colour_assignments_raise_setup_error(kwargs: dict[str, object], words: str) -> None:
    with pytest.raises(SetupError, match=words):
        new_game("medina-v2", 3, 1, **kwargs)  # type: ignore[arg-type]


def test_v1_2p_colour_assignment_may_not_share_a_colour_between_kinds() -> None:
    with pytest.raises(SetupError, match="repeat a colour"):
        new_game("medina-v1-2p", 2, 1, rooftop_colours=(1, 2), blocking_colours=(0, 1))


@pytest.mark.parametrize(("ruleset", "players"), ALL)
def test_setup_is_deterministic(ruleset: str, players: int) -> None:
    a = new_game(ruleset, players, seed=42)
    b = new_game(ruleset, players, seed=42)
    assert render(a) == render(b)
    assert a.events == b.events
    assert observe(a, None, full=True) == observe(b, None, full=True)
    assert legal_moves(a) == legal_moves(b)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_v2_setup_draws_follow_section_12(players: int) -> None:
    g = get_ruleset("medina-v2", players).geometry
    for seed in range(50):
        rng = random.Random(seed)
        inner = squares(g.inner)
        well = rng.choice(inner)
        merchant = rng.choice([q for q in inner if q != well])
        s = new_game("medina-v2", players, seed)
        assert s.well == well
        assert s.merchants == s.street == 1 << merchant


def test_v2_well_and_merchant_are_uniform_over_the_inner_city() -> None:
    g = get_ruleset("medina-v2", 4).geometry
    wells: set[int] = set()
    merchants: set[int] = set()
    for seed in range(2000):
        s = new_game("medina-v2", 4, seed)
        assert (g.inner >> s.well) & 1
        assert s.merchants & g.inner and not s.merchants & (1 << s.well)
        wells.add(s.well)
        merchants.add(s.merchants.bit_length() - 1)
    assert wells == merchants == set(squares(g.inner))


def test_start_merchant_may_be_next_to_the_well_d20() -> None:
    s = new_game("medina-v2", 4, seed=0, well=5 * 18 + 5, start_merchant=5 * 18 + 6)
    assert s.merchants == 1 << (5 * 18 + 6)


@pytest.mark.parametrize(("ruleset", "players"), [("medina-v2", 2), ("medina-v2", 4)])
def test_v2_tiles_at_setup(ruleset: str, players: int) -> None:
    s = new_game(ruleset, players, seed=5)
    assert s.tower_merchants == [3, 2, 1, 0]
    assert s.tower_tiles == [NOBODY] * 4 and s.palace_tiles == [NOBODY] * 4
    assert s.tea_pool == 6 and s.tea == [0] * players
    assert s.phase is Phase.PLACING
    assert result(s).totals == (0,) * players


@pytest.mark.parametrize(("ruleset", "players"), [("medina-v1", 3), ("medina-v1-2p", 2)])
def test_first_edition_setup_has_no_well_tea_or_tower_merchants(ruleset: str, players: int) -> None:
    s = new_game(ruleset, players, seed=5)
    assert s.well == -1 and s.well_ring == 0 and s.well_bonus == 0
    assert s.merchants == 0
    assert s.tower_merchants == [0, 0, 0, 0] and s.tea_pool == 0
    assert s.phase is Phase.START_MERCHANT
    moves = legal_moves(s)
    assert moves.start_merchant == s.rules.geometry.inner
    assert len(moves) == s.rules.geometry.inner.bit_count()


@pytest.mark.parametrize(("ruleset", "players"), ALL)
@pytest.mark.parametrize("start", [0, 1])
def test_start_seat_override(ruleset: str, players: int, start: int) -> None:
    s = new_game(ruleset, players, seed=3, start_seat=start)
    assert s.to_move == start and s.start_seat == start


def test_well_and_start_merchant_overrides() -> None:
    s = new_game("medina-v2", 4, seed=9, well=4 * 18 + 4, start_merchant=8 * 18 + 9)
    assert s.well == sq(s, "E5")
    assert s.merchants == 1 << sq(s, "J9")
    assert s.well_ring.bit_count() == 9
    named = {sq(s, n) for n in ("E3", "E7", "C5", "G5")}
    assert set(squares(s.well_bonus)) == named


def test_well_override_alone_draws_the_merchant_from_the_seed() -> None:
    a = new_game("medina-v2", 3, seed=11, well=5 * 18 + 7)
    b = new_game("medina-v2", 3, seed=11, well=5 * 18 + 7)
    assert a.merchants == b.merchants and not a.merchants & (1 << a.well)


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"ruleset": "medina-v3"}, UnknownRulesetError, "'medina-v3'"),
        ({"ruleset": "Medina-V2"}, UnknownRulesetError, "'Medina-V2'"),
        ({"players": 5}, PlayerCountError, "5 players"),
        ({"players": 1}, PlayerCountError, "1 players"),
        ({"ruleset": "medina-v1", "players": 2}, PlayerCountError, "2 players"),
        ({"ruleset": "medina-v1-2p", "players": 3}, PlayerCountError, "3 players"),
        ({"start_seat": 4}, SetupError, "start seat 4"),
        ({"start_seat": -1}, SetupError, "start seat -1"),
        ({"well": 1 * 18 + 1}, SetupError, "B2"),  # the edge ring
        ({"well": 0}, SetupError, "A1"),  # a tower
        ({"well": 9999}, SetupError, "9999"),
        ({"start_merchant": 12 * 18 + 5}, SetupError, "F13"),  # a wall space
        ({"well": 5 * 18 + 5, "start_merchant": 5 * 18 + 5}, SetupError, "F6"),
        ({"ruleset": "medina-v1", "well": 5 * 18 + 5}, SetupError, "medina-v1"),
        ({"ruleset": "medina-v1", "start_merchant": 5 * 18 + 5}, SetupError, "medina-v1"),
    ],
)
def test_bad_setup_raises_a_typed_error_naming_the_value(
    kwargs: dict[str, object], error: type[Exception], words: str
) -> None:
    args: dict[str, object] = {"ruleset": "medina-v2", "players": 4, "seed": 1} | kwargs
    with pytest.raises(error, match=words):
        new_game(**args)  # type: ignore[arg-type]
    assert issubclass(error, ValueError)


def test_v2_opening_history() -> None:
    s = new_game("medina-v2", 4, seed=1, start_seat=3)
    assert [(e.kind, e.seat, e.count) for e in s.events] == [(EventKind.TURN_STARTED, 3, 1)]
