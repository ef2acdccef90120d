"""The game state: one mutable-by-construction object that ``apply`` copies, never mutates."""

from __future__ import annotations

from enum import IntEnum
from typing import TYPE_CHECKING

from .geometry import Mask, Square
from .types import Event, Palace, Supply
from .variants import Ruleset

if TYPE_CHECKING:
    from .movegen import LegalMoves
    from .scoring import Breakdown

# Per-seat supply slots in GameState.supply (seat * SLOTS + slot).
STABLES = 4
MERCHANTS = 5
WALLS = 6
NEUTRALS = 7
SLOTS = 8


class Phase(IntEnum):
    """Where the game is. Values match the protobuf enum ``Phase``."""

    START_MERCHANT = 1  # [v1, v1-2p] the starting player places the start merchant
    PLACING = 2
    OVER = 3


class GameState:
    """Everything about one game. Treat as immutable: ``apply_action`` returns a copy.

    ``copy()`` is cheap (a few list copies), so search bots can branch freely.
    The event history is shared between branches and copied only when two
    branches both append to it.
    """

    __slots__ = (
        "_events",
        "arms",
        "blocking",
        "buildings",
        "decisions",
        "exhausted",
        "legal_cache",
        "merchants",
        "n_events",
        "next_pid",
        "palace_tiles",
        "palaces",
        "phase",
        "placed",
        "ply",
        "purple_claims",
        "quota",
        "revealed",
        "roofs",
        "rules",
        "score_cache",
        "seed",
        "stables",
        "start_seat",
        "street",
        "supply",
        "tea",
        "tea_pool",
        "to_move",
        "tower_merchants",
        "tower_tiles",
        "turn",
        "turn_colours",
        "turn_roofs",
        "walls",
        "well",
        "well_bonus",
        "well_ring",
    )

    rules: Ruleset
    seed: int
    start_seat: int
    buildings: list[Mask]  # per palace colour, on the board
    stables: Mask
    merchants: Mask
    walls: Mask
    well: Square  # -1 when the ruleset has no well
    well_ring: Mask  # well and the 8 squares touching it
    well_bonus: Mask  # the 4 squares two steps straight out from the well
    palaces: tuple[Palace, ...]  # shared with the states before until one changes
    next_pid: int
    street: Mask  # the current street
    arms: list[Mask]  # walls per tower index
    supply: list[int]  # seat * SLOTS + (colour 0..3 | STABLES | MERCHANTS | WALLS | NEUTRALS)
    roofs: list[int]  # per seat: palace colours still claimable with own/scoring rooftops
    blocking: list[int]  # per seat [v1-2p]: colours still claimable with blocking rooftops
    tea: list[int]
    tea_pool: int
    purple_claims: int
    palace_tiles: list[int]  # holder seat per palace colour, NOBODY at the board edge
    tower_tiles: list[int]  # holder seat per tower index
    tower_merchants: list[int]  # merchants still on each tower tile
    exhausted: int  # mask of exhausted palace colours
    revealed: int  # mask of seats whose supply is public [v1-2p]
    phase: Phase
    to_move: int
    turn: int  # global turn index, passes included
    quota: int
    placed: int  # placements made in the current turn
    turn_colours: int  # [v1-2p] building colours placed this turn
    turn_roofs: int  # rooftop kinds placed this turn (bit = ActionKind)
    ply: int  # placements made in the game (palace-tile timing)
    decisions: int  # decisions taken in the game
    _events: list[Event]
    n_events: int
    legal_cache: LegalMoves | None
    #: ``scoring.breakdowns`` of this state once asked (each observation of a decision asks
    #: for it, one per seat); a copy starts without, as every change is made to a copy.
    score_cache: tuple[Breakdown, ...] | None

    @property
    def players(self) -> int:
        """Number of seats."""
        return self.rules.players

    @property
    def over(self) -> bool:
        """Whether the game has ended."""
        return self.phase is Phase.OVER

    @property
    def events(self) -> list[Event]:
        """The public history so far (a fresh list; do not mutate the state through it)."""
        return self._events[: self.n_events]

    def events_since(self, index: int) -> list[Event]:
        """Public history entries from position ``index`` on."""
        return self._events[index : self.n_events]

    def emit(self, event: Event) -> None:
        """Append to the history, copying it first if another branch appended."""
        if len(self._events) != self.n_events:
            self._events = self._events[: self.n_events]
        self._events.append(event)
        self.n_events += 1

    def supply_of(self, seat: int) -> Supply:
        """The exact supply of ``seat``."""
        b = seat * SLOTS
        s = self.supply
        return Supply(
            buildings=(s[b], s[b + 1], s[b + 2], s[b + 3]),
            rooftops=self.roofs[seat],
            neutral=s[b + NEUTRALS],
            blocking=self.blocking[seat],
            stables=s[b + STABLES],
            merchants=s[b + MERCHANTS],
            walls=s[b + WALLS],
        )

    def pieces_left(self, seat: int) -> int:
        """How many pieces ``seat`` still holds (rooftops included)."""
        b = seat * SLOTS
        return (
            sum(self.supply[b : b + SLOTS])
            + self.roofs[seat].bit_count()
            + self.blocking[seat].bit_count()
        )

    def palace_at(self, sq: Square) -> Palace | None:
        """The palace with a building or stable on ``sq``, if any."""
        bit = 1 << sq
        for p in self.palaces:
            if (p.buildings | p.stables) & bit:
                return p
        return None

    def copy(self) -> GameState:
        """A cheap independent copy (the history is shared copy-on-write)."""
        t = _new(GameState)
        t.rules = self.rules
        t.seed = self.seed
        t.start_seat = self.start_seat
        t.buildings = self.buildings[:]
        t.stables = self.stables
        t.merchants = self.merchants
        t.walls = self.walls
        t.well = self.well
        t.well_ring = self.well_ring
        t.well_bonus = self.well_bonus
        t.palaces = self.palaces  # a tuple: a change makes a new one (with_palace)
        t.next_pid = self.next_pid
        t.street = self.street
        t.arms = self.arms[:]
        t.supply = self.supply[:]
        t.roofs = self.roofs[:]
        t.blocking = self.blocking[:]
        t.tea = self.tea[:]
        t.tea_pool = self.tea_pool
        t.purple_claims = self.purple_claims
        t.palace_tiles = self.palace_tiles[:]
        t.tower_tiles = self.tower_tiles[:]
        t.tower_merchants = self.tower_merchants[:]
        t.exhausted = self.exhausted
        t.revealed = self.revealed
        t.phase = self.phase
        t.to_move = self.to_move
        t.turn = self.turn
        t.quota = self.quota
        t.placed = self.placed
        t.turn_colours = self.turn_colours
        t.turn_roofs = self.turn_roofs
        t.ply = self.ply
        t.decisions = self.decisions
        t._events = self._events
        t.n_events = self.n_events
        t.legal_cache = None
        t.score_cache = None
        return t


def with_palace(palaces: tuple[Palace, ...], index: int, p: Palace) -> tuple[Palace, ...]:
    """``palaces`` with the one at ``index`` replaced by ``p`` (a new tuple: the old one
    may be shared with earlier states)."""
    return (*palaces[:index], p, *palaces[index + 1 :])


_new = object.__new__
