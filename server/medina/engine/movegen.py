"""Legal actions of the seat to move, as bitmasks per piece kind (cheap to build and test)."""

from __future__ import annotations

from dataclasses import dataclass

from .board import empty_city, zone_overlap
from .geometry import Mask
from .rules.buildings import building_sites
from .rules.merchants import merchant_sites, start_merchant_sites
from .rules.rooftops import roof_sites
from .rules.stables import stable_sites
from .rules.walls import wall_sites
from .state import MERCHANTS, NEUTRALS, SLOTS, STABLES, WALLS, GameState, Phase
from .types import ROOF_KINDS, Action, ActionKind

_ROOF_BITS = (1 << ActionKind.ROOFTOP) | (1 << ActionKind.BLOCKING_ROOFTOP)


@dataclass(frozen=True, slots=True)
class LegalMoves:
    """Every legal action of one decision, as masks of squares per kind and colour.

    Rooftop masks hold one building square per palace; any building square of
    that palace is accepted too.
    """

    buildings: tuple[Mask, Mask, Mask, Mask]
    rooftop: Mask = 0
    neutral: Mask = 0
    blocking: Mask = 0
    stable: Mask = 0
    merchant: Mask = 0
    wall: Mask = 0
    start_merchant: Mask = 0
    tea: bool = False

    def has_placement(self) -> bool:
        """Whether any placement (not counting a tea break) is legal."""
        b = self.buildings
        return bool(
            b[0]
            | b[1]
            | b[2]
            | b[3]
            | self.rooftop
            | self.neutral
            | self.blocking
            | self.stable
            | self.merchant
            | self.wall
            | self.start_merchant
        )

    def mask(self, kind: ActionKind, colour: int = -1) -> Mask:
        """The squares legal for ``kind`` (and ``colour`` for buildings)."""
        if kind is ActionKind.BUILDING:
            return self.buildings[colour] if 0 <= colour < 4 else 0
        field = _FIELDS.get(kind)
        return int(getattr(self, field)) if field else 0

    def __len__(self) -> int:
        b = self.buildings
        return (
            b[0].bit_count()
            + b[1].bit_count()
            + b[2].bit_count()
            + b[3].bit_count()
            + self.rooftop.bit_count()
            + self.neutral.bit_count()
            + self.blocking.bit_count()
            + self.stable.bit_count()
            + self.merchant.bit_count()
            + self.wall.bit_count()
            + self.start_merchant.bit_count()
            + (1 if self.tea else 0)
        )

    def actions(self) -> list[Action]:
        """Every legal action as a list, buildings by colour first, tea break last."""
        out: list[Action] = []
        append = out.append
        b = self.buildings
        for table, m in (
            (_BUILDING_ACTIONS[0], b[0]),
            (_BUILDING_ACTIONS[1], b[1]),
            (_BUILDING_ACTIONS[2], b[2]),
            (_BUILDING_ACTIONS[3], b[3]),
            (_KIND_ACTIONS[ActionKind.ROOFTOP], self.rooftop),
            (_KIND_ACTIONS[ActionKind.NEUTRAL_ROOFTOP], self.neutral),
            (_KIND_ACTIONS[ActionKind.BLOCKING_ROOFTOP], self.blocking),
            (_KIND_ACTIONS[ActionKind.STABLE], self.stable),
            (_KIND_ACTIONS[ActionKind.MERCHANT], self.merchant),
            (_KIND_ACTIONS[ActionKind.WALL], self.wall),
            (_KIND_ACTIONS[ActionKind.START_MERCHANT], self.start_merchant),
        ):
            while m:
                low = m & -m
                append(table[low.bit_length() - 1])
                m ^= low
        if self.tea:
            append(TEA_ACTION)
        return out

    def nth(self, index: int) -> Action:
        """The ``index``-th action of ``actions()`` without building the list."""
        for c, m in enumerate(self.buildings):
            n = m.bit_count()
            if index < n:
                return _BUILDING_ACTIONS[c][_nth_square(m, index)]
            index -= n
        for kind, field in _FIELDS.items():
            m = getattr(self, field)
            n = m.bit_count()
            if index < n:
                return _KIND_ACTIONS[kind][_nth_square(m, index)]
            index -= n
        if self.tea and index == 0:
            return TEA_ACTION
        raise IndexError("legal action index out of range")


_FIELDS = {
    ActionKind.ROOFTOP: "rooftop",
    ActionKind.NEUTRAL_ROOFTOP: "neutral",
    ActionKind.BLOCKING_ROOFTOP: "blocking",
    ActionKind.STABLE: "stable",
    ActionKind.MERCHANT: "merchant",
    ActionKind.WALL: "wall",
    ActionKind.START_MERCHANT: "start_merchant",
}


