"""What a match shows to those who read it without playing (the viewer, /metrics, the admin
API): ``Match.view()``, a frozen snapshot, typed per seat. Readers take a new view when they
want fresh figures; nothing in it changes under them."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from medina.engine import GameState

from .config import MatchSettings
from .outcome import MatchOutcome, Termination


class MatchPhase(IntEnum):
    """Lifecycle of a match. Values match the protobuf enum ``MatchState``."""

    WAITING = 1
    RUNNING = 2
    FINISHED = 3
    ABORTED = 4
    ABANDONED = 5  # no seat's bot ever connected


@dataclass(frozen=True, slots=True)
class SeatView:
    """One seat as the referee keeps it, at the moment of the view."""

    seat: int
    #: How results and viewers name the seat (``Match.seat_label``).
    label: str
    #: The name and version its bot gave when it connected ("" before).
    bot_name: str
    bot_version: str
    connected: bool
    strikes: int
    #: Why and how it forfeited; None while it plays.
    forfeit: tuple[Termination, str] | None
    #: Its clock, in the protocol's milliseconds: the bank left, the time charged for its
    #: previous decision (None before its first), and the allowance for its next one.
    bank_ms: int
    last_reply_ms: int | None
    allowed_ms: int


@dataclass(frozen=True, slots=True)
class MatchView:
    """A match at the moment of the view."""

    match_id: str
    settings: MatchSettings
    phase: MatchPhase
    #: The game as the referee has it (immutable: later moves make new states).
    state: GameState
    outcome: MatchOutcome | None
    seats: tuple[SeatView, ...]

    @property
    def labels(self) -> list[str]:
        """Every seat's label, in seat order."""
        return [s.label for s in self.seats]


__all__ = ["MatchPhase", "MatchView", "SeatView"]
