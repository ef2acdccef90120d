"""A static evaluation of a Medina position for one seat: the greedy bot's judgement, and
the base of the champion's (``champion.champion_values``), which the search levels share.
Engine state in, a number out; no search here.

The value is the seat's score now plus what it can expect from what is still open, minus the
same for its strongest opponent:

* **score** of claimed palaces as ``result`` counts it (buildings, stables, walls and
  merchants next to it, well bonus); palace and tower tiles count only in part until late in
  the game, since a larger palace or a later contact can still take them;
* **open palaces**: an unclaimed palace is worth its would-be score (plus its colour's tile
  when it would be the largest) to whoever claims it first. While the seat's turn goes on and
  it holds a rooftop of that colour, that is the seat; otherwise the first opponent in turn
  order who can claim it gets it (a palace left open at the end of a turn is a gift);
* **reserves**: an unplaced rooftop is worth what a palace claimed later should bring,
  shrinking as the game runs out, so a rooftop is not wasted on a small palace early; tea
  tiles keep a little value (a tea break saves a bad second placement).
"""

from __future__ import annotations

from dataclasses import dataclass

from medina.engine import ActionKind, GameState
from medina.engine.state import NEUTRALS, SLOTS

_ROOFTOP = int(ActionKind.ROOFTOP)
_BLOCKING = int(ActionKind.BLOCKING_ROOFTOP)


@dataclass(frozen=True, slots=True)
class Weights:
    """Tunable weights of the evaluation (the defaults are the greedy bot's)."""

    tile_early: float = 0.4  # share of a tile's value counted at the start of the game
    open_mine: float = 0.9  # share of an open palace's value the seat keeps in its own turn
    open_gift: float = 0.8  # share of an open palace's value an opponent will take
    rooftop_reserve: float = 10.0  # value of an unplaced own rooftop at the start
    blocking_reserve: float = 1.5  # [v1-2p] value of an unplaced blocking rooftop at the start
    neutral_reserve: float = 1.0  # [v2 2-3p] value of an unplaced neutral rooftop
    tea: float = 0.6  # value of a tea tile held
    best_opponent: float = 0.6  # weight of the best opponent (the rest: their mean)


DEFAULT_WEIGHTS = Weights()


def progress(s: GameState) -> float:
    """How far the game has run, 0.0 at the start to 1.0 when no piece is left."""
    comp = s.rules.components
    per_seat = (
        4 * comp.buildings
        + comp.rooftops
        + comp.neutral
        + comp.blocking
        + comp.stables
        + comp.merchants
        + comp.walls
    )
    left = sum(s.pieces_left(seat) for seat in range(s.players))
    total = per_seat * s.players
    return max(0.0, min(1.0, 1.0 - left / total)) if total else 1.0


def palace_value(s: GameState, buildings: int, stables: int) -> int:
    """What a palace of these pieces scores its owner on the current board."""
    g = s.rules.geometry
    pieces = buildings | stables
    near = g.adj(pieces)
    return (
        pieces.bit_count()
        + (near & s.walls).bit_count()
        + (near & s.merchants).bit_count()
        + 4 * (pieces & s.well_bonus).bit_count()
    )


def seat_values(s: GameState, weights: Weights = DEFAULT_WEIGHTS) -> list[float]:
    """Every seat's value in ``s`` (score now plus expected gains), before the comparison."""
    n = s.players
    done = s.over
    late = 1.0 if done else progress(s)
    tile_w = 1.0 if done else weights.tile_early + (1.0 - weights.tile_early) * late
    values = [0.0] * n
    biggest = [0, 0, 0, 0]
    for p in s.palaces:
        if p.roof == _ROOFTOP:
            values[p.owner] += palace_value(s, p.buildings, p.stables)
        if p.roof and p.roof != _BLOCKING:
            biggest[p.colour] = max(biggest[p.colour], p.size)
    for colour, holder in enumerate(s.palace_tiles):
        if holder >= 0:
            values[holder] += (colour + 1) * tile_w
    for tower, holder in enumerate(s.tower_tiles):
        if holder >= 0:
            values[holder] += (tower + 1) * tile_w
    if done:
        return values
    reserve = 1.0 - late
    _open_palaces(s, values, biggest, tile_w, reserve * weights.rooftop_reserve, weights)
    two_colour = s.rules.two_colour_roofs
    for seat in range(n):
        values[seat] += reserve * weights.rooftop_reserve * s.roofs[seat].bit_count()
        if two_colour:
            values[seat] += reserve * weights.blocking_reserve * s.blocking[seat].bit_count()
        values[seat] += reserve * weights.neutral_reserve * s.supply[seat * SLOTS + NEUTRALS]
        values[seat] += weights.tea * s.tea[seat]
    return values


def _open_palaces(
    s: GameState,
    values: list[float],
    biggest: list[int],
    tile_w: float,
    reserve: float,
    weights: Weights,
) -> None:
    """Add each unclaimed palace's value to the seat expected to claim it, less the
    rooftop it costs (its reserve value is counted apart)."""
    n = s.players
    mover = s.to_move
    mine_open = s.placed < s.quota  # the mover's turn goes on (the state is a decision)
    best_gift = [0.0] * n
    for p in s.palaces:
        if p.roof:
            continue
        bit = 1 << p.colour
        value = float(palace_value(s, p.buildings, p.stables))
        if p.size > biggest[p.colour]:
            value += (p.colour + 1) * tile_w
        for k in range(n):
            seat = (mover + k) % n
            if s.roofs[seat] & bit:
                share = weights.open_mine if k == 0 and mine_open else weights.open_gift
                best_gift[seat] = max(best_gift[seat], share * value - reserve)
                break
    for seat in range(n):
        values[seat] += best_gift[seat]


def evaluate(s: GameState, seat: int, weights: Weights = DEFAULT_WEIGHTS) -> float:
    """The value of ``s`` for ``seat``: its value minus a blend of the best and the mean
    of the opponents' values (higher is better)."""
    values = seat_values(s, weights)
    mine = values[seat]
    others = [v for i, v in enumerate(values) if i != seat]
    if not others:
        return mine
    best = max(others)
    mean = sum(others) / len(others)
    w = weights.best_opponent
    return mine - (w * best + (1.0 - w) * mean)