#: Largest board (full grid) any ruleset uses, in squares: 18 x 13.
_MAX_SQUARES = 18 * 13
#: Interned actions (``Action`` is immutable): building actions per colour and square, and
#: the other placements per kind and square, so listing legal actions builds no objects.
_BUILDING_ACTIONS = tuple(
    tuple(Action(ActionKind.BUILDING, sq, c) for sq in range(_MAX_SQUARES)) for c in range(4)
)
_KIND_ACTIONS = {kind: tuple(Action(kind, sq) for sq in range(_MAX_SQUARES)) for kind in _FIELDS}
TEA_ACTION = Action(ActionKind.TEA)


def _nth_square(m: Mask, index: int) -> int:
    for _ in range(index):
        m &= m - 1
    return (m & -m).bit_length() - 1


NO_MOVES = LegalMoves(buildings=(0, 0, 0, 0))


def placements(s: GameState, seat: int, colours_used: int = 0, roofs_used: int = 0) -> LegalMoves:
    """Legal placements of ``seat`` given what it already placed this turn.

    ``colours_used``/``roofs_used`` only matter under per-turn limits [v1-2p].
    No forced-rooftop filter and no tea break: see ``decide``.
    """
    rules = s.rules
    empty = empty_city(s)
    sup = s.supply
    base = seat * SLOTS
    once, twice = zone_overlap(s.palaces)
    sites = building_sites(s, empty, once, twice)
    limits = rules.per_turn_limits
    bmask = [0, 0, 0, 0]
    for c in range(4):
        if sup[base + c] and not (limits and (colours_used >> c) & 1):
            bmask[c] = sites[c]
    own = s.roofs[seat]
    block = s.blocking[seat]
    if limits:
        if roofs_used & (1 << ActionKind.ROOFTOP):
            own = 0
        if roofs_used & (1 << ActionKind.BLOCKING_ROOFTOP):
            block = 0
    return LegalMoves(
        buildings=(bmask[0], bmask[1], bmask[2], bmask[3]),
        rooftop=roof_sites(s, own) if own else 0,
        neutral=roof_sites(s, 0b1111) if sup[base + NEUTRALS] else 0,
        blocking=roof_sites(s, block) if block else 0,
        stable=stable_sites(s, empty, twice) if sup[base + STABLES] else 0,
        merchant=merchant_sites(s, empty) if sup[base + MERCHANTS] else 0,
        wall=wall_sites(s) if sup[base + WALLS] else 0,
    )


def forced_rooftop_active(s: GameState, seat: int) -> bool:
    """[v1, v1-2p] Whether the forced-rooftop trigger holds for ``seat`` (docs/rules.md 5)."""
    rules = s.rules
    if not rules.forced_rooftop:
        return False
    others = [o for o in range(rules.players) if o != seat]
    if rules.two_colour_roofs:
        return all(not (s.roofs[o] | s.blocking[o]) for o in others)
    return all(not s.roofs[o] for o in others)


def decide(s: GameState, moves: LegalMoves) -> LegalMoves:
    """Apply the turn-level filters to the placements of the seat to move: the forced
    rooftop on a turn's last placement, and the tea break while the turn is open."""
    seat = s.to_move
    if (
        s.quota - s.placed == 1
        and not s.turn_roofs & _ROOF_BITS
        and (moves.rooftop or moves.blocking)
        and forced_rooftop_active(s, seat)
    ):
        return LegalMoves(buildings=(0, 0, 0, 0), rooftop=moves.rooftop, blocking=moves.blocking)
    if s.rules.tea and s.placed >= 1 and s.tea[seat] and s.placed < s.quota:
        return LegalMoves(
            buildings=moves.buildings,
            rooftop=moves.rooftop,
            neutral=moves.neutral,
            blocking=moves.blocking,
            stable=moves.stable,
            merchant=moves.merchant,
            wall=moves.wall,
            tea=True,
        )
    return moves


def legal_moves(s: GameState) -> LegalMoves:
    """The legal actions of the current decision (cached on the state)."""
    cached = s.legal_cache
    if cached is not None:
        return cached
    if s.phase is Phase.OVER:
        result = NO_MOVES
    elif s.phase is Phase.START_MERCHANT:
        result = LegalMoves(
            buildings=(0, 0, 0, 0), start_merchant=start_merchant_sites(s, empty_city(s))
        )
    else:
        result = decide(s, placements(s, s.to_move, s.turn_colours, s.turn_roofs))
    s.legal_cache = result
    return result


def legal_actions(s: GameState) -> list[Action]:
    """The legal actions of the current decision as a list (see ``LegalMoves.actions``)."""
    return legal_moves(s).actions()


__all__ = ["ROOF_KINDS", "LegalMoves", "decide", "legal_actions", "legal_moves", "placements"]
