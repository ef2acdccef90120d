"""Seats that connect late or never, lose their connection, crash; matches that are aborted."""

from __future__ import annotations

import asyncio

import pytest
from medina.referee.config import LIMIT_MS, TimeControl
from medina.referee.match import MatchPhase
from medina.referee.outcome import MatchOutcome, Termination
from medina.referee.record import DecisionSource, Header, Incident, IncidentKind

from .fakes import (
    FAST,
    SLOW,
    FakeSeat,
    Flaky,
    Hook,
    LogSink,
    Stall,
    check_record,
    make_match,
    make_settings,
    play_sync,
    run,
)

B, T, F = DecisionSource.BOT, DecisionSource.TIMEOUT, DecisionSource.FALLBACK
CONNECTED, DISCONNECTED, RECONNECTED = (
    IncidentKind.CONNECTED,
    IncidentKind.DISCONNECTED,
    IncidentKind.RECONNECTED,
)


# -- losing and regaining the connection -------------------------------------------------


def test_reconnecting_within_the_grace_gets_the_same_request_again() -> None:
    settings = make_settings("medina-v2", 3, time=SLOW, reconnect_grace_ms=60_000)
    flaky = Flaky(1, on=2, reconnect_s=0)
    outcome, sink, _ = play_sync(settings, [FakeSeat(0), flaky, FakeSeat(2)])

    assert [s.termination for s in outcome.seats] == [Termination.NORMAL] * 3
    first, again = flaky.requests[1], flaky.requests[2]
    assert again.request_id == first.request_id
    assert again.legal == first.legal
    assert again.observation.first_event == 0, "the resent request carries the whole history"
    assert again.observation.events[-len(first.observation.events) :] == (first.observation.events)
    mine = [d for d in sink.decisions if d.seat == 1]
    assert mine[1].request_id == first.request_id and mine[1].source is B
    assert set(sink.sources(1)) == {B}
    assert sink.kinds(1) == [CONNECTED, DISCONNECTED, RECONNECTED]
    assert flaky.closed.count(first.request_id) == 1
    check_record(settings, sink, outcome)


@pytest.mark.parametrize("bot_name", ["", "nameless-not"])
def test_a_bot_that_connected_itself_is_recognised_when_it_comes_back(bot_name: str) -> None:
    # the handshake's bot name is optional: recognising a returning bot must not need it
    settings = make_settings("medina-v2", 2, time=SLOW, reconnect_grace_ms=60_000)
    flaky = Flaky(0, on=1, reconnect_s=0)
    flaky.bot_name = bot_name
    other = FakeSeat(1)
    sink = LogSink()

    async def main() -> MatchOutcome:
        match = make_match(settings, [flaky, other], sink, connected=False)
        flaky.connection(True)
        other.connection(True)
        return await match.run()

    outcome = run(main())
    assert [r.request_id for r in flaky.requests[:2]] == [1, 1]
    assert sink.kinds(0) == [CONNECTED, DISCONNECTED, RECONNECTED]
    assert outcome.seats[0].termination is Termination.NORMAL


def test_the_clock_keeps_running_while_a_seat_is_away() -> None:
    time = TimeControl(
        decision_ms=10_000, bank_ms=0, increment_ms=0, first_decision_extra_ms=0, grace_ms=10
    )
    settings = make_settings("medina-v2", 2, time=time, reconnect_grace_ms=60_000)
    flaky = Flaky(0, on=1, reconnect_s=0.05)
    outcome, sink, _ = play_sync(settings, [flaky, FakeSeat(1)])
    first, again = flaky.requests[0], flaky.requests[1]
    assert again.request_id == first.request_id
    assert again.clock.time_left_ms <= first.clock.time_left_ms - 50
    assert sink.decisions[0].time_ms >= 50
    assert outcome.seats[0].termination is Termination.NORMAL


@pytest.mark.parametrize(
    ("crashed", "termination"),
    [(False, Termination.DISCONNECTED), (True, Termination.CRASHED)],
)
def test_a_seat_that_does_not_come_back_forfeits_after_the_grace(
    crashed: bool, termination: Termination
) -> None:
    settings = make_settings("medina-v2", 3, time=SLOW, reconnect_grace_ms=50)
    gone = Flaky(2, on=3, reconnect_s=None, crashed=crashed)
    outcome, sink, match = play_sync(settings, [FakeSeat(0), FakeSeat(1), gone])

    assert outcome.complete
    result = outcome.seats[2]
    assert (result.termination, result.rank, result.strikes) == (termination, 3, 0)
    assert result.detail == "did not reconnect in time"
    assert [s.termination for s in outcome.seats[:2]] == [Termination.NORMAL] * 2
    sources = sink.sources(2)
    assert sources[:3] == [B, B, F] and set(sources[3:]) == {F}
    assert len(gone.requests) == 3 and gone.closed == [r.request_id for r in gone.requests]
    assert sink.kinds(2) == [CONNECTED, DISCONNECTED, IncidentKind.FORFEIT]
    assert sink.incidents[-1].termination is termination
    assert match.is_forfeited(2) and not match.view().seats[2].connected
    check_record(settings, sink, outcome)


