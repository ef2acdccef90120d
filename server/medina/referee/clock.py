"""The clocks of a match, in one unit: integer nanoseconds of the event loop's monotonic clock.

Everything the referee times lives here: a seat's bank (``SeatClock``: the allowance for its
next decision, the bank with its increment, the first decision's extra time), the decision
it is waiting for (``DecisionClock``: when the allowance started and runs out, the grace,
the wait for the transport's write, the excuse for the referee's own lateness, the time a
reply is charged), and the plain deadlines of connecting and reconnecting (``after``).

Why nanoseconds: deadlines are instants on the loop's clock (``time.monotonic``, which
``loop.time()`` reads in float seconds); milliseconds would put them on a 1 ms grid and move
both the timer and the charge by up to a millisecond, where the lateness tolerance is 2 ms.
Integers keep the arithmetic exact (no float residue when a time is floored to whole
milliseconds), and every setting, given in milliseconds, is exact in nanoseconds.
Milliseconds appear only where the protocol and the record speak them (``ClockView``,
``DecisionEntry.time_ms``): ``ms`` and the ``*_ms`` properties convert at that edge, and
``ns``/``loop_time`` convert at the loop's (signals' times, timers).
"""

from __future__ import annotations

from dataclasses import dataclass

from .config import TimeControl

NS_PER_MS = 1_000_000
NS_PER_S = 1_000_000_000

#: Least extra wait for a transport to report a request's write (see ``DecisionClock``).
WRITE_WAIT_MIN_NS = 1 * NS_PER_S
#: How late the referee may notice a decision's deadline before it doubts the timeout: a
#: loop that was busy past the deadline may hold a reply that reached the server in time but
#: has not yet come through the transport (see ``DecisionClock.excuse_lateness``).
LAG_TOLERANCE_NS = 2 * NS_PER_MS


def ns(loop_seconds: float) -> int:
    """A time of the event loop (``loop.time()``, a signal's ``at``) in nanoseconds."""
    return round(loop_seconds * NS_PER_S)


def loop_time(at_ns: int) -> float:
    """A time in nanoseconds as the event loop's float seconds (for ``loop.call_at``)."""
    return at_ns / NS_PER_S


