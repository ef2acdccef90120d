"""Organiser RPCs, health, and graceful shutdown, over real gRPC on 127.0.0.1."""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import types
import weakref
from pathlib import Path
from typing import Any

import grpc
import pytest
from bounded import run
from grpc_health.v1 import health_pb2, health_pb2_grpc
from medina.records.reader import read_record
from medina.records.verify import verify_record
from medina.referee.config import MatchSettings
from medina.rpc.common import status
from medina.rpc.common.admission import AdmissionLimits, Load, LoopLag, no_room
from medina.rpc.common.config import ServerConfig
from medina.rpc.organiser import create_match
from medina.rpc.single.server import start_server
from medina.v1 import admin_pb2, admin_pb2_grpc, common_pb2, match_pb2
from medina_client.status import status_info
from records.test_verify import engine_record

from .forfeits import check_forfeit_seat
from .organiser import AUTH, TOKEN, organiser_server
from .rawbot import RawBot


def config(players: int = 2) -> match_pb2.MatchConfig:
    return match_pb2.MatchConfig(ruleset=common_pb2.RULESET_MEDINA_V2, players=players, seed=3)


def test_organiser_calls_create_list_get_and_abort(tmp_path: Path) -> None:
    async def main() -> None:
        async with organiser_server(tmp_path) as (running, stub):
            with pytest.raises(grpc.aio.AioRpcError) as denied:
                await stub.CreateMatch(admin_pb2.CreateMatchRequest(config=config()))
            assert denied.value.code() is grpc.StatusCode.UNAUTHENTICATED
            with pytest.raises(grpc.aio.AioRpcError) as bad:
                await stub.CreateMatch(
                    admin_pb2.CreateMatchRequest(config=config(players=7)), metadata=AUTH
                )
            assert bad.value.code() is grpc.StatusCode.INVALID_ARGUMENT
            assert "7 players" in (bad.value.details() or "")
            created = await stub.CreateMatch(
                admin_pb2.CreateMatchRequest(config=config()), metadata=AUTH
            )
            assert len(created.tokens) == 2 and created.tokens[0].token != created.tokens[1].token
            assert created.config.time_control.decision_ms > 0  # defaults filled in
            listed = await stub.ListMatches(admin_pb2.ListMatchesRequest(), metadata=AUTH)
            assert [m.match_id for m in listed.matches] == [created.match_id]
            assert listed.matches[0].state == admin_pb2.MATCH_STATE_WAITING
            with pytest.raises(grpc.aio.AioRpcError) as missing:
                await stub.GetMatch(admin_pb2.GetMatchRequest(match_id="nope"), metadata=AUTH)
            assert missing.value.code() is grpc.StatusCode.NOT_FOUND
            bot = RawBot(running.address, created.tokens[0].token)
            bot_task = asyncio.create_task(bot.play())
            await bot.welcomed.wait()
            aborted = await stub.AbortMatch(
                admin_pb2.AbortMatchRequest(match_id=created.match_id, reason="test"),
                metadata=AUTH,
            )
            await bot_task
            assert aborted.match.state == admin_pb2.MATCH_STATE_ABORTED
            assert aborted.match.result.ending != match_pb2.MATCH_ENDING_COMPLETE
            assert bot.ended is not None
            report = verify_record(read_record(Path(aborted.match.record_path)))
            assert report.ok and "aborted" in report.note

    run(main())


def test_health_and_graceful_shutdown(tmp_path: Path) -> None:
    async def main() -> None:
        running = await start_server(ServerConfig(host="127.0.0.1", port=0, records_dir=tmp_path))
        async with grpc.aio.insecure_channel(running.address) as channel:
            health = health_pb2_grpc.HealthStub(channel)
            reply = await health.Check(health_pb2.HealthCheckRequest(service=""))  # type: ignore[attr-defined]
            assert reply.status == health_pb2.HealthCheckResponse.SERVING
        hosted = running.arena.create(MatchSettings("medina-v2", 2, 4))
        await running.stop(grace_s=0.2)  # nobody connects: the match is aborted, not lost
        assert hosted.task is not None and hosted.task.done()
        report = verify_record(read_record(hosted.record_path))
        assert report.ok and not report.complete
        assert not running.arena.accepting

    run(main())


