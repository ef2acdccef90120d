"""One record per seat: everything the referee keeps about a seat while its match runs."""

from __future__ import annotations

from dataclasses import dataclass

from .clock import SeatClock
from .outcome import Termination
from .view import SeatView


@dataclass(slots=True)
class SeatState:
    """A seat of a running match, as the referee keeps it (``Match.seat_states``)."""

    clock: SeatClock
    connected: bool = False
    #: Whether its bot connected at some point (a later connection is a reconnection).
    ever_connected: bool = False
    #: The name and version its bot gave when it (last) connected.
    bot_name: str = ""
    bot_version: str = ""
    #: Why and how it forfeited; None while it plays.
    forfeit: tuple[Termination, str] | None = None
    strikes: int = 0
    #: Whether its connection ended abruptly (a crash rather than a goodbye).
    crashed: bool = False
    #: When its reconnect grace runs out (``clock`` nanoseconds) while it is away.
    reconnect_by_ns: int | None = None
    #: History index of its previous request, and up to which it has been sent updates.
    request_cursor: int = 0
    update_cursor: int = 0

    @property
    def forfeited(self) -> bool:
        """Whether it has forfeited (the referee plays it from now on)."""
        return self.forfeit is not None

    @property
    def lost_as(self) -> Termination:
        """How a seat whose connection went is charged when it does not come back."""
        return Termination.CRASHED if self.crashed else Termination.DISCONNECTED

    def view(self, seat: int, label: str) -> SeatView:
        """A frozen snapshot of this seat."""
        return SeatView(
            seat=seat,
            label=label,
            bot_name=self.bot_name,
            bot_version=self.bot_version,
            connected=self.connected,
            strikes=self.strikes,
            forfeit=self.forfeit,
            bank_ms=self.clock.bank_ms,
            last_reply_ms=self.clock.last_reply_ms,
            allowed_ms=self.clock.allowed_ms(),
        )


__all__ = ["SeatState"]