def ms(duration_ns: int) -> int:
    """Whole milliseconds in a duration (floored; a negative one is 0)."""
    return max(0, duration_ns // NS_PER_MS)


def after(start_ns: int, duration_ms: int) -> int:
    """The instant ``duration_ms`` (a setting) after ``start_ns``."""
    return start_ns + duration_ms * NS_PER_MS


def seconds_of_ms(duration_ms: int) -> float:
    """A setting in milliseconds as float seconds (for messages that speak seconds)."""
    return duration_ms / 1000


def seconds(duration_ns: int) -> float:
    """A duration in float seconds (for measurements kept in seconds)."""
    return duration_ns / NS_PER_S


@dataclass(slots=True)
class SeatClock:
    """The bank and history of one seat, measured by the server."""

    control: TimeControl
    bank_ns: int
    decisions: int = 0
    last_reply_ns: int | None = None  # None until the seat's first decision is settled

    @classmethod
    def start(cls, control: TimeControl) -> SeatClock:
        """A fresh clock with the starting bank."""
        return cls(control=control, bank_ns=control.bank_ms * NS_PER_MS)

    @property
    def bank_ms(self) -> int:
        """The bank left, in the protocol's milliseconds."""
        return ms(self.bank_ns)

    @property
    def last_reply_ms(self) -> int | None:
        """The time charged for the seat's previous decision (None before its first)."""
        return None if self.last_reply_ns is None else ms(self.last_reply_ns)

    def allowed_ns(self) -> int:
        """Time allowed for the next decision: min(limit, bank), plus the first-decision extra.

        A zero bank setting means "no bank": only the per-decision limit applies.
        """
        c = self.control
        limit = c.decision_ms * NS_PER_MS
        base = min(limit, self.bank_ns) if c.bank_ms else limit
        return base + (c.first_decision_extra_ms * NS_PER_MS if self.decisions == 0 else 0)

    def allowed_ms(self) -> int:
        """``allowed_ns`` in milliseconds."""
        return ms(self.allowed_ns())

    def charge(self, used_ns: int) -> None:
        """Settle a decision that took ``used_ns``: it becomes the last reply's time, the bank
        pays it (never below zero) and earns the increment. The first decision's extra time
        is free."""
        c = self.control
        self.last_reply_ns = used_ns
        if self.decisions == 0:
            used_ns = max(0, used_ns - c.first_decision_extra_ms * NS_PER_MS)
        if c.bank_ms:
            self.bank_ns = max(0, self.bank_ns - used_ns) + c.increment_ms * NS_PER_MS
        self.decisions += 1


@dataclass(slots=True)
class DecisionClock:
    """The clock of the decision a match is waiting for: when the seat's allowance started
    and when it (and the referee's patience) runs out.

    The allowance starts once the request is handed to the transport (``start``); a
    transport that will report the request's write (``awaiting_write``) restarts it from the
    write (``written``), so a server backlog is never charged to the bot, and until then the
    referee also waits for the write, another allowance at least ``WRITE_WAIT_MIN_NS``.
    """

    seat: int
    request_id: int
    allowed_ns: int
    grace_ns: int
    sent_at_ns: int = 0  # set once the request is out
    #: The transport will report the request's write (the clock then restarts from it).
    awaiting_write: bool = False
    #: Extra wait granted because the referee's own loop noticed the deadline late.
    lag_ns: int = 0

    @classmethod
    def for_seat(cls, seat: int, request_id: int, clock: SeatClock) -> DecisionClock:
        """The clock of ``seat``'s next decision: its allowance and the match's grace."""
        return cls(seat, request_id, clock.allowed_ns(), clock.control.grace_ms * NS_PER_MS)

    def start(self, now_ns: int, awaiting_write: bool) -> None:
        """The request is out (handed to the transport) at ``now_ns``."""
        self.awaiting_write = awaiting_write
        self.sent_at_ns = now_ns

    def written(self, at_ns: int) -> None:
        """The transport reports the request written at ``at_ns``: the allowance runs from
        then (never from before the request was handed over: queueing is the server's)."""
        self.awaiting_write = False
        self.sent_at_ns = max(self.sent_at_ns, at_ns)

    @property
    def deadline_ns(self) -> int:
        """When the seat's allowance runs out."""
        return self.sent_at_ns + self.allowed_ns

    @property
    def hard_deadline_ns(self) -> int:
        """When the referee stops waiting: the allowance, the grace, any excused lateness,
        and while the write is still to come, another allowance for it (at least
        ``WRITE_WAIT_MIN_NS``)."""
        end = self.sent_at_ns + self.allowed_ns + self.grace_ns + self.lag_ns
        if self.awaiting_write:
            end += max(self.allowed_ns, WRITE_WAIT_MIN_NS)
        return end

    def excuse_lateness(self, late_ns: int) -> bool:
        """Whether the referee, noticing the hard deadline ``late_ns`` after it passed,
        waits longer. Its loop was busy when the deadline passed, so a reply that reached the
        server in time may not have come through the transport yet: the seat is not timed
        out for the server's lateness. The wait is extended as long again, at most one more
        allowance (or ``WRITE_WAIT_MIN_NS``) in all."""
        if late_ns <= LAG_TOLERANCE_NS or self.lag_ns >= max(self.allowed_ns, WRITE_WAIT_MIN_NS):
            return False
        self.lag_ns += 2 * late_ns
        return True

    def time_left_ms(self, now_ns: int) -> int:
        """What is left of the allowance at ``now_ns``, in the protocol's milliseconds."""
        return ms(self.deadline_ns - now_ns)

    def used_ns(self, at_ns: int) -> int:
        """The time the decision took until ``at_ns``, in whole milliseconds (as the record
        keeps it and the bank is charged)."""
        return ms(at_ns - self.sent_at_ns) * NS_PER_MS

    def reply_used_ns(self, received_at_ns: int) -> int:
        """The time charged for a reply received at ``received_at_ns``: ``used_ns``, but a
        reply taken in the wait the referee's own lateness bought may have reached the server
        in time, so it is charged at most the allowance."""
        used = self.used_ns(received_at_ns)
        if self.lag_ns:
            used = min(used, ms(self.allowed_ns) * NS_PER_MS)
        return used