@pytest.mark.parametrize(
    ("crashed", "termination"),
    [(False, Termination.DISCONNECTED), (True, Termination.CRASHED)],
)
def test_strikes_run_out_while_away_the_first_cause_is_charged(
    crashed: bool, termination: Termination
) -> None:
    # Short clocks, a long reconnect grace: the seat's strikes run out before the grace
    # does. The result names the crash or disconnect, not the timeouts it caused.
    settings = make_settings("medina-v2", 2, time=FAST, reconnect_grace_ms=LIMIT_MS)
    gone = Flaky(1, on=2, reconnect_s=None, crashed=crashed)
    outcome, sink, _match = play_sync(settings, [FakeSeat(0), gone])
    result = outcome.seats[1]
    assert result.termination is termination and result.strikes == 3
    lost = "crashed" if crashed else "disconnected"
    assert result.detail.startswith(f"{lost} and did not come back before its strikes ran out")
    assert sink.incidents[-1].termination is termination
    check_record(settings, sink, outcome)


def test_a_seat_lost_between_its_turns_forfeits_too() -> None:
    settings = make_settings("medina-v2", 2, time=SLOW, reconnect_grace_ms=50)
    gone = Stall(0, answer=1)

    def drop_opponent() -> None:
        gone.connection(False)
        seats[1].reply(seats[1].requests[-1].request_id, seats[1].requests[-1].legal.nth(0))

    seats: list[FakeSeat] = [gone, Hook(1, 1, drop_opponent)]
    outcome, sink, _ = play_sync(settings, seats)
    assert sink.decisions[0].seat == 0 and sink.decisions[1].seat == 1
    assert outcome.seats[0].termination is Termination.DISCONNECTED
    assert outcome.seats[1].termination is Termination.NORMAL
    assert sink.kinds(0) == [CONNECTED, DISCONNECTED, IncidentKind.FORFEIT]


def test_a_disconnected_seat_is_never_better_off() -> None:
    # its grace outlasts its clock: each request times out and counts a strike
    time = TimeControl(
        decision_ms=30, bank_ms=100, increment_ms=0, first_decision_extra_ms=0, grace_ms=10
    )
    settings = make_settings("medina-v2", 2, time=time, max_strikes=3, reconnect_grace_ms=60_000)
    away = Flaky(1, on=2, reconnect_s=None)
    outcome, sink, match = play_sync(settings, [FakeSeat(0), away])

    sources = sink.sources(1)
    assert sources[:5] == [B, T, T, F, F]
    result = outcome.seats[1]
    # the first cause is charged: it left, and the timeouts followed from that
    assert (result.termination, result.strikes, result.rank) == (Termination.DISCONNECTED, 3, 2)
    assert outcome.seats[0].rank == 1
    assert sink.kinds(1) == [CONNECTED, DISCONNECTED] + [IncidentKind.TIMEOUT] * 3 + [
        IncidentKind.FORFEIT
    ]
    assert [r.clock.strikes for r in away.requests] == [0, 0, 1, 2]
    assert match.view().seats[1].bank_ms == 0
    check_record(settings, sink, outcome)


# -- connecting ----------------------------------------------------------------------------


def test_a_seat_that_never_connects_forfeits_as_a_no_show_and_the_match_is_played() -> None:
    settings = make_settings("medina-v2", 3, connect_timeout_ms=50)
    seats = [FakeSeat(0), FakeSeat(1), FakeSeat(2)]
    sink = LogSink()

    async def main() -> MatchOutcome:
        match = make_match(settings, seats, sink, connected=False)
        seats[0].connection(True)
        seats[2].connection(True)
        assert match.phase is MatchPhase.WAITING
        return await match.run()

    outcome = run(main())
    assert outcome.complete
    assert [s.termination for s in outcome.seats] == [
        Termination.NORMAL,
        Termination.NO_SHOW,
        Termination.NORMAL,
    ]
    assert outcome.seats[1].rank == 3
    assert outcome.seats[1].detail == "its bot never connected (0.05 s connect deadline)"
    assert [s.name for s in outcome.seats] == ["bot0", "seat 1", "bot2"]
    header = sink.entries[0]
    assert isinstance(header, Header)
    assert [s.bot_name for s in header.seats] == ["bot0", "", "bot2"]
    # the record opens with who connected and who forfeited, before any decision
    opening = [(i.kind, i.seat, i.termination) for i in sink.incidents if i.at_decision == 0]
    assert opening == [
        (CONNECTED, 0, None),
        (IncidentKind.FORFEIT, 1, Termination.NO_SHOW),
        (CONNECTED, 2, None),
    ]
    assert all(isinstance(e, Incident) for e in sink.entries[1:4])
    assert seats[1].requests == [] and set(sink.sources(1)) == {F}
    assert len(seats[1].ends) == 1
    check_record(settings, sink, outcome)


