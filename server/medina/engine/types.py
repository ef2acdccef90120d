"""Plain data of the game: action and event kinds, actions, events, palaces and supplies."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from .geometry import Mask, Square

#: Owner value of an unclaimed palace, and of a palace under a neutral rooftop.
UNCLAIMED = -1
NEUTRAL = -2
#: "Nobody": a tile at the board edge, an event without a seat.
NOBODY = -1


class ActionKind(IntEnum):
    """What a decision does. Values match the protobuf enum ``ActionKind``."""

    BUILDING = 1  # a building of ``colour`` (palace colour 0..3)
    ROOFTOP = 2  # own rooftop (v1-2p: scoring rooftop) on the palace at ``square``
    NEUTRAL_ROOFTOP = 3  # [v2, 2-3 players] neutral rooftop on the palace at ``square``
    BLOCKING_ROOFTOP = 4  # [v1-2p] blocking rooftop on the palace at ``square``
    STABLE = 5
    MERCHANT = 6
    WALL = 7
    START_MERCHANT = 8  # [v1, v1-2p] the start merchant, not from the supply
    TEA = 9  # [v2] tea break: return a tea tile and end the turn


ROOF_KINDS = frozenset(
    {ActionKind.ROOFTOP, ActionKind.NEUTRAL_ROOFTOP, ActionKind.BLOCKING_ROOFTOP}
)


@dataclass(frozen=True, slots=True)
class Action:
    """One decision: a placement, the start merchant or a tea break.

    ``colour`` is the palace colour of a building and -1 otherwise; ``square``
    is -1 for a tea break. A rooftop may name any building square of its palace.
    """

    kind: ActionKind
    square: Square = -1
    colour: int = -1


class EventKind(IntEnum):
    """Kinds of public history entries. Values match the protobuf enum ``EventKind``."""

    TURN_STARTED = 1  # seat, count = quota
    PLACED = 2  # seat, piece, square, colour (building colour or claimed palace colour)
    PASSED = 3  # seat had no legal placement at the start of the turn
    TEA_SPENT = 4  # seat ended the turn with a tea break
    TEA_RECEIVED = 5  # seat (NOBODY: removed from the game), count
    PALACE_TILE = 6  # colour, source -> target (NOBODY: board edge)
    TOWER_TILE = 7  # tower index, source -> target (NOBODY: board edge)
    TOWER_MERCHANTS = 8  # tower index, target seat (NOBODY: removed), count
    COLOUR_EXHAUSTED = 9  # colour: every supply's buildings of it left the game
    ROOFTOP_REMOVED = 10  # [v1-2p] seat's blocking rooftop for colour left the game
    SUPPLY_REVEALED = 11  # [v1-2p] seat's supply is public from now on (supply)
    GAME_OVER = 12


@dataclass(frozen=True, slots=True)
class Supply:
    """A player's pieces behind the screen (and the rooftops in front of it).

    ``rooftops`` and ``blocking`` are masks of the palace colours still claimable
    with that rooftop colour (bit c = colour c); their counts are the popcounts.
    """

    buildings: tuple[int, int, int, int]
    rooftops: int
    neutral: int
    blocking: int
    stables: int
    merchants: int
    walls: int

    @property
    def total(self) -> int:
        """Pieces left, rooftops included."""
        return (
            sum(self.buildings)
            + self.rooftops.bit_count()
            + self.neutral
            + self.blocking.bit_count()
            + self.stables
            + self.merchants
            + self.walls
        )


@dataclass(frozen=True, slots=True)
class Event:
    """One public history entry; unused fields keep their defaults."""

    kind: EventKind
    seat: int = NOBODY
    piece: int = 0  # ActionKind of a placement
    square: Square = -1
    colour: int = -1
    tower: int = -1
    source: int = NOBODY
    target: int = NOBODY
    count: int = 0
    supply: Supply | None = None
    #: A placement or tea break the referee chose for the seat (a timeout, a forfeited seat).
    by_referee: bool = False


@dataclass(frozen=True, slots=True)
class Palace:
    """A palace: its buildings, stables and claim. Immutable; replaced on change.

    ``zone`` is every square touching a building or stable of it, ``reach`` the
    squares orthogonally adjacent to its buildings. ``time`` is the placement
    number of the later of its claim and its last stable (palace-tile ties).
    """

    pid: int
    colour: int
    buildings: Mask
    stables: Mask
    zone: Mask
    reach: Mask
    owner: int = UNCLAIMED  # seat, NEUTRAL, or UNCLAIMED
    roof: int = 0  # ActionKind of the rooftop, 0 while unclaimed
    roof_square: Square = -1
    time: int = 0
    towers: int = 0  # bit t: contact with tower index t made

    @property
    def claimed(self) -> bool:
        """Whether the palace carries a rooftop."""
        return self.roof != 0

    @property
    def competes(self) -> bool:
        """Whether it competes for palace and tower tiles (claimed, not blocked)."""
        return self.roof != 0 and self.roof != ActionKind.BLOCKING_ROOFTOP

    @property
    def scores(self) -> bool:
        """Whether its owner scores it (own or scoring rooftop)."""
        return self.roof == ActionKind.ROOFTOP

    @property
    def pieces(self) -> Mask:
        """Buildings and stables."""
        return self.buildings | self.stables

    @property
    def size(self) -> int:
        """Buildings plus stables."""
        return self.buildings.bit_count() + self.stables.bit_count()
