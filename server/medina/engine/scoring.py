"""Final scoring from the board (docs/rules.md section 8) and shared ranks."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from .geometry import geometry
from .state import GameState
from .types import Palace


@dataclass(frozen=True, slots=True)
class PalaceScore:
    """What one scoring palace earns its owner."""

    colour: int
    square: int  # the square carrying the rooftop
    buildings: int
    stables: int
    walls: int
    merchants: int
    well_bonus: int

    @property
    def total(self) -> int:
        """Points of this palace."""
        return self.buildings + self.stables + self.walls + self.merchants + self.well_bonus


@dataclass(frozen=True, slots=True)
class Breakdown:
    """One player's score by category (section 8)."""

    buildings: int
    stables: int
    walls: int
    merchants: int
    well_bonus: int
    palace_tiles: int
    tower_tiles: int
    palaces: tuple[PalaceScore, ...]

    @property
    def total(self) -> int:
        """The player's total."""
        return (
            self.buildings
            + self.stables
            + self.walls
            + self.merchants
            + self.well_bonus
            + self.palace_tiles
            + self.tower_tiles
        )


@dataclass(frozen=True, slots=True)
class Result:
    """Totals, breakdowns and shared ranks of every seat."""

    totals: tuple[int, ...]
    ranks: tuple[int, ...]
    breakdowns: tuple[Breakdown, ...]


def palace_score(s: GameState, p: Palace) -> PalaceScore:
    """Points a palace would earn its owner on the current board."""
    g = s.rules.geometry
    # Only the walls and merchants near the palace count (its zone holds every square next
    # to it), so the score is cached by those: every observation scores every seat.
    return _palace_score(
        p,
        s.walls & p.zone,
        s.merchants & p.zone,
        s.well_bonus & (p.buildings | p.stables),
        g.cols,
        g.rows,
    )


@lru_cache(maxsize=4096)
def _palace_score(
    p: Palace, walls: int, merchants: int, well_bonus: int, cols: int, rows: int
) -> PalaceScore:
    near = geometry(cols, rows).adj(p.buildings | p.stables)
    return PalaceScore(
        colour=p.colour,
        square=p.roof_square,
        buildings=p.buildings.bit_count(),
        stables=p.stables.bit_count(),
        walls=(near & walls).bit_count(),
        merchants=(near & merchants).bit_count(),
        well_bonus=4 * well_bonus.bit_count(),
    )


def breakdown(s: GameState, seat: int) -> Breakdown:
    """The score of ``seat`` on the current board with the tiles it holds now."""
    return breakdowns(s)[seat]


def breakdowns(s: GameState) -> tuple[Breakdown, ...]:
    """Every seat's score on the current board, in seat order (one pass over the palaces;
    kept on the state, as every seat's observation of a decision asks for it)."""
    cached = s.score_cache
    if cached is not None:
        return cached
    s.score_cache = cached = _breakdowns(s)
    return cached


def _breakdowns(s: GameState) -> tuple[Breakdown, ...]:
    owned: list[list[PalaceScore]] = [[] for _ in range(s.players)]
    for p in s.palaces:
        if p.owner >= 0 and p.scores:
            owned[p.owner].append(palace_score(s, p))
    palace_tiles = [0] * s.players
    for c, h in enumerate(s.palace_tiles):
        if h >= 0:
            palace_tiles[h] += c + 1
    tower_tiles = [0] * s.players
    for t, h in enumerate(s.tower_tiles):
        if h >= 0:
            tower_tiles[h] += t + 1
    return tuple(
        _breakdown(tuple(owned[seat]), palace_tiles[seat], tower_tiles[seat])
        for seat in range(s.players)
    )


@lru_cache(maxsize=4096)
def _breakdown(palaces: tuple[PalaceScore, ...], palace_tiles: int, tower_tiles: int) -> Breakdown:
    """A breakdown from its palaces and tiles, cached by value: scores change a few times a
    turn, and the same ones recur in every seat's observation."""
    return Breakdown(
        buildings=sum(p.buildings for p in palaces),
        stables=sum(p.stables for p in palaces),
        walls=sum(p.walls for p in palaces),
        merchants=sum(p.merchants for p in palaces),
        well_bonus=sum(p.well_bonus for p in palaces),
        palace_tiles=palace_tiles,
        tower_tiles=tower_tiles,
        palaces=palaces,
    )


def ranks(totals: tuple[int, ...]) -> tuple[int, ...]:
    """Rank = 1 + players with a strictly higher total (docs/rules.md 12).

    >>> ranks((18, 14, 16, 18))
    (1, 4, 3, 1)
    """
    return tuple(1 + sum(1 for o in totals if o > t) for t in totals)


def result(s: GameState) -> Result:
    """Totals, breakdowns and ranks (meaningful at the end; a running score before)."""
    bds = breakdowns(s)
    totals = tuple(b.total for b in bds)
    return Result(totals=totals, ranks=ranks(totals), breakdowns=bds)
