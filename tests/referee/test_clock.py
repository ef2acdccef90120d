"""Seat clocks: the time allowed per decision, the bank, the increment and the first extra."""

from __future__ import annotations

import asyncio
import socket
import time

import pytest
from medina.engine import Action
from medina.referee.clock import NS_PER_MS, SeatClock
from medina.referee.config import TimeControl
from medina.referee.record import DecisionSource
from medina.referee.seat import DecisionRequest, RequestWrittenSignal

from .fakes import FAST, LATE_S, FakeSeat, LogSink, make_match, make_settings, run


def control(
    decision: int = 5_000, bank: int = 60_000, increment: int = 1_000, extra: int = 10_000
) -> TimeControl:
    return TimeControl(
        decision_ms=decision,
        bank_ms=bank,
        increment_ms=increment,
        first_decision_extra_ms=extra,
        grace_ms=250,
    )


def test_a_fresh_clock_holds_the_starting_bank() -> None:
    clock = SeatClock.start(control(bank=42_000))
    assert (clock.bank_ms, clock.decisions, clock.last_reply_ms) == (42_000, 0, None)


# decision, bank setting, bank now, decisions taken, extra, expected allowed
ALLOWED = [
    ("first decision gets the extra", 5_000, 60_000, 60_000, 0, 10_000, 15_000),
    ("later decisions do not", 5_000, 60_000, 60_000, 1, 10_000, 5_000),
    ("bank below the limit caps it", 5_000, 60_000, 2_000, 3, 10_000, 2_000),
    ("empty bank leaves nothing", 5_000, 60_000, 0, 3, 10_000, 0),
    ("empty bank on the first decision", 5_000, 60_000, 0, 0, 10_000, 10_000),
    ("no bank: the limit alone", 5_000, 0, 0, 7, 10_000, 5_000),
    ("no bank, first decision", 5_000, 0, 0, 0, 500, 5_500),
]


@pytest.mark.parametrize(
    ("name", "decision", "bank_setting", "bank", "decisions", "extra", "expected"),
    ALLOWED,
    ids=[a[0] for a in ALLOWED],
)
def test_allowed_is_min_of_limit_and_bank_plus_first_extra(
    name: str,
    decision: int,
    bank_setting: int,
    bank: int,
    decisions: int,
    extra: int,
    expected: int,
) -> None:
    clock = SeatClock(control(decision, bank_setting, extra=extra), bank_ns=bank * NS_PER_MS)
    clock.decisions = decisions
    assert clock.allowed_ms() == expected, name


# used, bank before, decisions taken, expected bank after (increment 1000, extra 10000)
CHARGES = [
    ("a quick reply still earns the increment", 100, 60_000, 1, 60_900),
    ("the bank pays what the reply used", 4_000, 60_000, 1, 57_000),
    ("never below zero", 9_000, 2_000, 1, 1_000),
    ("the first decision's extra is free", 12_000, 60_000, 0, 59_000),
    ("within the first extra nothing is taken", 8_000, 60_000, 0, 61_000),
]


@pytest.mark.parametrize(
    ("name", "used", "bank", "decisions", "expected"), CHARGES, ids=[c[0] for c in CHARGES]
)
def test_charge(name: str, used: int, bank: int, decisions: int, expected: int) -> None:
    clock = SeatClock(control(), bank_ns=bank * NS_PER_MS, decisions=decisions)
    clock.charge(used * NS_PER_MS)
    assert clock.bank_ms == expected, name
    assert clock.decisions == decisions + 1


def test_without_increment_an_exhausted_bank_stays_at_zero() -> None:
    clock = SeatClock.start(control(decision=100, bank=150, increment=0, extra=0))
    used = []
    for _ in range(3):
        allowed = clock.allowed_ms()
        used.append(allowed)
        clock.charge(
            (allowed + 40) * NS_PER_MS
        )  # replies in the grace period cost more than allowed
    assert used == [100, 10, 0]
    assert clock.bank_ms == 0


def test_no_bank_mode_never_touches_the_bank() -> None:
    clock = SeatClock.start(control(decision=100, bank=0, increment=1_000, extra=50))
    assert clock.allowed_ms() == 150
    clock.charge(10_000 * NS_PER_MS)
    assert clock.bank_ms == 0
    assert clock.allowed_ms() == 100
    assert clock.decisions == 1


def test_the_extra_applies_once() -> None:
    clock = SeatClock.start(control(decision=1_000, bank=60_000, increment=0, extra=3_000))
    assert clock.allowed_ms() == 4_000
    clock.charge(0)
    assert clock.allowed_ms() == 1_000


class ReportsWrites(FakeSeat):
    """A seat whose transport reports the write of each request, as a network transport's
    does (the seat's clock then starts at the reported write)."""

    def request(self, request: DecisionRequest) -> bool:  # type: ignore[override]
        """Record the request as FakeSeat does; its write will be reported."""
        super().request(request)
        return True

    def written(self, request_id: int) -> None:
        """Report the write of request ``request_id`` now."""
        self.match.submit(RequestWrittenSignal(self.seat, request_id, self.now()))


