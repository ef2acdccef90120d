"""The clock module alone, with no match and no event loop: one decision's deadlines, grace,
write wait and lateness excuse, the time a reply is charged, and the unit conversions."""

from __future__ import annotations

import pytest
from medina.referee import clock as clk
from medina.referee.clock import (
    LAG_TOLERANCE_NS,
    NS_PER_MS,
    NS_PER_S,
    WRITE_WAIT_MIN_NS,
    DecisionClock,
    SeatClock,
)
from medina.referee.config import TimeControl

MS = NS_PER_MS
T0 = 1_000 * NS_PER_S  # any instant of the loop's clock


def decision(allowed_ms: int = 500, grace_ms: int = 100, writes: bool = False) -> DecisionClock:
    d = DecisionClock(seat=1, request_id=7, allowed_ns=allowed_ms * MS, grace_ns=grace_ms * MS)
    d.start(T0, awaiting_write=writes)
    return d


def test_the_allowance_and_the_grace_end_after_the_start() -> None:
    d = decision(500, 100)
    assert d.deadline_ns == T0 + 500 * MS
    assert d.hard_deadline_ns == T0 + 600 * MS


def test_a_write_to_come_adds_another_allowance_of_at_least_a_second() -> None:
    assert decision(500, 100, writes=True).hard_deadline_ns == T0 + 600 * MS + WRITE_WAIT_MIN_NS
    assert decision(3_000, 100, writes=True).hard_deadline_ns == T0 + 6_100 * MS


def test_the_write_restarts_the_allowance_but_never_earlier() -> None:
    d = decision(500, 100, writes=True)
    d.written(T0 + 40 * MS)
    assert not d.awaiting_write
    assert (d.deadline_ns, d.hard_deadline_ns) == (T0 + 540 * MS, T0 + 640 * MS)
    early = decision(500, 100, writes=True)
    early.written(T0 - 5 * MS)  # reported before it was handed over: queueing is the server's
    assert early.deadline_ns == T0 + 500 * MS


def test_lateness_within_the_tolerance_is_not_excused() -> None:
    d = decision()
    assert not d.excuse_lateness(LAG_TOLERANCE_NS)
    assert d.lag_ns == 0


def test_lateness_is_excused_twice_over_up_to_one_more_allowance() -> None:
    d = decision(allowed_ms=50, grace_ms=0)
    before = d.hard_deadline_ns
    assert d.excuse_lateness(3 * MS)
    assert d.lag_ns == 6 * MS and d.hard_deadline_ns == before + 6 * MS
    # the cap is max(allowance, WRITE_WAIT_MIN_NS): a second here, since 50 ms is less
    while d.excuse_lateness(400 * MS):
        pass
    assert WRITE_WAIT_MIN_NS <= d.lag_ns < WRITE_WAIT_MIN_NS + 800 * MS
    assert not d.excuse_lateness(400 * MS)


def test_time_is_used_in_whole_milliseconds_and_never_negative() -> None:
    d = decision()
    assert d.used_ns(T0 + 1_999_999) == 1 * MS
    assert d.used_ns(T0 + 2 * MS) == 2 * MS
    assert d.used_ns(T0 - 3 * MS) == 0
    assert d.time_left_ms(T0 + 100 * MS + 1) == 399
    assert d.time_left_ms(T0 + 900 * MS) == 0


def test_a_reply_in_excused_lateness_is_charged_at_most_the_allowance() -> None:
    d = decision(allowed_ms=50, grace_ms=10)
    late = T0 + 75 * MS
    assert d.reply_used_ns(late) == 75 * MS  # no lateness excused: charged as measured
    assert d.excuse_lateness(5 * MS)
    assert d.reply_used_ns(late) == 50 * MS
    assert d.used_ns(late) == 75 * MS  # a timeout is still charged what it took


def test_a_decision_takes_the_seat_clock_allowance_and_the_grace() -> None:
    control = TimeControl(
        decision_ms=400, bank_ms=0, increment_ms=0, first_decision_extra_ms=100, grace_ms=30
    )
    d = DecisionClock.for_seat(2, 9, SeatClock.start(control))
    assert (d.seat, d.request_id, d.allowed_ns, d.grace_ns) == (2, 9, 500 * MS, 30 * MS)


def test_charging_records_the_last_reply_and_speaks_milliseconds_at_the_edge() -> None:
    control = TimeControl(
        decision_ms=400, bank_ms=1_000, increment_ms=10, first_decision_extra_ms=0, grace_ms=0
    )
    c = SeatClock.start(control)
    assert (c.bank_ns, c.bank_ms, c.last_reply_ms) == (1_000 * MS, 1_000, None)
    c.charge(250 * MS)
    assert (c.bank_ms, c.last_reply_ms, c.allowed_ms()) == (760, 250, 400)


@pytest.mark.parametrize(
    ("seconds", "expected"),
    [
        (0.0, 0),
        (1.5, 1_500_000_000),
        (0.001, 1_000_000),
        (123_456.789_012_345, 123_456_789_012_345),
    ],
)
def test_loop_seconds_convert_to_nanoseconds(seconds: float, expected: int) -> None:
    assert abs(clk.ns(seconds) - expected) <= 1
    assert clk.loop_time(expected) == pytest.approx(seconds, abs=1e-9)


def test_the_conversions_are_exact_where_floats_are_not() -> None:
    # (0.3 - 0.1) * 1000 is 199.999... in floats: in nanoseconds it is 200 ms
    assert int((0.3 - 0.1) * 1000) == 199
    assert clk.ms(clk.ns(0.3) - clk.ns(0.1)) == 200
    assert clk.after(T0, 250) == T0 + 250 * MS
    assert clk.ms(-5) == 0 and clk.ms(MS - 1) == 0
    assert clk.seconds(1_500 * MS) == 1.5
