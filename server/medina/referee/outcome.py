"""How a match ended for each seat: terminations, totals and ranks with forfeits last."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from medina.engine import Breakdown


class Termination(IntEnum):
    """How a seat's match ended. Values match the protobuf enum."""

    NORMAL = 1
    TIMEOUT = 2
    ILLEGAL_ACTION = 3
    DISCONNECTED = 4
    STALLED = 5
    CRASHED = 6
    ABORTED = 7
    NO_SHOW = 8  # its bot never connected before the connect deadline


@dataclass(frozen=True, slots=True)
class SeatOutcome:
    """One seat's result."""

    seat: int
    name: str
    total: int
    rank: int
    breakdown: Breakdown
    termination: Termination
    detail: str
    strikes: int


@dataclass(frozen=True, slots=True)
class MatchOutcome:
    """The result of a match: ``complete`` when the game was played to its end; otherwise it
    was aborted, or ``abandoned`` (no seat's bot ever connected: nothing was played)."""

    seats: tuple[SeatOutcome, ...]
    complete: bool
    abandoned: bool = False


def ranks_with_forfeits(totals: tuple[int, ...], forfeited: tuple[bool, ...]) -> tuple[int, ...]:
    """Ranks where every forfeited seat ranks after every seat that played on.

    Within each group, rank = 1 + seats of the group with a strictly higher total.

    >>> ranks_with_forfeits((10, 30, 20), (False, True, False))
    (2, 3, 1)
    """
    playing = sum(1 for f in forfeited if not f)
    out = []
    for t, f in zip(totals, forfeited, strict=True):
        above = sum(1 for o, g in zip(totals, forfeited, strict=True) if g == f and o > t)
        out.append(1 + above + (playing if f else 0))
    return tuple(out)
