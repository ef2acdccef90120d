"""Setting up a game from (ruleset, players, seed) and optional overrides."""

from __future__ import annotations

import random
from collections.abc import Sequence

from .errors import SetupError
from .geometry import Square, squares
from .movegen import decide, placements
from .notation import square_name
from .state import SLOTS, GameState, Phase
from .types import NOBODY, Event, EventKind, Supply
from .variants import Ruleset, get_ruleset, with_colours


def new_game(
    ruleset: str,
    players: int,
    seed: int,
    *,
    start_seat: int = 0,
    well: Square | None = None,
    start_merchant: Square | None = None,
    rooftop_colours: Sequence[int] | None = None,
    blocking_colours: Sequence[int] | None = None,
) -> GameState:
    """A new game; the same arguments always give the same game.

    [v2] The well and the start merchant are drawn from ``random.Random(seed)``
    over the inner city in square order (docs/rules.md 12) unless given. The seats' rooftop
    colours are the ruleset's unless given (``variants.with_colours``).

    >>> s = new_game("medina-v2", 4, seed=1)
    >>> s.to_move, s.quota
    (0, 1)
    """
    rules = get_ruleset(ruleset, players)
    if rooftop_colours is not None or blocking_colours is not None:
        rules = with_colours(rules, rooftop_colours, blocking_colours)
    if not 0 <= start_seat < players:
        raise SetupError(f"start seat {start_seat} is not a seat of a {players}-player game")
    s = empty_state(rules, seed, start_seat)
    if rules.well:
        _place_well_and_merchant(s, random.Random(seed), well, start_merchant)
    elif well is not None or start_merchant is not None:
        raise SetupError(
            f"{rules.name} has no well and its start merchant is a decision of the starting player"
        )
    if rules.start_merchant_decision:
        s.phase = Phase.START_MERCHANT
        s.to_move = start_seat
        if rules.two_colour_roofs:
            s.quota = rules.quota(0)
            s.turn = 1
            s.emit(Event(EventKind.TURN_STARTED, seat=start_seat, count=s.quota))
        return s
    s.to_move = start_seat
    s.quota = rules.quota(0)
    s.turn = 1
    s.emit(Event(EventKind.TURN_STARTED, seat=start_seat, count=s.quota))
    s.legal_cache = decide(s, placements(s, start_seat))
    return s


def empty_state(rules: Ruleset, seed: int, start_seat: int) -> GameState:
    """A state with an empty board and full supplies; no turn has started."""
    c = rules.components
    n = rules.players
    s = GameState.__new__(GameState)
    s.rules = rules
    s.seed = seed
    s.start_seat = start_seat
    s.buildings = [0, 0, 0, 0]
    s.stables = 0
    s.merchants = 0
    s.walls = 0
    s.well = -1
    s.well_ring = 0
    s.well_bonus = 0
    s.palaces = ()
    s.next_pid = 0
    s.street = 0
    s.arms = [0, 0, 0, 0]
    per_seat = [c.buildings] * 4 + [c.stables, c.merchants, c.walls, c.neutral]
    assert len(per_seat) == SLOTS
    s.supply = per_seat * n
    s.roofs = [0b1111] * n
    s.blocking = [0b1111 if c.blocking else 0] * n
    s.tea = [0] * n
    s.tea_pool = 6 if rules.tea else 0
    s.purple_claims = 0
    s.palace_tiles = [NOBODY] * 4
    s.tower_tiles = [NOBODY] * 4
    s.tower_merchants = list(rules.tower_merchants)
    s.exhausted = 0
    s.revealed = 0
    s.phase = Phase.PLACING
    s.to_move = start_seat
    s.turn = 0
    s.quota = 0
    s.placed = 0
    s.turn_colours = 0
    s.turn_roofs = 0
    s.ply = 0
    s.decisions = 0
    s._events = []
    s.n_events = 0
    s.legal_cache = None
    s.score_cache = None
    return s


def _place_well_and_merchant(
    s: GameState, rng: random.Random, well: Square | None, merchant: Square | None
) -> None:
    g = s.rules.geometry
    inner = squares(g.inner)
    well_sq = rng.choice(inner) if well is None else _check_inner(s, "well", well)
    rest = [sq for sq in inner if sq != well_sq]
    merchant_sq = (
        rng.choice(rest) if merchant is None else _check_inner(s, "start merchant", merchant)
    )
    if merchant_sq == well_sq:
        raise SetupError(
            f"the start merchant cannot share the well's square {square_name(g, well_sq)}"
        )
    put_well(s, well_sq)
    s.merchants = 1 << merchant_sq
    s.street = s.merchants


def put_well(s: GameState, well_sq: Square) -> None:
    """Put the well on ``well_sq`` with its ring and its four bonus squares (D1)."""
    g = s.rules.geometry
    s.well = well_sq
    s.well_ring = g.touching[well_sq]
    row, col = g.row_col(well_sq)
    bonus = 0
    for dr, dc in ((-2, 0), (2, 0), (0, -2), (0, 2)):
        r, cc = row + dr, col + dc
        if 0 <= r < g.rows and 0 <= cc < g.cols:
            bonus |= 1 << g.square(r, cc)
    s.well_bonus = bonus & g.city


def _check_inner(s: GameState, what: str, sq: Square) -> Square:
    g = s.rules.geometry
    if not (0 <= sq < g.size and (g.inner >> sq) & 1):
        where = square_name(g, sq) if 0 <= sq < g.size else str(sq)
        raise SetupError(f"the {what} must go on an inner-city square; {where} is not one")
    return sq


def initial_supplies(rules: Ruleset) -> tuple[Supply, ...]:
    """Every seat's supply before the first placement (the ruleset's pieces), in seat order."""
    s = empty_state(rules, 0, 0)
    return tuple(s.supply_of(p) for p in range(rules.players))