class SlowTransport(ReportsWrites):
    """A seat whose transport writes each request LATE_S after the referee queued it (a
    backlogged server); the bot then answers within a few milliseconds. Its fourth request
    ends the test match."""

    def on_request(self, request: DecisionRequest) -> None:
        if self.asked > 3:
            self.match.abort("enough decisions")
            return
        loop = asyncio.get_running_loop()
        action = request.legal.nth(0)

        def written() -> None:
            self.written(request.request_id)
            loop.call_later(0.005, self.reply, request.request_id, action)

        loop.call_later(LATE_S, written)


def test_time_a_request_waited_in_the_servers_queue_is_not_charged() -> None:
    # FAST gives 30 ms per decision and 10 ms grace; every request reaches the bot LATE_S
    # (500 ms) after the referee queued it. Timed from the write, the bot is always in time.
    settings = make_settings("medina-v2", 2, time=FAST)
    slow = SlowTransport(1)
    sink = LogSink()
    outcome = run(make_match(settings, [FakeSeat(0), slow], sink).run())
    assert outcome.seats[1].strikes == 0
    timed = [d for d in sink.decisions if d.seat == 1]
    assert len(timed) == 3 and {d.source for d in timed} == {DecisionSource.BOT}
    assert all(d.time_ms < LATE_S * 1000 for d in timed)  # the queueing is not in it


class NeverWritten(ReportsWrites):
    """A transport that never gets its requests out (a bot that stopped reading its stream)."""

    def on_request(self, request: DecisionRequest) -> None:
        pass


def test_a_request_never_written_still_times_out() -> None:
    settings = make_settings("medina-v2", 2, time=FAST, max_strikes=1)
    stuck = NeverWritten(1)
    sink = LogSink()
    outcome = run(make_match(settings, [FakeSeat(0), stuck], sink).run())
    assert outcome.seats[1].termination.name == "TIMEOUT" and outcome.seats[1].strikes == 1


class WrittenLateNeverAnswers(ReportsWrites):
    """A transport that writes each request LATE_S after it was queued; the bot never answers."""

    def on_request(self, request: DecisionRequest) -> None:
        asyncio.get_running_loop().call_later(LATE_S, self.written, request.request_id)


def test_a_late_write_moves_the_deadline_to_the_write() -> None:
    # The write-wait bound (queueing + allowance + grace + 1 s) would end the wait about
    # 540 ms after the write; once the write is reported, the seat times out at its
    # allowance and grace (40 ms) from the write instead, and is charged from the write.
    settings = make_settings("medina-v2", 2, time=FAST, max_strikes=1)
    silent = WrittenLateNeverAnswers(1)
    sink = LogSink()
    outcome = run(make_match(settings, [FakeSeat(0), silent], sink).run())
    assert outcome.seats[1].termination.name == "TIMEOUT"
    timed_out = next(d for d in sink.decisions if d.seat == 1)
    assert timed_out.source is DecisionSource.FALLBACK  # its one strike forfeited it
    assert timed_out.time_ms < LATE_S * 1000


class HeldUpByTheServer(ReportsWrites):
    """The bot answers 20 ms into FAST's 30 ms, and its reply reaches the server's socket in
    time; but the server's loop is busy (a blocking call) from then until long after the
    hard deadline, and the reply comes through the transport's callbacks (two hops, as
    grpc.aio's do) only once the loop runs again. Its fourth request ends the test match."""

    def __init__(self, seat: int) -> None:
        super().__init__(seat)
        self.server_side, self.bot_side = socket.socketpair()
        self.pending: tuple[int, Action] | None = None

    def on_request(self, request: DecisionRequest) -> None:
        if self.asked > 3:
            self.match.abort("enough decisions")
            return
        loop = asyncio.get_running_loop()
        if self.asked == 1:
            loop.add_reader(self.server_side, self.readable)
        self.pending = (request.request_id, request.legal.nth(0))

        def busy_server() -> None:
            self.bot_side.send(b"r")  # the reply is in the server's socket, in time
            time.sleep(LATE_S)  # ...and the server's loop is busy well past the deadline

        loop.call_soon(self.written, request.request_id)
        loop.call_later(0.02, busy_server)

    def readable(self) -> None:
        self.server_side.recv(16)
        assert self.pending is not None
        loop = asyncio.get_running_loop()
        rid, action = self.pending
        loop.call_soon(lambda: loop.call_soon(self.reply, rid, action))

    def close(self) -> None:
        """Close both ends of the socket."""
        self.server_side.close()
        self.bot_side.close()


def test_a_reply_held_up_by_the_servers_own_lateness_is_not_a_timeout() -> None:
    # The referee notices the deadline LATE_S late, with the reply still on its way through
    # the transport: it waits as long again instead of striking the seat, and charges the
    # reply no more than its allowance.
    settings = make_settings("medina-v2", 2, time=FAST, max_strikes=1)
    held = HeldUpByTheServer(1)
    sink = LogSink()
    try:
        outcome = run(make_match(settings, [FakeSeat(0), held], sink).run())
    finally:
        held.close()
    assert outcome.seats[1].strikes == 0
    timed = [d for d in sink.decisions if d.seat == 1]
    assert len(timed) == 3 and {d.source for d in timed} == {DecisionSource.BOT}
    assert all(d.time_ms <= FAST.decision_ms for d in timed)
