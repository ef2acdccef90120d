"""How the referee talks to a player: the ``Seat`` it sends to, and the signals seats send back."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from medina.engine import Action, Event, LegalMoves, Observation

from .outcome import MatchOutcome, Termination
from .record import ErrorCode


@dataclass(frozen=True, slots=True)
class ClockView:
    """The clock of one decision as the seat is told it."""

    time_left_ms: int
    bank_ms: int  # bank left; 0 both without a bank and with an empty one (see has_bank)
    last_reply_ms: int | None  # None before the seat's first reply
    strikes: int
    #: Whether the match has a bank at all (``bank_ms`` 0 is then an empty bank).
    has_bank: bool = True
    #: Further timeouts the seat may take before the next one forfeits it.
    strikes_left: int = 0


@dataclass(frozen=True, slots=True)
class DecisionRequest:
    """The seat must decide. ``observation.events`` are those since its previous request."""

    request_id: int
    seat: int
    observation: Observation
    legal: LegalMoves
    clock: ClockView


@dataclass(frozen=True, slots=True)
class RejectionNotice:
    """A reply was refused; the request stays open."""

    request_id: int
    code: ErrorCode
    rule: str
    message: str
    rejections_left: int
    clock: ClockView
    #: The squares the refusal names, as data (the action's square first when it has one).
    squares: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class ForfeitNotice:
    """``seat`` forfeited: from now on the referee plays it. Every seat is told at once."""

    seat: int
    termination: Termination
    detail: str
    strikes: int


@dataclass(frozen=True, slots=True)
class MatchEnd:
    """The end of the match, with the seat's own final view (no other supply: docs/rules.md 9)."""

    outcome: MatchOutcome
    observation: Observation


class Seat(Protocol):
    """One player as the referee sees it. Methods must not block: they queue messages."""

    def request(self, request: DecisionRequest) -> bool | None:
        """Ask the seat for a decision (also re-sent after a reconnect).

        True: the transport will report when it wrote this request to the bot
        (RequestWrittenSignal), and the seat's clock starts then; otherwise it starts now.
        """

    def reject(self, notice: RejectionNotice) -> None:
        """Tell the seat its reply was refused."""

    def close_request(self, request_id: int) -> None:
        """The request is settled (accepted or timed out): later replies to it are stale."""

    def update(self, first_index: int, events: Sequence[Event]) -> bool | None:
        """New public events; ``first_index`` is the history index of ``events[0]``.

        False: nothing was sent now (the seat holds them for its next request), so the
        referee need not let the transport run before asking the next seat.
        """

    def forfeited(self, notice: ForfeitNotice) -> None:
        """A seat (this one or another) forfeited."""

    def end(self, end: MatchEnd) -> None:
        """The match is over."""


@dataclass(frozen=True, slots=True)
class ReplySignal:
    """A seat answered ``request_id``. ``action`` is None when the reply could not be decoded,
    and then ``error`` says why and ``raw`` holds the action as the bot sent it (the
    serialized protobuf ``medina.v1.Action``; None when the reply carried none), for the
    record."""

    seat: int
    request_id: int
    action: Action | None
    received_at: float  # time.monotonic() when the reply arrived
    error: str = ""
    raw: bytes | None = None


@dataclass(frozen=True, slots=True)
class ConnectionSignal:
    """A seat's bot connected, or its connection ended (``crashed``: it failed abruptly)."""

    seat: int
    connected: bool
    at: float
    bot_name: str = ""
    bot_version: str = ""
    detail: str = ""
    crashed: bool = False


@dataclass(frozen=True, slots=True)
class AbortSignal:
    """Stop the match now (organiser request or server shutdown)."""

    reason: str


@dataclass(frozen=True, slots=True)
class StartSignal:
    """The host has room for the match: it may start (sent once, after the match said its
    seats were ready; see ``Match``'s ``ready``)."""


@dataclass(frozen=True, slots=True)
class ProcessExitSignal:
    """The program playing ``seat`` exited (reported by whoever started it, for example
    ``medina-arena match``): the seat forfeits as CRASHED at once, instead of waiting out
    the connect deadline or its reconnect grace."""

    seat: int
    detail: str


@dataclass(frozen=True, slots=True)
class RequestWrittenSignal:
    """The transport wrote request ``request_id`` of ``seat`` to the bot at ``at``
    (time.monotonic()): the seat's clock for it starts then, not when the referee queued it,
    so the server's own backlog is never charged to the bot. A transport sends it once per
    request, for the first copy it writes on a live connection."""

    seat: int
    request_id: int
    at: float


Signal = (
    ReplySignal
    | ConnectionSignal
    | AbortSignal
    | ProcessExitSignal
    | RequestWrittenSignal
    | StartSignal
)


class MatchObserver(Protocol):
    """A spectator of the public side of a match."""

    def on_events(self, first_index: int, events: Sequence[Event]) -> None:
        """New public events."""

    def on_end(self, outcome: MatchOutcome) -> None:
        """The match is over."""
