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
    a seat's score is reused when nothing that scores it differs between the two, which
    holds for every seat after most placements (they touch no claimed palace, wall,
    merchant or tile) and for all but one or two seats after the others."""
    cached = s.score_cache
    if cached is not None:
        return cached
    if known is None or known.score_cache is None:
        s.score_cache = cached = _breakdowns(s)
    else:
        kept = known.score_cache
        seats = _seats_changed(s, known)
        s.score_cache = cached = kept if not seats else _breakdowns(s, seats, kept)
    return cached


#: ``Palace.scores`` is ``roof == _SCORING_ROOF``, inlined below: a property reading an enum
#: member costs more than the rest of the test.
_SCORING_ROOF = int(ActionKind.ROOFTOP)
#: A mask of seats naming every seat.
ALL_SEATS = -1


def _seats_changed(a: GameState, b: GameState) -> int:
    """The mask of the seats whose score may differ between ``a`` and ``b``: a seat's score
    is the same when its tiles are, the well-bonus squares are, its scoring palaces are (the
    same objects, as palaces are immutable and replaced on change, in the same order) and so
    are the walls and merchants in their zones (a wall or merchant placed away from every
    scoring palace changes no score). ``ALL_SEATS`` when the two are not comparable."""
    if a.rules is not b.rules or a.well_bonus != b.well_bonus:
        return ALL_SEATS
    seats = 0
    for tiles_a, tiles_b in ((a.palace_tiles, b.palace_tiles), (a.tower_tiles, b.tower_tiles)):
        if tiles_a != tiles_b:
            for x, y in zip(tiles_a, tiles_b, strict=True):
                if x != y:  # a tile that changed hands: its holders', before and after
                    seats |= (1 << x if x >= 0 else 0) | (1 << y if y >= 0 else 0)
    changed = (a.walls ^ b.walls) | (a.merchants ^ b.merchants)
    pa, pb = a.palaces, b.palaces
    if pa is pb:  # a wall, a merchant or a tea break: the states share their palaces
        if changed:
            for p in pa:
                if changed & p.zone and p.roof == _SCORING_ROOF:
                    seats |= 1 << p.owner
        return seats
    if len(pa) < len(pb):
        pa, pb = pb, pa
    for p, q in zip(pa, pb, strict=False):  # pa may be the longer
        if p is not q:
            if p.roof == _SCORING_ROOF:
                seats |= 1 << p.owner
            if q.roof == _SCORING_ROOF:
                seats |= 1 << q.owner
        elif changed and changed & p.zone and p.roof == _SCORING_ROOF:
            seats |= 1 << p.owner
    for p in pa[len(pb) :]:  # palaces only one of the two has
        if p.roof == _SCORING_ROOF:
            seats |= 1 << p.owner
    return seats


# Scores already computed, found by identity (see memo.py): a new state differs from its
# parent in one or two palaces, and a key of big bitboards costs more to hash than scoring.
#: (id(palace), walls near, merchants near, well-bonus squares) -> its score
_PALACES: IdentityMemo[PalaceScore] = IdentityMemo()
#: (palace tiles, tower tiles, id of each palace score) -> the seat's breakdown
_SEATS: IdentityMemo[Breakdown] = IdentityMemo()


def _breakdowns(
    s: GameState, seats: int = ALL_SEATS, kept: tuple[Breakdown, ...] = ()
) -> tuple[Breakdown, ...]:
    """Every seat's breakdown: computed for the seats in the mask ``seats``, the others'
    taken from ``kept``."""
    players = s.players
    owned: list[list[PalaceScore]] = [[] for _ in range(players)]
    walls, merchants, well = s.walls, s.merchants, s.well_bonus
    adj = s.rules.geometry.adj
    get, put = _PALACES.get, _PALACES.put
    for p in s.palaces:
        # Palace.scores, inlined: hot. A scoring palace's owner is a seat.
        if p.roof == _SCORING_ROOF and seats >> p.owner & 1:
            zone = p.zone
            w, m = walls & zone, merchants & zone
            key = (id(p), w, m, well)
            owned[p.owner].append(get(key) or put(key, p, _palace_score(p, w, m, well, adj)))
    palace_tiles = [0] * players
    for c, h in enumerate(s.palace_tiles):
        if h >= 0:
            palace_tiles[h] += c + 1
    tower_tiles = [0] * players
    for t, h in enumerate(s.tower_tiles):
        if h >= 0:
            tower_tiles[h] += t + 1
    if kept:  # a seat rescored after a change: its palaces' scores are new, so no memo
        return tuple(
            [
                _summed(owned[i], palace_tiles[i], tower_tiles[i]) if seats >> i & 1 else kept[i]
                for i in range(players)
            ]
        )
    return tuple([_breakdown(owned[i], palace_tiles[i], tower_tiles[i]) for i in range(players)])


def _breakdown(palaces: list[PalaceScore], palace_tiles: int, tower_tiles: int) -> Breakdown:
    """A seat's breakdown from its palaces' scores and its tiles' points, kept by the
    scores' identity (every seat's score of a state computed afresh is mostly the last's)."""
    key = (palace_tiles, tower_tiles, *map(id, palaces))
    kept = _SEATS.get(key)
    if kept is not None:
        return kept
    made = _summed(palaces, palace_tiles, tower_tiles)
    return _SEATS.put(key, made.palaces, made)


def _summed(palaces: list[PalaceScore], palace_tiles: int, tower_tiles: int) -> Breakdown:
    """A seat's breakdown from its palaces' scores and its tiles' points."""
    buildings = stables = walls = merchants = well_bonus = 0
    for p in palaces:
        buildings += p.buildings
        stables += p.stables
        walls += p.walls
        merchants += p.merchants
        well_bonus += p.well_bonus
    return Breakdown(
        buildings=buildings,
        stables=stables,
        walls=walls,
        merchants=merchants,
        well_bonus=well_bonus,
        palace_tiles=palace_tiles,
        tower_tiles=tower_tiles,
        palaces=tuple(palaces),
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
