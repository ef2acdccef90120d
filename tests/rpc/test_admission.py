"""Admission control from measured capacity: the server's turnaround, the matches starting
together, and a retry hint that grows with the organisers waiting (rpc/common/admission.py)."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import grpc
import pytest
from bounded import run
from e2e.rawbot import RawBot
from medina.rpc.common.admission import (
    HINT_MAX_EVENTS,
    MAX_PENDING_REPLIES,
    STARTING_S,
    TICK_S,
    TURNAROUND_MAX_SAMPLES,
    WAITING_S,
    AdmissionLimits,
    Load,
    RetryHint,
    Turnaround,
    no_room,
    refusal,
)
from medina.rpc.common.config import ServerConfig
from medina.rpc.organiser import refusal_of
from medina.rpc.single.server import RunningServer, start_server
from medina.v1 import admin_pb2, admin_pb2_grpc, common_pb2, match_pb2
from medina.web.server import arena_viewer
from prometheus_client.exposition import generate_latest


@asynccontextmanager
async def organised(
    records: Path, admission: AdmissionLimits | None = None
) -> AsyncIterator[tuple[RunningServer, admin_pb2_grpc.MatchServiceAsyncStub]]:
    """A server on a free port (its default admission unless ``admission``) and an
    organiser's stub on it; the server stops after."""
    config = ServerConfig(host="127.0.0.1", port=0, records_dir=records)
    if admission is not None:
        config = ServerConfig(host="127.0.0.1", port=0, records_dir=records, admission=admission)
    running = await start_server(config)
    try:
        async with grpc.aio.insecure_channel(running.address) as channel:
            yield running, admin_pb2_grpc.MatchServiceStub(channel)
    finally:
        await running.stop(1)


