"""Final scoring from the board (docs/rules.md section 8) and shared ranks."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .memo import IdentityMemo
from .state import GameState
from .types import ActionKind, Palace


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
    # Only the walls and merchants near the palace count: its zone holds every square next
    # to it.
    return _palace_score(
        p, s.walls & p.zone, s.merchants & p.zone, s.well_bonus, s.rules.geometry.adj
    )


def _palace_score(
    p: Palace, walls: int, merchants: int, well_bonus: int, adj: Callable[[int], int]
) -> PalaceScore:
    pieces = p.buildings | p.stables
    near = adj(pieces)
    return PalaceScore(
        colour=p.colour,
        square=p.roof_square,
        buildings=p.buildings.bit_count(),
        stables=p.stables.bit_count(),
        walls=(near & walls).bit_count(),
        merchants=(near & merchants).bit_count(),
        well_bonus=4 * (well_bonus & pieces).bit_count(),
    )


def breakdown(s: GameState, seat: int) -> Breakdown:
    """The score of ``seat`` on the current board with the tiles it holds now."""
    return breakdowns(s)[seat]


def breakdowns(s: GameState, known: GameState | None = None) -> tuple[Breakdown, ...]:
    """Every seat's score on the current board, in seat order (one pass over the palaces;
    kept on the state, as every seat's observation of a decision asks for it).

    ``known``, a state whose scores were asked for before (the one observed last, say):
    its scores are reused when nothing that scores differs between the two, which holds
    after most placements (they touch no claimed palace, wall, merchant or tile)."""
    cached = s.score_cache
    if cached is not None:
        return cached
    if known is not None and known.score_cache is not None and _scores_alike(s, known):
        s.score_cache = cached = known.score_cache
    else:
        s.score_cache = cached = _breakdowns(s)
    return cached


#: ``Palace.scores`` is ``roof == _SCORING_ROOF``, inlined below: a property reading an enum
#: member costs more than the rest of the test.
_SCORING_ROOF = int(ActionKind.ROOFTOP)


def _scores_alike(a: GameState, b: GameState) -> bool:
    """Whether every input of ``_breakdowns`` is the same in ``a`` and ``b``: the tiles,
    the well-bonus squares, the scoring palaces (the same objects, as palaces are immutable
    and replaced on change, in the same order) and the walls and merchants in their zones
    (a wall or merchant placed away from every scoring palace changes no score)."""
    if not (
        a.rules is b.rules
        and a.well_bonus == b.well_bonus
        and a.palace_tiles == b.palace_tiles
        and a.tower_tiles == b.tower_tiles
    ):
        return False
    changed = (a.walls ^ b.walls) | (a.merchants ^ b.merchants)
    zones = 0
    pa, pb = a.palaces, b.palaces
    if len(pa) < len(pb):
        pa, pb = pb, pa
    for i, p in enumerate(pa):
        q = pb[i] if i < len(pb) else None
        if p is not q:
            if p.roof == _SCORING_ROOF or (q is not None and q.roof == _SCORING_ROOF):
                return False
        elif changed and p.roof == _SCORING_ROOF:
            zones |= p.zone
    return not changed & zones


# Scores already computed, found by identity (see memo.py): a new state differs from its
# parent in one or two palaces, and a key of big bitboards costs more to hash than scoring.
#: (id(palace), walls near, merchants near, well-bonus squares) -> its score
_PALACES: IdentityMemo[PalaceScore] = IdentityMemo()
#: (palace tiles, tower tiles, id of each palace score) -> the seat's breakdown
_SEATS: IdentityMemo[Breakdown] = IdentityMemo()


def _breakdowns(s: GameState) -> tuple[Breakdown, ...]:
    players = s.players
    owned: list[list[PalaceScore]] = [[] for _ in range(players)]
    walls, merchants, well = s.walls, s.merchants, s.well_bonus
    adj = s.rules.geometry.adj
    known = _PALACES
    for p in s.palaces:
        if p.owner >= 0 and p.roof == _SCORING_ROOF:  # Palace.scores, inlined: hot
            zone = p.zone
            w, m = walls & zone, merchants & zone
            key = (id(p), w, m, well)
            score = known.get(key) or known.put(key, p, _palace_score(p, w, m, well, adj))
            owned[p.owner].append(score)
    palace_tiles = [0] * players
    for c, h in enumerate(s.palace_tiles):
        if h >= 0:
            palace_tiles[h] += c + 1
    tower_tiles = [0] * players
    for t, h in enumerate(s.tower_tiles):
        if h >= 0:
            tower_tiles[h] += t + 1
    return tuple([_breakdown(owned[i], palace_tiles[i], tower_tiles[i]) for i in range(players)])


def _breakdown(palaces: list[PalaceScore], palace_tiles: int, tower_tiles: int) -> Breakdown:
    """A seat's breakdown from its palaces' scores and its tiles' points."""
    key = (palace_tiles, tower_tiles, *map(id, palaces))
    kept = _SEATS.get(key)
    if kept is not None:
        return kept
    buildings = stables = walls = merchants = well_bonus = 0
    for p in palaces:
        buildings += p.buildings
        stables += p.stables
        walls += p.walls
        merchants += p.merchants
        well_bonus += p.well_bonus
    scored = tuple(palaces)
    made = Breakdown(
        buildings=buildings,
        stables=stables,
        walls=walls,
        merchants=merchants,
        well_bonus=well_bonus,
        palace_tiles=palace_tiles,
        tower_tiles=tower_tiles,
        palaces=scored,
    )
    return _SEATS.put(key, scored, made)


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
