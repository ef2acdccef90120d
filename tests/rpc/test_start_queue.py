"""The start queue: a match the server has no room for waits, its bots connected and no clock
running, and starts when there is room, oldest first; CreateMatch is refused only with the
queue full (rpc/common/start_queue.py, rpc/single/host.py, referee/match.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import grpc
import pytest
from bounded import run
from e2e.rawbot import RawBot
from medina.records.reader import read_record
from medina.records.verify import verify_record
from medina.rpc.common.admission import AdmissionLimits, LoopLag, MatchTiming, Turnaround
from medina.rpc.common.config import ServerConfig
from medina.rpc.common.start_queue import StartQueue
from medina.rpc.organiser import refusal_of, report_queued
from medina.rpc.single.server import RunningServer, start_server
from medina.v1 import admin_pb2, admin_pb2_grpc, common_pb2, match_pb2
from medina.web.server import arena_viewer
from prometheus_client.exposition import generate_latest
from stall import NoRoom, stalled


class Room:
    """A ``no_room`` the test controls: room for ``free`` more starts."""

    def __init__(self, free: int) -> None:
        self.free = free
        self.asked: list[int] = []

    def __call__(self, clock_ms: int) -> str | None:
        self.asked.append(clock_ms)
        return None if self.free > 0 else "no room"


def test_a_match_starts_at_once_with_room_and_waits_without_it_oldest_first() -> None:
    room = Room(1)
    meter = Turnaround()
    queue = StartQueue(room, clock=lambda: 5.0)
    started: list[str] = []

    def go(name: str) -> Callable[[], None]:
        def start() -> None:
            room.free -= 1
            started.append(name)

        return start

    a, b, c, d = (meter.match() for _ in range(4))
    queue.enter(a, 100, go("a"))
    assert started == ["a"] and a.released == 5.0 and len(queue) == 0
    assert queue.queued_total == 0  # let start at once: it never waited
    queue.enter(b, 200, go("b"))
    queue.enter(c, 300, go("c"))
    queue.enter(d, 400, go("d"))
    assert started == ["a"] and len(queue) == 3 and b.released is None
    assert [queue.ahead_of(t) for t in (a, b, c, d)] == [None, 0, 1, 2]
    assert queue.why == "no room" and room.asked[-1] == 200  # asked for the oldest's clock
    queue.leave(c)  # aborted while it waited
    assert [queue.ahead_of(t) for t in (b, d)] == [0, 1]
    queue.pump()
    assert started == ["a"]  # still no room
    room.free = 1
    queue.pump()  # room for one: the oldest
    assert started == ["a", "b"] and b.released == 5.0 and len(queue) == 1
    room.free = 5
    queue.pump()
    assert started == ["a", "b", "d"] and len(queue) == 0 and queue.why == ""
    assert queue.queued_total == 3  # b, c and d waited


def test_the_queue_looks_for_room_on_the_servers_clock() -> None:
    async def main() -> None:
        room = Room(0)
        queue = StartQueue(room)
        started = asyncio.Event()
        queue.enter(MatchTiming(Turnaround(), 0.0), 100, started.set)
        lag = LoopLag()  # the server's ticker, as start_server wires it
        lag.on_tick.append(queue.tick)
        lag.start()
        try:
            room.free = 1  # the load's measurements faded: no match ended to say so
            await started.wait()
        finally:
            await lag.stop()

    run(main())


def config(players: int = 2) -> match_pb2.MatchConfig:
    return match_pb2.MatchConfig(
        ruleset=common_pb2.RULESET_MEDINA_V2,
        players=players,
        seed=11,
        time_control=match_pb2.TimeControl(decision_ms=5000, bank_ms=0, increment_ms=0),
    )


async def queued(running: RunningServer, n: int) -> None:
    """Until ``n`` matches wait in the queue (their bots' Hellos take a few loop turns)."""
    queue = running.arena.queue
    assert queue is not None
    for _ in range(10_000):
        if len(queue) == n:
            return
        await asyncio.sleep(0.001)
    raise AssertionError(f"{len(queue)} matches queued, not {n}")


def test_matches_the_server_has_no_room_for_wait_with_no_clock_running_then_play(
    tmp_path: Path,
) -> None:
    async def main() -> None:
        limits = AdmissionLimits(max_queued=4)
        running = await start_server(
            ServerConfig(host="127.0.0.1", port=0, records_dir=tmp_path, admission=limits)
        )
        viewer = arena_viewer(running)
        try:
            async with grpc.aio.insecure_channel(running.address) as channel:
                stub = admin_pb2_grpc.MatchServiceStub(channel)
                # The event loop runs 5 s late (as a stall would measure): no room for any
                # match. CreateMatch still creates them ...
                room = NoRoom(running)
                created = [
                    await stub.CreateMatch(admin_pb2.CreateMatchRequest(config=config()))
                    for _ in range(3)
                ]
                # ... and once their bots are there (a match at a time here, so that the
                # queue's order is known), they wait in the queue, oldest first.
                bots: list[RawBot] = []
                games = []
                for n, c in enumerate(created):
                    mine = [RawBot(running.address, t.token) for t in c.tokens]
                    games += [asyncio.ensure_future(bot.play()) for bot in mine]
                    bots += mine
                    await queued(running, n + 1)
                listed = await stub.ListMatches(admin_pb2.ListMatchesRequest())
                notes = {m.match_id: m.note for m in listed.matches}
                for ahead, c in enumerate(created):
                    assert notes[c.match_id] == (
                        "queued: its bots are here; it starts when the server has room "
                        f"({ahead} ahead)"
                    )
                scraped = generate_latest(viewer.metrics.registry).decode()
                assert "\nmedina_matches_queued 3.0\n" in scraped
                assert "\nmedina_matches_waiting 0.0\n" in scraped
                # Every bot was welcomed and sent nothing else: no clock runs.
                for bot in bots:
                    assert bot.welcome is not None
                    assert [m.WhichOneof("message") for m in bot.received] == ["welcome"]
                # A full queue refuses CreateMatch, with the retry hint.
                extra = await stub.CreateMatch(admin_pb2.CreateMatchRequest(config=config()))
                extra_bots = [RawBot(running.address, t.token) for t in extra.tokens]
                extra_games = [asyncio.ensure_future(bot.play()) for bot in extra_bots]
                await queued(running, 4)  # a match whose bots came while it was being made
                with pytest.raises(grpc.aio.AioRpcError) as full:
                    await stub.CreateMatch(admin_pb2.CreateMatchRequest(config=config()))
                assert full.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
                assert "start queue is full: 4 matches wait to start" in (
                    full.value.details() or ""
                )
                assert refusal_of(full.value)[0] == "SERVER_FULL"
                # An organiser aborts the last: it leaves the queue, its bots are told.
                await stub.AbortMatch(admin_pb2.AbortMatchRequest(match_id=extra.match_id))
                await asyncio.gather(*extra_games)
                assert all(bot.ended is not None for bot in extra_bots)
                await queued(running, 3)
                # Room comes back (the stall ends): the queue lets them start; they play to
                # the end, no bot charged for the wait.
                room.release()
                await asyncio.gather(*games)
                for c in created:
                    summary = await stub.GetMatch(admin_pb2.GetMatchRequest(match_id=c.match_id))
                    assert summary.match.state == admin_pb2.MATCH_STATE_FINISHED
                    assert summary.match.note == ""
                    for seat in summary.match.result.seats:
                        assert seat.strikes == 0
                        assert seat.termination == match_pb2.TERMINATION_NORMAL
                queue = running.arena.queue
                assert queue is not None and len(queue) == 0 and queue.queued_total == 4
                scraped = generate_latest(viewer.metrics.registry).decode()
                assert "\nmedina_start_queue_entered_total 4.0\n" in scraped
        finally:
            await running.stop(1)

    run(main())


def test_a_bot_that_left_while_its_match_waited_is_away_from_the_start(tmp_path: Path) -> None:
    async def main() -> None:
        async with stalled(tmp_path) as (running, stub, room):
            request = admin_pb2.CreateMatchRequest(config=config())
            request.config.policies.reconnect_grace_ms = 200
            created = await stub.CreateMatch(request)
            stays = RawBot(running.address, created.tokens[0].token)
            leaves = RawBot(running.address, created.tokens[1].token)
            games = [asyncio.ensure_future(stays.play())]
            leaving = asyncio.ensure_future(leaves.play())
            await queued(running, 1)
            leaving.cancel()  # the bot's process went away while the match waited
            with pytest.raises(asyncio.CancelledError):
                await leaving
            room.release()
            await asyncio.gather(*games)
            summary = await stub.GetMatch(admin_pb2.GetMatchRequest(match_id=created.match_id))
            # It came, so it is no no-show: it left, and did not come back within its
            # reconnect grace (counted from the start).
            seat = summary.match.result.seats[1]
            assert seat.termination in (
                match_pb2.TERMINATION_DISCONNECTED,
                match_pb2.TERMINATION_CRASHED,
            ), summary
            assert seat.detail == "did not reconnect in time"
            assert summary.match.result.seats[0].termination == match_pb2.TERMINATION_NORMAL
            # The record tells it so, and replays to the same result.
            record = read_record(Path(summary.match.record_path))
            report = verify_record(record)
            assert report.ok and report.complete, report.summary()
            text = Path(summary.match.record_path).read_text()
            assert "its stream ended before the match started" in text

    run(main())


def test_the_queue_spreads_its_starts_over_its_ticks() -> None:
    # Room shows a start's load only once it is measured: matches let start all at once
    # overshoot it. At 20 a second, two a tick (of 100 ms).
    room = Room(100)
    queue = StartQueue(room, per_second=20, clock=lambda: 0.0)
    assert queue.per_tick == 2
    started: list[int] = []
    meter = Turnaround()
    busy = meter.match()
    queue.enter(busy, 100, lambda: None)  # the queue is empty and there is room: at once
    room.free = 0
    for n in range(5):
        queue.enter(meter.match(), 100, lambda n=n: started.append(n))  # type: ignore[misc]
    assert started == [] and len(queue) == 5
    room.free = 100  # room for all of them ...
    queue.tick()
    assert started == [0, 1]  # ... but two a tick
    assert queue.why == "the queue's starts for this tick are spent"
    queue.pump()  # a match entering does not start more before the next tick
    assert started == [0, 1]
    queue.tick()
    queue.tick()
    assert started == [0, 1, 2, 3, 4] and len(queue) == 0
    with pytest.raises(ValueError, match="per_second must be at least 1"):
        StartQueue(room, per_second=0)


def test_a_match_that_ends_gives_its_place_to_the_oldest_waiting_beyond_the_ticks_starts() -> None:
    # Counting replacements against the burst capped the load at the burst times a game's
    # length, whatever the room.
    room = Room(100)
    queue = StartQueue(room, per_second=10, clock=lambda: 0.0)
    assert queue.per_tick == 1
    meter = Turnaround()
    playing = [meter.match() for _ in range(3)]
    for timing in playing:
        queue.enter(timing, 100, lambda: None)  # room and nothing waiting: at once
    room.free = 0
    started: list[int] = []
    waiting = [meter.match() for _ in range(4)]
    for n, timing in enumerate(waiting):
        queue.enter(timing, 100, lambda n=n: started.append(n))  # type: ignore[misc]
    room.free = 100
    queue.tick()
    assert started == [0] and queue.why == "the queue's starts for this tick are spent"
    queue.leave(playing[0])  # ended: its place, at once
    assert started == [0, 1]
    queue.leave(waiting[3])  # aborted while it waited: no place was freed
    assert started == [0, 1] and len(queue) == 1
    queue.leave(meter.match())  # ended before it was let start (its bots never came)
    assert started == [0, 1]
    room.free = 0
    queue.leave(playing[1])  # a place, but no room: the room decides, not the place
    assert started == [0, 1] and queue.why == "no room"
    room.free = 100
    queue.tick()  # the unused place does not carry over: one a tick again
    assert started == [0, 1, 2] and len(queue) == 0


def test_matches_waiting_for_their_bots_count_against_the_queue_limit(tmp_path: Path) -> None:
    # A flood of matches no bot comes for stays bounded: each would hold its record open
    # until its connect deadline.
    async def main() -> None:
        limits = AdmissionLimits(max_queued=2)
        running = await start_server(
            ServerConfig(host="127.0.0.1", port=0, records_dir=tmp_path, admission=limits)
        )
        try:
            async with grpc.aio.insecure_channel(running.address) as channel:
                stub = admin_pb2_grpc.MatchServiceStub(channel)
                request = admin_pb2.CreateMatchRequest(config=config())
                await stub.CreateMatch(request)
                await stub.CreateMatch(request)
                with pytest.raises(grpc.aio.AioRpcError) as full:
                    await stub.CreateMatch(request)
                assert full.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
                assert "2 matches wait to start (for their bots" in (full.value.details() or "")
                assert len(running.arena.matches) == 2
        finally:
            await running.stop(1)

    run(main())


def test_an_organiser_is_told_where_its_match_waits_until_it_starts(tmp_path: Path) -> None:
    # `medina-arena match` prints these lines: a match held by a busy server is not a hang.
    async def main() -> None:
        async with stalled(tmp_path) as (running, stub, room):
            first, second = [
                await stub.CreateMatch(admin_pb2.CreateMatchRequest(config=config()))
                for _ in range(2)
            ]
            games = []
            for n, c in enumerate((first, second)):
                games += [
                    asyncio.ensure_future(RawBot(running.address, t.token).play()) for t in c.tokens
                ]
                await queued(running, n + 1)
            said: list[str] = []
            heard = asyncio.Event()

            def say(text: str) -> None:
                said.append(text)
                heard.set()

            reporter = asyncio.ensure_future(
                report_queued(stub, second.match_id, say, poll_s=0.01, say_every_s=0)
            )
            await heard.wait()
            heard.clear()
            starts = "it starts when the server has room"
            assert said == [f"match {second.match_id} waits for the server: queued: its "
                            f"bots are here; {starts} (1 ahead)"]  # fmt: skip
            await stub.AbortMatch(admin_pb2.AbortMatchRequest(match_id=first.match_id))
            await heard.wait()  # its place changed: said again
            assert said[1].endswith(f"{starts} (0 ahead)") and len(said) == 2
            room.release()  # it starts, and the reporter ends on its own
            await reporter
            await asyncio.gather(*games)
            assert len(said) == 2
            # A match that does not wait says nothing.
            await report_queued(stub, second.match_id, say, poll_s=0.01)
            assert len(said) == 2

    run(main())