class FakeClock:
    """A monotonic clock the test moves."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_first_percentile_counts_as_soon_as_its_decisions_are_in() -> None:
    clock = FakeClock()
    meter = Turnaround(window_s=2.0, min_samples=50, clock=clock)
    for _ in range(49):
        meter.note(clock.now, 0.001)
    assert meter.p99_ms() is None
    meter.note(clock.now, 0.002)
    assert meter.p99_ms() == pytest.approx(2.0)  # within the same tick: "too few" is not kept


def test_the_turnaround_is_the_99th_percentile_of_the_last_seconds() -> None:
    clock = FakeClock()
    meter = Turnaround(window_s=2.0, min_samples=50, clock=clock)
    for _ in range(49):
        meter.note(clock.now, 0.001)
    assert meter.p99_ms() is None  # 49 decisions say nothing about a 99th percentile
    clock.now += TICK_S
    for i in range(51):
        meter.note(clock.now, 0.001 if i else 0.030)  # one slow decision in 100
    assert meter.p99_ms() == pytest.approx(30.0)
    meter.note(clock.now, 0.5)
    meter.note(clock.now, 0.5)
    assert meter.p99_ms() == pytest.approx(30.0)  # kept for a tick: CreateMatch asks often
    clock.now += TICK_S
    assert meter.p99_ms() == pytest.approx(500.0)  # three slow in 102: the 99th is 0.5 s
    clock.now += 2.0  # the window has passed: nothing is left to say
    assert meter.p99_ms() is None
    for _ in range(TURNAROUND_MAX_SAMPLES + 10):  # nobody asks for hours: memory is bounded
        meter.note(clock.now, 0.001)
    assert len(meter._seconds) == TURNAROUND_MAX_SAMPLES


def test_a_match_timing_measures_from_a_reply_to_the_next_request() -> None:
    clock = FakeClock()
    meter = Turnaround(min_samples=1, clock=clock)
    timing = meter.match()
    assert not timing.starting(clock.now)  # not let start (bots coming, or queued): no load
    timing.released = clock.now
    assert timing.starting(clock.now)  # let start, not playing: its load is not measured yet
    assert not timing.starting(clock.now + WAITING_S)  # bots that never come hold nothing
    timing.requested(clock.now + 1.0)  # the first request: no reply before it, no sample
    assert timing.started == clock.now + 1.0
    assert timing.starting(clock.now + 1.0 + STARTING_S / 2)
    assert not timing.starting(clock.now + 1.0 + STARTING_S)
    timing.replied(clock.now + 1.05)
    timing.requested(clock.now + 1.057)  # 7 ms from the reply read to the request written
    timing.requested(clock.now + 1.2)  # a request after a timeout: no reply, no sample
    clock.now += 1.3
    assert meter.p99_ms() == pytest.approx(7.0)


def test_a_request_noted_after_its_reply_still_pairs_every_reply_with_its_request() -> None:
    # The stream notes a request as written when it asks for its next message, which can be
    # after the bot's reply to that request was read: each reply still measures to the
    # request that followed it, and none is lost (one was, in a loaded CI run).
    meter = Turnaround(min_samples=1, clock=FakeClock())
    timing = meter.match()
    timing.requested(1.0)  # request 1
    timing.replied(2.0)  # reply 1
    timing.replied(2.5)  # reply 2 read before request 2's write is noted
    timing.requested(2.6)  # request 2, noted late
    timing.requested(3.0)  # request 3
    assert [round(s, 3) for s in meter._seconds] == [0.6, 0.5]
    # Replies that no request ever follows are not kept without bound.
    for n in range(10):
        timing.replied(4.0 + n)
    assert len(timing._replies) == MAX_PENDING_REPLIES


def test_a_slow_turnaround_refuses_new_matches_while_matches_play() -> None:
    limits = AdmissionLimits()  # 10 % of the shortest clock, at least 10 ms
    assert no_room(limits, Load(5, 100, turnaround_ms=9.9), 0) is None
    refused = no_room(limits, Load(5, 100, turnaround_ms=12.5), 0) or ""
    assert "12.5 ms at the 99th percentile" in refused and "100 ms" in refused
    assert no_room(limits, Load(5, 5000, turnaround_ms=400), 0) is None  # 5 s clocks take 0.4 s
    assert no_room(limits, Load(5, None, turnaround_ms=400), 0) is None  # no clock known (a front)
    assert no_room(limits, Load(5, 100, turnaround_ms=None), 0) is None  # too few decisions
    # No match plays: the last seconds' turnaround is of a load that has ended.
    assert no_room(limits, Load(0, 100, turnaround_ms=50), 0) is None
    assert no_room(limits, Load(3, 100, turnaround_ms=50, starting=3), 0) is None
    assert no_room(AdmissionLimits(max_lag_share=None), Load(5, 100, turnaround_ms=50), 0) is None


def test_matches_start_at_most_a_burst_or_as_many_as_play_at_once() -> None:
    limits = AdmissionLimits(start_burst=16)
    assert no_room(limits, Load(15, None, starting=15), 0) is None
    refused = no_room(limits, Load(16, None, starting=16), 0) or ""
    assert "16 matches are starting" in refused and "at most 16" in refused
    # 40 play and have been measured: 39 more may start (the load at most doubles).
    assert no_room(limits, Load(79, None, starting=39), 0) is None
    assert "at most 40" in (no_room(limits, Load(80, None, starting=40), 0) or "")
    assert no_room(AdmissionLimits(start_burst=None), Load(500, None, starting=500), 0) is None
    with pytest.raises(ValueError, match="start_burst must be at least 1"):
        AdmissionLimits(start_burst=0)


def test_the_retry_hint_grows_with_the_organisers_waiting_and_settles() -> None:
    clock = FakeClock()
    hint = RetryHint(1000, clock=clock, rng=random.Random(7).random)
    assert 1000 <= hint.ms() <= 1500  # nobody waits: the base, spread by up to half
    # 200 organisers wait; the server admits 4 matches a second. Each asks again after
    # the hint it was given; the refusals per second then answer the hint.
    waiting, admitted_per_s = 200, 4
    due = [clock.now + i / waiting for i in range(waiting)]
    hints = []
    for _ in range(60 * 10):  # a minute, in tenths of a second
        clock.now += 0.1
        if round(clock.now * 10) % 10 == 0:
            for _ in range(admitted_per_s):
                hint.admitted()
        for i, when in enumerate(due):
            if when <= clock.now:
                hint.refused()
                due[i] = clock.now + hint.ms() / 1000
        hints.append(hint.ms())
    # It settles near the geometric mean of the base and waiting/admitted (50 s): ~7 s.
    settled = hints[-100:]
    assert min(settled) >= 4000 and max(settled) <= 12000
    rate = sum(1 for when in due if when <= clock.now + 1.0)
    assert rate < waiting / 4  # a fraction of the organisers ask in a second, not all
    # When nobody is refused any more, it falls back to the base within seconds.
    for _ in range(20):
        clock.now += 1.0
        hint.admitted()
        hint.ms()
    assert 1000 <= hint.ms() <= 1500
    for _ in range(HINT_MAX_EVENTS + 10):  # never refused: what is counted stays bounded
        hint.admitted()
    assert len(hint._admitted) == HINT_MAX_EVENTS


def config(decision_ms: int) -> match_pb2.MatchConfig:
    return match_pb2.MatchConfig(
        ruleset=common_pb2.RULESET_MEDINA_V2,
        players=2,
        seed=3,
        time_control=match_pb2.TimeControl(decision_ms=decision_ms, bank_ms=0, increment_ms=0),
    )


def test_a_burst_of_matches_is_admitted_as_fast_as_their_load_can_be_measured(
    tmp_path: Path,
) -> None:
    async def main() -> None:
        # No start queue (labelled): the burst is refused rather than queued.
        async with organised(tmp_path, AdmissionLimits(max_queued=0)) as (running, stub):
            request = admin_pb2.CreateMatchRequest(config=config(5000))
            for _ in range(16):  # the default burst: created, their bots not yet come
                await stub.CreateMatch(request)
            with pytest.raises(grpc.aio.AioRpcError) as full:
                await stub.CreateMatch(request)
            assert full.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "16 matches are starting" in (full.value.details() or "")
            reason, hint_ms = refusal_of(full.value)
            assert reason == "SERVER_FULL" and hint_ms >= 1000
            assert len(running.arena.running()) == 16  # nothing was created
            # The operator sees the refusal in /metrics.
            scraped = generate_latest(arena_viewer(running).metrics.registry).decode()
            assert "\nmedina_create_match_refused_total 1.0\n" in scraped

    run(main())


def test_no_lag_limit_admits_any_burst(tmp_path: Path) -> None:
    async def main() -> None:
        limits = AdmissionLimits(max_loop_lag_ms=None, max_lag_share=None, start_burst=None)
        async with organised(tmp_path, limits) as (running, stub):
            request = admin_pb2.CreateMatchRequest(config=config(5000))
            for _ in range(24):
                await stub.CreateMatch(request)
            assert len(running.arena.running()) == 24

    run(main())


def test_a_played_match_measures_the_servers_turnaround(tmp_path: Path) -> None:
    async def main() -> None:
        async with organised(tmp_path) as (running, stub):
            created = await stub.CreateMatch(admin_pb2.CreateMatchRequest(config=config(5000)))
            bots = [RawBot(running.address, t.token) for t in created.tokens]
            await asyncio.gather(*(bot.play() for bot in bots))
            hosted = running.arena.get(created.match_id)
            assert hosted is not None and hosted.timing.started is not None
            # Every request after the first followed a reply: one turnaround each.
            requests = sum(
                1 for bot in bots for m in bot.received if m.WhichOneof("message") == "request"
            )
            assert len(running.arena.turnaround._seconds) == requests - 1
            p99 = running.arena.turnaround.p99_ms()
            assert p99 is not None and 0 < p99 < 5000

    run(main())


def test_a_slow_turnaround_refuses_a_match_with_a_short_clock_over_grpc(tmp_path: Path) -> None:
    async def main() -> None:
        # No start queue (labelled): a match with no room is refused rather than queued.
        async with organised(tmp_path, AdmissionLimits(max_queued=0)) as (running, stub):
            # Decisions took 50 ms from reply to request (a window long enough for a
            # slow test machine to keep them) ...
            meter = running.arena.turnaround
            meter.window_s = 60
            now = meter.clock()
            for _ in range(100):
                meter.note(now, 0.050)
            first = await stub.CreateMatch(admin_pb2.CreateMatchRequest(config=config(5000)))
            # ... and no match plays: nothing refuses. Now one has played for a while.
            hosted = running.arena.get(first.match_id)
            assert hosted is not None
            hosted.timing.started = now - 10
            # 50 ms is within 10 % of the 5 s clocks in play ...
            await stub.CreateMatch(admin_pb2.CreateMatchRequest(config=config(5000)))
            # ... but not of a new match's 100 ms clock: it would be served late.
            with pytest.raises(grpc.aio.AioRpcError) as late:
                await stub.CreateMatch(admin_pb2.CreateMatchRequest(config=config(100)))
            assert late.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "50.0 ms at the 99th percentile" in (late.value.details() or "")
            assert refusal_of(late.value)[0] == "SERVER_FULL"
            assert len(running.arena.running()) == 2

    run(main())


def test_with_a_start_queue_create_match_is_refused_only_at_its_limits() -> None:
    queue = AdmissionLimits(max_queued=4)
    # No room (the loop 5 s late, 20 starting): the match is created, to wait in the queue.
    assert refusal(queue, Load(20, 100, turnaround_ms=50, starting=20, queued=3), 5000) is None
    assert "4 matches wait to start" in (refusal(queue, Load(20, None, queued=4), 0) or "")
    assert "limit of 2 matches" in (refusal(AdmissionLimits(max_matches=2), Load(2, None), 0) or "")
    # No queue: no room refuses, as no_room says.
    none = AdmissionLimits(max_queued=0)
    assert "event loop runs 5000 ms late" in (refusal(none, Load(1, None), 5000) or "")
    assert refusal(none, Load(1, None), 0) is None
    with pytest.raises(ValueError, match="max_queued must be 0"):
        AdmissionLimits(max_queued=-1)