def test_a_match_nobody_connects_to_is_abandoned_not_played() -> None:
    settings = make_settings("medina-v2", 3, connect_timeout_ms=20)
    seats = [FakeSeat(0), FakeSeat(1), FakeSeat(2)]
    sink = LogSink()

    async def main() -> tuple[MatchOutcome, MatchPhase]:
        match = make_match(settings, seats, sink, connected=False)
        outcome = await match.run()
        return outcome, match.phase

    outcome, phase = run(main())
    assert phase is MatchPhase.ABANDONED
    assert outcome.abandoned and not outcome.complete
    assert {s.termination for s in outcome.seats} == {Termination.NO_SHOW}
    assert sink.sources(0) == [] and all(s.requests == [] for s in seats)  # nothing played
    assert [(i.kind, i.seat) for i in sink.incidents] == [
        (IncidentKind.FORFEIT, 0),
        (IncidentKind.FORFEIT, 1),
        (IncidentKind.FORFEIT, 2),
    ]
    assert isinstance(sink.entries[0], Header)


def test_the_match_starts_as_soon_as_every_seat_is_connected() -> None:
    settings = make_settings("medina-v2", 2, connect_timeout_ms=LIMIT_MS)
    seats = [FakeSeat(0), FakeSeat(1)]

    async def main() -> MatchOutcome:
        match = make_match(settings, seats, LogSink(), connected=False)
        seats[0].connection(True)
        asyncio.get_running_loop().call_later(0.02, seats[1].connection, True)
        return await match.run()

    outcome = run(main())  # bounded: waiting out the hour would fail the test
    assert [s.termination for s in outcome.seats] == [Termination.NORMAL] * 2


# -- aborting --------------------------------------------------------------------------------


def check_aborted(outcome: MatchOutcome, sink: LogSink, reason: str, seats: list[FakeSeat]) -> None:
    assert not outcome.complete
    last_incident = sink.entries[-2]
    assert isinstance(last_incident, Incident)
    assert (last_incident.kind, last_incident.seat, last_incident.detail) == (
        IncidentKind.ABORTED,
        -1,
        reason,
    )
    assert sink.entries[-1] == outcome
    for seat in seats:
        assert [end.outcome for end in seat.ends] == [outcome]


def test_abort_mid_match() -> None:
    settings = make_settings("medina-v2", 3)
    reason = "stopped by the organiser"
    seats: list[FakeSeat] = [FakeSeat(0), Hook(1, 3, lambda: match.abort(reason)), FakeSeat(2)]
    sink = LogSink()
    match = make_match(settings, seats, sink)
    outcome = run(match.run())

    check_aborted(outcome, sink, reason, seats)
    assert [(s.termination, s.detail) for s in outcome.seats] == [(Termination.ABORTED, reason)] * 3
    assert match.phase is MatchPhase.ABORTED and not match.state.over
    assert len(sink.decisions) == match.state.decisions > 0
    check_record(settings, sink, outcome)  # the partial record replays to the partial totals


def test_abort_keeps_earlier_forfeits() -> None:
    settings = make_settings("medina-v2", 3, max_strikes=1)
    reason = "server shutting down"
    seats: list[FakeSeat] = [Stall(0), FakeSeat(1), Hook(2, 4, lambda: match.abort(reason))]
    sink = LogSink()
    match = make_match(settings, seats, sink)
    outcome = run(match.run())

    check_aborted(outcome, sink, reason, seats)
    assert [s.termination for s in outcome.seats] == [
        Termination.TIMEOUT,
        Termination.ABORTED,
        Termination.ABORTED,
    ]
    assert outcome.seats[0].rank == 3


def test_cancelling_the_match_task_aborts_it() -> None:
    settings = make_settings("medina-v1", 4)
    sink = LogSink()
    tasks: list[asyncio.Task[MatchOutcome]] = []
    seats: list[FakeSeat] = [FakeSeat(0), FakeSeat(1), Hook(2, 2, lambda: tasks[0].cancel())]
    seats.append(FakeSeat(3))
    match = make_match(settings, seats, sink)

    async def main() -> None:
        tasks.append(asyncio.create_task(match.run()))
        with pytest.raises(asyncio.CancelledError):
            await tasks[0]
        await asyncio.wait_for(match.wait_done(), 1)

    run(main())
    outcome = match.outcome
    assert outcome is not None
    check_aborted(outcome, sink, "match task cancelled", seats)
    assert {s.termination for s in outcome.seats} == {Termination.ABORTED}
    assert match.phase is MatchPhase.ABORTED
    check_record(settings, sink, outcome)


def test_abort_before_the_seats_connect() -> None:
    settings = make_settings("medina-v2", 2, connect_timeout_ms=LIMIT_MS)
    seats = [FakeSeat(0), FakeSeat(1)]
    sink = LogSink()

    async def main() -> MatchOutcome:
        match = make_match(settings, seats, sink, connected=False)
        seats[1].connection(True)
        match.abort("no opponent")
        return await match.run()

    outcome = run(main())
    check_aborted(outcome, sink, "no opponent", seats)
    assert isinstance(sink.entries[0], Header)
    assert sink.decisions == []
    assert {s.termination for s in outcome.seats} == {Termination.ABORTED}
    assert all(seat.requests == [] for seat in seats)
