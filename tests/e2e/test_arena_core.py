"""The arena end to end over real gRPC on 127.0.0.1: matches, misbehaving bots, spectators,
handshake errors and records."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest
from bounded import run
from medina.engine import CONFIGURATIONS
from medina.records.reader import read_record
from medina.records.verify import verify_record
from medina.referee.config import MatchSettings, Policies, TimeControl
from medina.referee.outcome import MatchOutcome, Termination
from medina.rpc.common.config import ServerConfig
from medina.rpc.single.server import RunningServer, start_server
from medina.v1 import admin_pb2, admin_pb2_grpc, arena_pb2, arena_pb2_grpc, common_pb2, game_pb2

from .rawbot import RawBot, collect_tasks, first_legal

FAST = TimeControl(decision_ms=150, bank_ms=0, first_decision_extra_ms=0, grace_ms=20)


async def serve(tmp: Path) -> RunningServer:
    return await start_server(ServerConfig(host="127.0.0.1", port=0, records_dir=tmp))


async def finish(
    running: RunningServer, hosted_task: asyncio.Task[MatchOutcome] | None
) -> MatchOutcome:
    assert hosted_task is not None
    return await hosted_task


def verified(path: Path) -> None:
    report = verify_record(read_record(path))
    assert report.ok, report.summary()


@pytest.mark.parametrize(("ruleset", "players"), CONFIGURATIONS)
def test_full_match_over_grpc(tmp_path: Path, ruleset: str, players: int) -> None:
    async def main() -> None:
        running = await serve(tmp_path)
        try:
            hosted = running.arena.create(MatchSettings(ruleset, players, 21))
            bots = [RawBot(running.address, token) for token in hosted.tokens]
            await asyncio.gather(*(b.play() for b in bots))
            outcome = await finish(running, hosted.task)
            assert outcome.complete
            assert all(s.termination is Termination.NORMAL for s in outcome.seats)
            for bot in bots:
                assert bot.ended is not None
                assert [s.total for s in bot.ended.result.seats] == [s.total for s in outcome.seats]
            verified(hosted.record_path)
        finally:
            await running.stop(1)

    run(main())


def test_a_bot_without_updates_still_sees_every_event_once(tmp_path: Path) -> None:
    async def main() -> None:
        running = await serve(tmp_path)
        try:
            hosted = running.arena.create(MatchSettings("medina-v2", 3, 8))
            quiet = RawBot(running.address, hosted.tokens[0], omit_updates=True)
            others = [RawBot(running.address, t) for t in hosted.tokens[1:]]
            await asyncio.gather(quiet.play(), *(b.play() for b in others))
            outcome = await finish(running, hosted.task)
            assert outcome.complete
            assert quiet.of_kind("update") == [] and others[0].of_kind("update") != []
            assert quiet.welcome is not None and quiet.ended is not None
            events = list(quiet.welcome.observation.events)
            for m in quiet.of_kind("request"):
                events += m.request.observation.events
            events += quiet.ended.observation.events
            indexes = sorted({e.index for e in events})
            assert indexes == list(range(len(indexes)))
            assert events[-1].WhichOneof("event") == "game_over"
            verified(hosted.record_path)
        finally:
            await running.stop(1)

    run(main())


def test_collecting_tasks_passes_over_tasks_that_run_no_named_coroutine() -> None:
    """An async generator dropped unfinished is closed by a task of its own, whose awaitable
    (``async_generator_athrow``) has no ``__qualname__``: the hook must pass over it."""

    async def main() -> None:
        async def numbers() -> AsyncIterator[int]:
            yield 1

        gen = numbers()
        await gen.__anext__()
        del gen  # the loop's finalizer hook asks for its aclose() to run as a task
        await asyncio.sleep(0)  # that task is created now, and runs after this step
        assert any(not hasattr(t.get_coro(), "__qualname__") for t in asyncio.all_tasks())
        found: set[asyncio.Task[object]] = set()
        collect_tasks(found, main.__qualname__)(
            RawBot("127.0.0.1:1", "t"), arena_pb2.PlayResponse()
        )
        assert found == {asyncio.current_task()}

    asyncio.run(main())


def test_a_session_reader_ends_with_its_call_and_is_never_cancelled(tmp_path: Path) -> None:
    """Cancelling a pending grpc.aio read leaks that read's state (about 80 bytes a stream,
    measured with heaptrack over thousands of matches), so a session's reader task must end
    on its own once its call is over: after MatchEnded, and when the bot vanished."""

    async def main() -> None:
        running = await serve(tmp_path)
        readers: set[asyncio.Task[object]] = set()
        collect = collect_tasks(readers, "ArenaServicer._read")
        try:
            settings = MatchSettings("medina-v2", 3, 8, policies=Policies(reconnect_grace_ms=0))
            hosted = running.arena.create(settings)
            bots = [RawBot(running.address, t, hook=collect) for t in hosted.tokens]
            bots[2].leave_after_requests = 3
            await asyncio.gather(*(b.play() for b in bots))
            outcome = await finish(running, hosted.task)
            assert outcome.seats[2].termination is not Termination.NORMAL
            assert len(readers) == 3
            _done, pending = await asyncio.wait(readers, timeout=10)
            assert not pending
            assert not any(t.cancelled() for t in readers)
        finally:
            await running.stop(1)

    run(main())


def stall_on(seat_requests: set[int]) -> object:
    """A chooser that never answers its n-th requests (1-based) and plays legally otherwise."""
    count = {"n": 0}

    def choose(request: arena_pb2.DecisionRequest, attempt: int) -> game_pb2.Action | None:
        if attempt == 0:
            count["n"] += 1
        return None if count["n"] in seat_requests else first_legal(request, attempt)

    return choose


def test_timeouts_give_strikes_then_a_forfeit(tmp_path: Path) -> None:
    async def main() -> None:
        running = await serve(tmp_path)
        try:
            settings = MatchSettings("medina-v2", 3, 4, time=FAST, policies=Policies(max_strikes=2))
            hosted = running.arena.create(settings)
            staller = RawBot(running.address, hosted.tokens[1], chooser=stall_on({1, 2, 3, 4, 5}))  # type: ignore[arg-type]
            others = [RawBot(running.address, t) for t in (hosted.tokens[0], hosted.tokens[2])]
            await asyncio.gather(staller.play(), *(b.play() for b in others))
            outcome = await finish(running, hosted.task)
            seat = outcome.seats[1]
            assert seat.termination is Termination.TIMEOUT and seat.strikes == 2
            assert seat.rank == 3
            assert {outcome.seats[0].termination, outcome.seats[2].termination} == {
                Termination.NORMAL
            }
            record = read_record(hosted.record_path)
            sources = [d.source for _n, d in record.decisions if d.seat == 1]
            assert sources[0] == 2 and 3 in sources  # TIMEOUT, then FALLBACK after the forfeit
            verified(hosted.record_path)
        finally:
            await running.stop(1)

    run(main())


def test_illegal_actions_are_rejected_and_the_bot_recovers(tmp_path: Path) -> None:
    def clumsy(request: arena_pb2.DecisionRequest, attempt: int) -> game_pb2.Action:
        if attempt == 0:  # a wall in the middle of the city: always illegal
            return game_pb2.Action(
                kind=game_pb2.ACTION_KIND_WALL, square=5 * 16 + 5
            )  # F6, 2p board
        return first_legal(request, attempt)

    async def main() -> None:
        running = await serve(tmp_path)
        try:
            hosted = running.arena.create(MatchSettings("medina-v2", 2, 6))
            bad = RawBot(running.address, hosted.tokens[0], chooser=clumsy)
            good = RawBot(running.address, hosted.tokens[1])
            await asyncio.gather(bad.play(), good.play())
            outcome = await finish(running, hosted.task)
            assert outcome.seats[0].termination is Termination.NORMAL
            rejected = [m.rejected for m in bad.of_kind("rejected")]
            assert rejected and all(
                r.code == common_pb2.ERROR_CODE_ILLEGAL_ACTION for r in rejected
            )
            assert rejected[0].rule == "wall-space" and "F6" in rejected[0].message
            requests = {m.request.request_id for m in bad.of_kind("request")}
            assert {r.request_id for r in rejected} <= requests
            verified(hosted.record_path)
        finally:
            await running.stop(1)

    run(main())


def test_a_bot_that_disconnects_resumes_its_seat(tmp_path: Path) -> None:
    async def main() -> None:
        running = await serve(tmp_path)
        try:
            hosted = running.arena.create(MatchSettings("medina-v2", 2, 8))
            leaver = RawBot(running.address, hosted.tokens[0], leave_after_requests=3)
            other = RawBot(running.address, hosted.tokens[1])
            other_task = asyncio.create_task(other.play())
            await leaver.play()  # returns when it walks away at its 3rd request
            open_id = leaver.of_kind("request")[-1].request.request_id
            back = RawBot(running.address, hosted.tokens[0], resume_token=leaver.resume_token)
            await back.play()
            await other_task
            outcome = await finish(running, hosted.task)
            assert back.welcome is not None and back.welcome.seat == 0
            assert back.of_kind("request")[0].request.request_id == open_id
            assert outcome.seats[0].termination is Termination.NORMAL
            verified(hosted.record_path)
        finally:
            await running.stop(1)

    run(main())


def test_a_restarted_bot_rejoins_with_its_seat_token_alone(tmp_path: Path) -> None:
    async def main() -> None:
        running = await serve(tmp_path)
        try:
            hosted = running.arena.create(MatchSettings("medina-v2", 2, 8))
            leaver = RawBot(running.address, hosted.tokens[0], leave_after_requests=2)
            other = RawBot(running.address, hosted.tokens[1])
            other_task = asyncio.create_task(other.play())
            await leaver.play()
            async with asyncio.timeout(10):  # the server notices the closed stream
                while hosted.seats[0].connection is not None:
                    await asyncio.sleep(0.01)
            restarted = RawBot(running.address, hosted.tokens[0])  # no resume token
            await restarted.play()
            await other_task
            outcome = await finish(running, hosted.task)
            assert restarted.welcome is not None and restarted.welcome.seat == 0
            assert outcome.seats[0].termination is Termination.NORMAL
            verified(hosted.record_path)
        finally:
            await running.stop(1)

    run(main())


def test_a_bot_that_leaves_for_good_is_played_out(tmp_path: Path) -> None:
    async def main() -> None:
        running = await serve(tmp_path)
        try:
            settings = MatchSettings(
                "medina-v2", 3, 9, time=FAST, policies=Policies(reconnect_grace_ms=100)
            )
            hosted = running.arena.create(settings)
            leaver = RawBot(running.address, hosted.tokens[2], leave_after_requests=2)
            others = [RawBot(running.address, t) for t in hosted.tokens[:2]]
            await asyncio.gather(leaver.play(), *(b.play() for b in others))
            outcome = await finish(running, hosted.task)
            assert outcome.complete
            assert outcome.seats[2].termination in (Termination.DISCONNECTED, Termination.CRASHED)
            assert outcome.seats[2].rank == 3
            verified(hosted.record_path)
        finally:
            await running.stop(1)

    run(main())


def test_spectators_see_every_public_event_once(tmp_path: Path) -> None:
    async def main() -> None:
        running = await serve(tmp_path)
        try:
            hosted = running.arena.create(MatchSettings("medina-v1-2p", 2, 10))
            async with grpc.aio.insecure_channel(running.address) as channel:
                watch = admin_pb2_grpc.SpectatorServiceStub(channel).Watch(
                    admin_pb2.WatchRequest(match_id=hosted.match_id)
                )
                bots = [RawBot(running.address, t) for t in hosted.tokens]
                play = asyncio.gather(*(b.play() for b in bots))
                messages = [m async for m in watch]
                await play
            snapshot = messages[0].snapshot
            assert all(not v.HasField("supply") for v in snapshot.seats)
            events = list(snapshot.events)
            for m in messages[1:-1]:
                events.extend(m.update.events)
            assert [e.index for e in events] == list(range(len(events)))
            assert events[-1].WhichOneof("event") == "game_over"
            assert messages[-1].HasField("result")
        finally:
            await running.stop(1)

    run(main())


@pytest.mark.parametrize(
    ("hello", "code", "fragment"),
    [
        ({"protocol_version": 2}, grpc.StatusCode.FAILED_PRECONDITION, "protocol version 2"),
        ({"token": "nope"}, grpc.StatusCode.UNAUTHENTICATED, "unknown seat token"),
    ],
)
def test_handshake_errors(
    tmp_path: Path, hello: dict[str, object], code: grpc.StatusCode, fragment: str
) -> None:
    async def main() -> None:
        running = await serve(tmp_path)
        try:
            hosted = running.arena.create(MatchSettings("medina-v2", 2, 1))
            fields: dict[str, object] = {"protocol_version": 1, "token": hosted.tokens[0]}
            fields.update(hello)
            bot = RawBot(running.address, str(fields["token"]))
            bot.protocol_version = int(str(fields["protocol_version"]))
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await bot.play()
            assert info.value.code() is code
            assert fragment in (info.value.details() or "")
        finally:
            await running.stop(1)

    run(main())


def test_a_taken_seat_needs_the_resume_token(tmp_path: Path) -> None:
    async def main() -> None:
        running = await serve(tmp_path)
        try:
            hosted = running.arena.create(MatchSettings("medina-v2", 2, 1))
            holder = RawBot(running.address, hosted.tokens[0])
            task = asyncio.create_task(holder.play())
            await holder.welcomed.wait()
            intruder = RawBot(running.address, hosted.tokens[0])
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await intruder.play()
            assert info.value.code() is grpc.StatusCode.ALREADY_EXISTS
            assert "resume token" in (info.value.details() or "")
            async with grpc.aio.insecure_channel(running.address) as channel:
                call = arena_pb2_grpc.ArenaServiceStub(channel).Play(
                    iter([arena_pb2.PlayRequest(reply=arena_pb2.Reply(request_id=1))])
                )
                with pytest.raises(grpc.aio.AioRpcError) as info2:
                    async for _ in call:
                        pass
                assert info2.value.code() is grpc.StatusCode.INVALID_ARGUMENT
            # The resume token alone opens nothing: the seat token goes with it.
            assert holder.welcome is not None
            alone = RawBot(running.address, "", resume_token=holder.welcome.resume_token)
            with pytest.raises(grpc.aio.AioRpcError) as info3:
                await alone.play()
            assert info3.value.code() is grpc.StatusCode.UNAUTHENTICATED
            assert "Hello.token is empty: send the seat token" in (info3.value.details() or "")
            hosted.match.abort("test over")
            await task
        finally:
            await running.stop(1)

    run(main())


def test_a_stream_whose_seat_is_taken_over_is_told_so_and_the_newer_one_plays_on(
    tmp_path: Path,
) -> None:
    # It ended OK with no MatchEnded: a bot told to resume after such an end took the seat
    # back, and two copies holding one resume token went on taking it from each other.
    async def main() -> None:
        running = await serve(tmp_path)
        try:
            hosted = running.arena.create(MatchSettings("medina-v2", 2, 1))
            # Seat 0's first copy says nothing after its Hello (a copy that hangs or sleeps).
            first = RawBot(
                running.address, hosted.tokens[0], chooser=lambda _r, _n: None, keep_status=True
            )
            held = asyncio.create_task(first.play())
            await first.welcomed.wait()
            assert first.welcome is not None
            second = RawBot(
                running.address, hosted.tokens[0], resume_token=first.welcome.resume_token
            )
            other = RawBot(running.address, hosted.tokens[1])
            await asyncio.gather(second.play(), other.play())
            assert second.ended is not None and other.ended is not None
            await held
            assert first.status is grpc.StatusCode.ABORTED, first.status
            assert first.reason == "SEAT_TAKEN_OVER"
            assert "taken over by a newer stream" in first.details
            await finish(running, hosted.task)
        finally:
            await running.stop(1)

    run(main())


def test_a_bot_name_cannot_write_a_line_of_the_servers_log(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="medina.rpc")

    async def main() -> None:
        running = await serve(tmp_path)
        try:
            hosted = running.arena.create(MatchSettings("medina-v2", 2, 5))
            # Control characters are refused at the Hello (HELLO_INVALID); a bidi control,
            # which reorders the line it is shown in, is taken and logged escaped.
            names = ["evil\u202eenil degrof", "plain"]
            bots = [
                RawBot(running.address, t, name=n)
                for t, n in zip(hosted.tokens, names, strict=True)
            ]
            await asyncio.gather(*(b.play() for b in bots))
            await finish(running, hosted.task)
        finally:
            await running.stop(1)

    run(main())
    said = [r.getMessage() for r in caplog.records if r.getMessage().endswith(" connected")]
    assert any("evil\\u202eenil degrof connected" in m for m in said), said
    assert not any("\u202e" in m for m in said)