def test_a_match_whose_record_cannot_be_written_is_not_created(tmp_path: Path) -> None:
    blocked = tmp_path / "records"
    blocked.write_text("a file where the records directory should be\n")

    async def main() -> None:
        running = await start_server(ServerConfig(host="127.0.0.1", port=0, records_dir=blocked))
        try:
            async with grpc.aio.insecure_channel(running.address) as channel:
                stub = admin_pb2_grpc.MatchServiceStub(channel)
                with pytest.raises(grpc.aio.AioRpcError) as failed:
                    await stub.CreateMatch(admin_pb2.CreateMatchRequest(config=config()))
                assert failed.value.code() is grpc.StatusCode.UNAVAILABLE
                assert "cannot create the match record" in (failed.value.details() or "")
                listed = await stub.ListMatches(admin_pb2.ListMatchesRequest())
                assert list(listed.matches) == []
        finally:
            await running.stop(1)

    asyncio.run(asyncio.wait_for(main(), 30))


def test_create_match_is_refused_while_the_records_disk_is_below_its_reserve(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    st = os.statvfs(tmp_path)
    beyond_mb = (st.f_bavail * st.f_frsize + 10**9) / 1e6  # more than this disk has free

    async def main() -> None:
        short = await start_server(
            ServerConfig(
                host="127.0.0.1", port=0, records_dir=tmp_path, records_reserve_mb=beyond_mb
            )
        )
        # Said as the server starts, not first with a refused CreateMatch.
        started = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
        assert any("less than the" in m and "kept in reserve" in m for m in started), started
        roomy = await start_server(
            ServerConfig(host="127.0.0.1", port=0, records_dir=tmp_path, records_reserve_mb=0)
        )
        try:
            async with grpc.aio.insecure_channel(short.address) as channel:
                stub = admin_pb2_grpc.MatchServiceStub(channel)
                with pytest.raises(grpc.aio.AioRpcError) as failed:
                    await stub.CreateMatch(admin_pb2.CreateMatchRequest(config=config()))
                assert failed.value.code() is grpc.StatusCode.UNAVAILABLE
                info = status_info(failed.value.trailing_metadata())
                assert info.reason == "RECORD_UNWRITABLE"
                assert int(info.metadata["retry_after_ms"]) > 0
                assert "kept in reserve (--records-reserve-mb)" in (failed.value.details() or "")
                listed = await stub.ListMatches(admin_pb2.ListMatchesRequest())
                assert list(listed.matches) == [] and list(tmp_path.iterdir()) == []
            async with grpc.aio.insecure_channel(roomy.address) as channel:
                stub = admin_pb2_grpc.MatchServiceStub(channel)
                await stub.CreateMatch(admin_pb2.CreateMatchRequest(config=config()))
        finally:
            await short.stop(1)
            await roomy.stop(1)

    run(main())


async def create_matches(stub: Any, n: int) -> list[str]:
    """The ids of ``n`` matches created one after the other (so in that order of time)."""
    ids = []
    for _ in range(n):
        created = await stub.CreateMatch(
            admin_pb2.CreateMatchRequest(config=config()), metadata=AUTH
        )
        ids.append(created.match_id)
    return ids


def test_list_matches_pages_newest_first_and_filters_by_state(tmp_path: Path) -> None:
    async def main() -> None:
        async with organiser_server(tmp_path) as (_running, stub):
            ids = await create_matches(stub, 5)
            await stub.AbortMatch(admin_pb2.AbortMatchRequest(match_id=ids[1]), metadata=AUTH)
            seen: list[str] = []
            token = ""
            extra = 0
            while True:
                page = await stub.ListMatches(
                    admin_pb2.ListMatchesRequest(page_size=2, page_token=token), metadata=AUTH
                )
                assert page.total_size == 5 + extra and len(page.matches) <= 2
                seen += [m.match_id for m in page.matches]
                token = page.next_page_token
                if not token:
                    break
                # a match created between two pages never shifts the next page
                await stub.CreateMatch(admin_pb2.CreateMatchRequest(config=config()), metadata=AUTH)
                extra += 1
            assert seen == ids[::-1]
            aborted = await stub.ListMatches(
                admin_pb2.ListMatchesRequest(states=[admin_pb2.MATCH_STATE_ABORTED]),
                metadata=AUTH,
            )
            assert [m.match_id for m in aborted.matches] == [ids[1]]
            assert [s.seat for s in aborted.matches[0].seats] == [0, 1]
            for bad, field in (
                (admin_pb2.ListMatchesRequest(page_size=0), "page_size 0"),
                (admin_pb2.ListMatchesRequest(page_token="junk"), "page_token"),
                # Unknown states answered an empty page, as if no match were in them.
                (
                    admin_pb2.ListMatchesRequest(states=[99, -5, 1]),  # type: ignore[list-item]
                    "states -5, 99: not a MatchState this server knows (0..5)",
                ),
            ):
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await stub.ListMatches(bad, metadata=AUTH)
                assert refused.value.code() is grpc.StatusCode.INVALID_ARGUMENT
                assert field in (refused.value.details() or "")

    run(main())


def test_finished_matches_leave_memory_and_answer_from_their_records(tmp_path: Path) -> None:
    async def main() -> None:
        running = await start_server(
            ServerConfig(host="127.0.0.1", port=0, records_dir=tmp_path, organiser_token=TOKEN)
        )
        running.arena.keep_finished = 1
        try:
            played = []
            for seed in (1, 2, 3):
                hosted = running.arena.create(MatchSettings("medina-v2", 2, seed))
                bots = [RawBot(running.address, t) for t in hosted.tokens]
                await asyncio.gather(*(b.play() for b in bots))
                assert hosted.task is not None
                await hosted.task
                played.append(hosted)
            assert list(running.arena.matches) == [played[2].match_id]  # only the newest
            assert running.arena.find_seat(played[0].tokens[0]) is None  # tokens pruned
            async with grpc.aio.insecure_channel(running.address) as channel:
                stub = admin_pb2_grpc.MatchServiceStub(channel)
                old = await stub.GetMatch(
                    admin_pb2.GetMatchRequest(match_id=played[0].match_id), metadata=AUTH
                )
                assert old.match.state == admin_pb2.MATCH_STATE_FINISHED
                assert old.match.from_record and old.match.result.seats
                listed = await stub.ListMatches(admin_pb2.ListMatchesRequest(), metadata=AUTH)
                assert {m.match_id for m in listed.matches} == {h.match_id for h in played}
                with pytest.raises(grpc.aio.AioRpcError) as watch:
                    async for _ in admin_pb2_grpc.SpectatorServiceStub(channel).Watch(
                        admin_pb2.WatchRequest(match_id=played[0].match_id)
                    ):
                        pass
                assert watch.value.code() is grpc.StatusCode.FAILED_PRECONDITION
                assert "only its record remains" in (watch.value.details() or "")
        finally:
            await running.stop(1)

    run(main())


def test_a_match_that_left_memory_is_listed_in_the_state_it_ended_in(tmp_path: Path) -> None:
    # The server notes how a match ended when it leaves memory, without reading its record
    # back: an aborted match is listed as aborted, a finished one as finished.
    async def main() -> None:
        running = await start_server(
            ServerConfig(host="127.0.0.1", port=0, records_dir=tmp_path, organiser_token=TOKEN)
        )
        running.arena.keep_finished = 0
        try:
            aborted = running.arena.create(MatchSettings("medina-v2", 2, 1))
            aborted.match.abort("test")
            assert aborted.task is not None
            await aborted.task
            finished = running.arena.create(MatchSettings("medina-v2", 2, 2))
            await asyncio.gather(*(RawBot(running.address, t).play() for t in finished.tokens))
            assert finished.task is not None
            await finished.task
            assert not running.arena.matches
            async with grpc.aio.insecure_channel(running.address) as channel:
                stub = admin_pb2_grpc.MatchServiceStub(channel)
                for state, hosted in (
                    (admin_pb2.MATCH_STATE_ABORTED, aborted),
                    (admin_pb2.MATCH_STATE_FINISHED, finished),
                ):
                    listed = await stub.ListMatches(
                        admin_pb2.ListMatchesRequest(states=[state]), metadata=AUTH
                    )
                    assert [m.match_id for m in listed.matches] == [hosted.match_id]
                    assert listed.matches[0].from_record and listed.matches[0].state == state
        finally:
            await running.stop(1)

    run(main())


def test_a_match_that_left_memory_is_freed_without_a_garbage_collection(tmp_path: Path) -> None:
    # A reference cycle (match -> seats -> match) would keep every finished match until a
    # full collection, which a busy server runs rarely: memory grew with every match.
    async def main() -> None:
        running = await start_server(
            ServerConfig(host="127.0.0.1", port=0, records_dir=tmp_path, organiser_token=TOKEN)
        )
        running.arena.keep_finished = 1
        gone: list[weakref.ref[Any]] = []
        try:
            for seed in (1, 2, 3):
                hosted = running.arena.create(MatchSettings("medina-v2", 2, seed))
                bots = [RawBot(running.address, t) for t in hosted.tokens]
                await asyncio.gather(*(b.play() for b in bots))
                assert hosted.task is not None
                await hosted.task
                gone += [weakref.ref(hosted.match), *(weakref.ref(s) for s in hosted.seats)]
                del hosted, bots
        finally:
            await running.stop(1)
        assert [r() is None for r in gone[:6]] == [True] * 6  # the two evicted matches

    gc.disable()
    try:
        run(main())
    finally:
        gc.enable()


def cyclic_frames(names: set[str]) -> list[str]:
    """The functions named in ``names`` whose frames only a full collection would free."""
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        gc.collect()
        return [
            o.f_code.co_name
            for o in gc.garbage
            if isinstance(o, types.FrameType) and o.f_code.co_name in names
        ]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()


def test_a_refused_create_match_keeps_no_running_match_alive(tmp_path: Path) -> None:
    # grpc keeps an aborted call's exception, and with it the handler's frames, in a
    # reference cycle until a full collection: when a refusal aborted, a frame that held the
    # list of running matches kept every one of them (whole games and seats) alive with it,
    # and RSS grew ~12 KB a match. A refusal now sets the call's status and returns.
    async def main() -> None:
        running = await start_server(
            ServerConfig(
                host="127.0.0.1", port=0, records_dir=tmp_path, organiser_token=TOKEN,
                admission=AdmissionLimits(max_matches=1),
            )
        )  # fmt: skip
        running.arena.keep_finished = 0
        try:
            async with grpc.aio.insecure_channel(running.address) as channel:
                stub = admin_pb2_grpc.MatchServiceStub(channel)
                request = admin_pb2.CreateMatchRequest(config=config())
                first = await stub.CreateMatch(request, metadata=AUTH)
                hosted = running.arena.get(first.match_id)
                assert hosted is not None
                alive = weakref.ref(hosted.match)
                del hosted
                gc.collect()
                for n in range(3):  # with a request id too: refused, it is not kept
                    again = admin_pb2.CreateMatchRequest(config=config(), request_id=f"r{n % 2}")
                    with pytest.raises(grpc.aio.AioRpcError) as full:
                        await stub.CreateMatch(again, metadata=AUTH)
                    assert full.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
                    reason, info = status.reason_of(full.value.trailing_metadata())
                    assert reason == "SERVER_FULL" and int(info["retry_after_ms"]) >= 1000
                # A refusal sets the call's status and returns: no exception, so none of the
                # handler's frames waits in a cycle for a full collection.
                assert (
                    cyclic_frames({"CreateMatch", "create", "_admit", "once", "create_once"}) == []
                )
                await stub.AbortMatch(
                    admin_pb2.AbortMatchRequest(match_id=first.match_id), metadata=AUTH
                )
                for _ in range(100):  # the match's task ends on the loop's next turns
                    if first.match_id not in running.arena.matches:
                        break
                    await asyncio.sleep(0)
                assert first.match_id not in running.arena.matches
                assert alive() is None
        finally:
            await running.stop(1)

    gc.disable()
    try:
        run(main())
    finally:
        gc.enable()


def test_create_match_is_refused_past_the_admission_limits(tmp_path: Path) -> None:
    async def main() -> None:
        # No start queue: a match the server has no room for is refused (labelled).
        limits = AdmissionLimits(max_matches=2, max_loop_lag_ms=500, max_queued=0)
        running = await start_server(
            ServerConfig(
                host="127.0.0.1", port=0, records_dir=tmp_path, organiser_token=TOKEN,
                admission=limits,
            )
        )  # fmt: skip
        try:
            async with grpc.aio.insecure_channel(running.address) as channel:
                stub = admin_pb2_grpc.MatchServiceStub(channel)
                request = admin_pb2.CreateMatchRequest(config=config())
                first = await stub.CreateMatch(request, metadata=AUTH)
                await stub.CreateMatch(request, metadata=AUTH)
                with pytest.raises(grpc.aio.AioRpcError) as full:
                    await stub.CreateMatch(request, metadata=AUTH)
                assert full.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
                assert "limit of 2 matches waiting or running" in (full.value.details() or "")
                assert len(running.arena.matches) == 2  # nothing was created
                await stub.AbortMatch(
                    admin_pb2.AbortMatchRequest(match_id=first.match_id), metadata=AUTH
                )
                third = await stub.CreateMatch(request, metadata=AUTH)  # a place came free
                await stub.AbortMatch(
                    admin_pb2.AbortMatchRequest(match_id=third.match_id), metadata=AUTH
                )
                # One place is free, but the loop is late (as the lag ticker would measure a
                # 5 s stall; it takes about a second to fade below the limit).
                running.lag.note(5000)
                with pytest.raises(grpc.aio.AioRpcError) as lagging:
                    await stub.CreateMatch(request, metadata=AUTH)
                assert lagging.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
                assert "event loop runs" in (lagging.value.details() or "")
                hint = status_info(lagging.value.trailing_metadata())
                assert hint.reason == "SERVER_FULL"
                # The base wait, spread by up to half again (few organisers are waiting).
                assert 1000 <= int(hint.metadata["retry_after_ms"]) <= 1500
        finally:
            await running.stop(1)

    run(main())


def test_the_lag_estimate_keeps_a_high_and_lets_it_fade() -> None:
    lag = LoopLag()
    lag.note(300)
    lag.note(10)
    assert lag.ms == 300 * 0.8  # a one-off pause fades, it is not forgotten at once
    for _ in range(30):
        lag.note(0)
    assert lag.ms < 1
    limits = AdmissionLimits(max_matches=None, max_loop_lag_ms=100)
    assert no_room(limits, Load(50, None), 99) is None
    assert "event loop runs 150 ms late" in (no_room(limits, Load(0, None), 150) or "")
    with pytest.raises(ValueError, match="max_matches must be at least 1"):
        AdmissionLimits(max_matches=0)


def test_a_loop_late_by_a_share_of_the_shortest_clock_refuses_new_matches() -> None:
    limits = AdmissionLimits()  # the defaults: 10 % of the shortest clock, at least 10 ms
    assert no_room(limits, Load(5, 100), 9.9) is None
    assert "at capacity" in (no_room(limits, Load(5, 100), 10.0) or "")
    assert no_room(limits, Load(5, 5000), 400) is None  # a 5 s clock takes a 0.4 s lag
    assert "500 ms" in (no_room(limits, Load(5, 5000), 500) or "")
    assert no_room(limits, Load(5, 20), 9) is None  # the floor: never below 10 ms
    assert no_room(limits, Load(5, None), 50) is None  # no clock known: only the absolute limit
    off = AdmissionLimits(max_lag_share=None)
    assert no_room(off, Load(5, 100), 99) is None
    with pytest.raises(ValueError, match="max_lag_share"):
        AdmissionLimits(max_lag_share=0)


def test_create_match_waits_out_a_full_server_under_one_request_id(tmp_path: Path) -> None:
    async def main() -> None:
        running = await start_server(  # no start queue: refused while full
            ServerConfig(
                host="127.0.0.1", port=0, records_dir=tmp_path, organiser_token=TOKEN,
                admission=AdmissionLimits(max_queued=0),
            )
        )  # fmt: skip
        try:
            async with grpc.aio.insecure_channel(running.address) as channel:
                stub = admin_pb2_grpc.MatchServiceStub(channel)
                request = admin_pb2.CreateMatchRequest(config=config())
                request.config.time_control.decision_ms = 100
                running.lag.note(50)  # a loop 50 ms late: full for a 100 ms clock ...
                with pytest.raises(grpc.aio.AioRpcError) as full:
                    await stub.CreateMatch(request, metadata=AUTH)
                assert status_info(full.value.trailing_metadata()).reason == "SERVER_FULL"
                # ... until the lag fades (a second or so): create_match waits as asked.
                created = await create_match(stub, request, metadata=AUTH, give_up_s=30)
                assert list(running.arena.matches) == [created.match_id]
                with pytest.raises(grpc.aio.AioRpcError):  # not retried: a bad request
                    await create_match(stub, admin_pb2.CreateMatchRequest(), metadata=AUTH)
        finally:
            await running.stop(1)

    run(main())


def test_forfeit_seat_forfeits_at_once_and_refuses_as_documented(tmp_path: Path) -> None:
    async def main() -> None:
        running = await start_server(
            ServerConfig(host="127.0.0.1", port=0, records_dir=tmp_path, organiser_token=TOKEN)
        )
        try:
            await check_forfeit_seat(running.address, AUTH)
        finally:
            await running.stop(1)

    run(main(), timeout=120)


def test_list_matches_pages_through_live_matches_then_earlier_records(tmp_path: Path) -> None:
    # Earlier runs' records are listed after this run's matches, newest file first, taken
    # from the catalog's order page by page; totals and state filters count both.
    # More records than a page holds after any token: a page must start where the last
    # one ended, not from the newest record.
    records = [engine_record(tmp_path, "medina-v2", 2, seed) for seed in (1, 2, 4, 5)]
    records.append(engine_record(tmp_path, "medina-v2", 2, 3, stop_after=6))
    times = dict(zip(records, (30, 10, 50, 40, 20), strict=True))
    for path, t in times.items():
        os.utime(path, (1_000_000 + t, 1_000_000 + t))
    by_time = [p.stem for p in sorted(records, key=times.__getitem__, reverse=True)]

    async def listing(stub: Any, *states: Any) -> list[str]:
        seen: list[str] = []
        token = ""
        while True:
            page = await stub.ListMatches(
                admin_pb2.ListMatchesRequest(page_size=2, page_token=token, states=states),
                metadata=AUTH,
            )
            whole = await stub.ListMatches(
                admin_pb2.ListMatchesRequest(states=states), metadata=AUTH
            )
            assert page.total_size == whole.total_size == len(whole.matches)
            seen += [m.match_id for m in page.matches]
            token = page.next_page_token
            if not token:
                return seen

    async def main() -> None:
        async with organiser_server(tmp_path) as (_running, stub):
            ids = await create_matches(stub, 3)
            await stub.AbortMatch(admin_pb2.AbortMatchRequest(match_id=ids[0]), metadata=AUTH)
            assert await listing(stub) == [*ids[::-1], *by_time]
            aborted = await listing(stub, admin_pb2.MATCH_STATE_ABORTED)
            assert aborted == [ids[0], records[4].stem]
            finished = await listing(stub, admin_pb2.MATCH_STATE_FINISHED)
            assert finished == [m for m in by_time if m != records[4].stem]
            waiting = await listing(stub, admin_pb2.MATCH_STATE_WAITING)
            assert waiting == [ids[2], ids[1]]

    asyncio.run(asyncio.wait_for(main(), 30))


def test_long_reasons_are_refused_and_long_ids_are_answered_readably(tmp_path: Path) -> None:
    # A reason is kept in every seat's result, which every GetMatch and ListMatches answers:
    # one of megabytes made those answers larger than gRPC sends, for good. An id echoed
    # whole in an error made its trailers larger than a client accepts.
    async def main() -> None:
        async with organiser_server(tmp_path) as (_running, stub):
            made = await stub.CreateMatch(
                admin_pb2.CreateMatchRequest(config=config()), metadata=AUTH
            )
            long = "x" * 501
            for call in (
                stub.ForfeitSeat(
                    admin_pb2.ForfeitSeatRequest(match_id=made.match_id, seat=0, reason=long),
                    metadata=AUTH,
                ),
                stub.AbortMatch(
                    admin_pb2.AbortMatchRequest(match_id=made.match_id, reason=long),
                    metadata=AUTH,
                ),
            ):
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await call
                assert refused.value.code() is grpc.StatusCode.INVALID_ARGUMENT
                assert "reason is 501 characters long; at most 500" in str(refused.value.details())
                info = status_info(refused.value.trailing_metadata())
                assert info.reason == "REQUEST_INVALID"
            ended = await stub.AbortMatch(
                admin_pb2.AbortMatchRequest(match_id=made.match_id, reason="y" * 500),
                metadata=AUTH,
            )
            assert all(s.detail.startswith("y" * 500) for s in ended.match.result.seats)
            listed = await stub.ListMatches(admin_pb2.ListMatchesRequest(), metadata=AUTH)
            assert [m.match_id for m in listed.matches] == [made.match_id]
            for unknown in ("z" * 5000, "z" * 200_000):
                with pytest.raises(grpc.aio.AioRpcError) as missing:
                    await stub.GetMatch(admin_pb2.GetMatchRequest(match_id=unknown), metadata=AUTH)
                assert missing.value.code() is grpc.StatusCode.NOT_FOUND, missing.value
                info = status_info(missing.value.trailing_metadata())
                assert info.reason == "MATCH_NOT_FOUND"
                assert len(info.metadata["match_id"]) == status.MAX_METADATA_CHARS
                assert len(missing.value.details() or "") <= status.MAX_MESSAGE_CHARS

    run(main())
