"""Fault injection over real gRPC on 127.0.0.1: bots that stall, crash, freeze, flood, send
garbage or cheat. For every case the offender gets a clear status or in-band error, only it
is penalised, a bystander match on the same server finishes untouched, the server stays up,
and every record verifies.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import bounded
import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from medina.records.reader import read_record
from medina.records.verify import verify_record
from medina.referee.config import MatchSettings, Policies, TimeControl
from medina.referee.outcome import MatchOutcome, Termination
from medina.rpc.common import limits as limits_module
from medina.rpc.common.config import ServerConfig
from medina.rpc.common.limits import Limits
from medina.rpc.single.host import HostedMatch
from medina.rpc.single.server import RunningServer, start_server
from medina.v1 import (
    admin_pb2,
    admin_pb2_grpc,
    arena_pb2,
    arena_pb2_grpc,
    common_pb2,
    game_pb2,
    record_pb2,
)
from silent import greeted_connections_closed, silent_connections_closed

from .rawbot import RawBot, first_legal, reason_of

T = TypeVar("T")
ROOT = Path(__file__).resolve().parents[2]
PROCBOT = Path(__file__).with_name("procbot.py")
#: Short clocks for the offender's match; generous enough for a loaded 2-core machine.
FAST = TimeControl(decision_ms=400, bank_ms=0, first_decision_extra_ms=0, grace_ms=100)
QUICK = Policies(max_strikes=2, reconnect_grace_ms=400)
PLAY = "/medina.v1.ArenaService/Play"


def run(coro: Awaitable[T], timeout: float = 90) -> T:
    return bounded.run(coro, timeout)


async def serve(tmp: Path, **limits: float) -> RunningServer:
    return await start_server(
        ServerConfig(host="127.0.0.1", port=0, records_dir=tmp, limits=Limits(**limits))  # type: ignore[arg-type]
    )


def verified(hosted: HostedMatch) -> None:
    report = verify_record(read_record(hosted.record_path))
    assert report.ok, report.summary()


async def outcome_of(hosted: HostedMatch) -> MatchOutcome:
    assert hosted.task is not None
    return await hosted.task


@dataclass
class Bystander:
    """A well-behaved match on the same server; it must not notice anything."""

    hosted: HostedMatch
    bots: list[RawBot]
    task: asyncio.Future[Any]

    @classmethod
    def start(cls, running: RunningServer) -> Bystander:
        hosted = running.arena.create(MatchSettings("medina-v2", 2, 99))
        bots = [RawBot(running.address, t, name="bystander") for t in hosted.tokens]
        return cls(hosted, bots, asyncio.gather(*(b.play() for b in bots)))

    async def check(self, running: RunningServer) -> None:
        await self.task
        outcome = await outcome_of(self.hosted)
        assert outcome.complete
        assert all(s.termination is Termination.NORMAL and s.strikes == 0 for s in outcome.seats)
        for bot in self.bots:
            assert bot.of_kind("rejected") == [] and bot.of_kind("notice") == []
        verified(self.hosted)
        await serving(running)


async def serving(running: RunningServer) -> None:
    """The server answers health checks: SERVING."""
    async with grpc.aio.insecure_channel(running.address) as channel:
        reply = await health_pb2_grpc.HealthStub(channel).Check(  # type: ignore[attr-defined]
            health_pb2.HealthCheckRequest(service="medina.v1.ArenaService"), timeout=5
        )
    assert reply.status == health_pb2.HealthCheckResponse.SERVING


def with_bystander(
    tmp: Path, body: Callable[[RunningServer, Bystander], Awaitable[None]], **limits: float
) -> None:
    """Run ``body`` on a fresh server beside a bystander match, then check the bystander
    finished untouched and the server still serves."""

    async def main() -> None:
        running = await serve(tmp, **limits)
        try:
            by = Bystander.start(running)
            await body(running, by)
            await by.check(running)
        finally:
            await running.stop(1)

    run(main())


def notices(bot: RawBot, code: int) -> list[arena_pb2.Notice]:
    return [m.notice for m in bot.of_kind("notice") if m.notice.code == code]


async def play_to_the_end(bot: RawBot, attempts: int = 20) -> int:
    """Play, reconnecting with the resume token after each lost stream; returns reconnects."""
    for reconnects in range(attempts):
        await bot.play()
        if bot.ended is not None:
            return reconnects
        bot.status = None
    raise AssertionError(f"{bot.name} did not reach the end in {attempts} connections")


# -- stalls, late answers, crashed and frozen processes ------------------------------------


def test_a_staller_is_forfeited_and_a_late_answer_is_stale(tmp_path: Path) -> None:
    async def main(running: RunningServer, by: Bystander) -> None:
        settings = MatchSettings("medina-v2", 3, 4, time=FAST, policies=QUICK)
        hosted = running.arena.create(settings)
        staller = RawBot(running.address, hosted.tokens[0], chooser=lambda r, a: None)
        late_ids: list[int] = []

        def late_once(bot: RawBot, message: arena_pb2.PlayResponse) -> bool:
            if message.HasField("request") and not late_ids:
                request = message.request
                late_ids.append(request.request_id)
                # Answer well after the deadline (decision 400 ms + grace 100 ms).
                asyncio.get_running_loop().call_later(
                    0.9, bot.reply, request.request_id, first_legal(request, 0)
                )
                return True
            return False

        late = RawBot(running.address, hosted.tokens[1], hook=late_once)
        good = RawBot(running.address, hosted.tokens[2])
        await asyncio.gather(staller.play(), late.play(), good.play())
        outcome = await outcome_of(hosted)
        assert outcome.seats[0].termination is Termination.TIMEOUT
        assert outcome.seats[0].strikes == 2 and outcome.seats[0].rank == 3
        assert outcome.seats[1].termination is Termination.NORMAL
        assert outcome.seats[1].strikes == 1
        stale = notices(late, common_pb2.ERROR_CODE_STALE_REQUEST)
        assert [n.request_id for n in stale] == late_ids
        assert "timed out" in stale[0].message
        assert outcome.seats[2].termination is Termination.NORMAL
        assert outcome.seats[2].strikes == 0
        verified(hosted)

    with_bystander(tmp_path, main)


async def spawn_procbot(address: str, token: str, *extra: str) -> asyncio.subprocess.Process:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return await asyncio.create_subprocess_exec(
        sys.executable,
        str(PROCBOT),
        "--server",
        address,
        "--token",
        token,
        *extra,
        stdout=asyncio.subprocess.PIPE,
        env=env,
    )


async def wait_for_line(proc: asyncio.subprocess.Process, wanted: str) -> None:
    assert proc.stdout is not None
    async with asyncio.timeout(30):
        while (line := await proc.stdout.readline()) != b"":
            if line.decode().strip() == wanted:
                return
    raise AssertionError(f"the bot process ended before printing {wanted!r}")


def test_a_bot_killed_mid_turn_is_played_out(tmp_path: Path) -> None:
    async def main(running: RunningServer, by: Bystander) -> None:
        settings = MatchSettings("medina-v2", 2, 5, time=FAST, policies=QUICK)
        hosted = running.arena.create(settings)
        proc = await spawn_procbot(running.address, hosted.tokens[0], "--hang-at", "3")
        other = RawBot(running.address, hosted.tokens[1])
        other_task = asyncio.create_task(other.play())
        await wait_for_line(proc, "request 3")  # it holds an open request now
        proc.kill()
        assert await proc.wait() == -signal.SIGKILL
        await other_task
        outcome = await outcome_of(hosted)
        assert outcome.complete
        killed = outcome.seats[0]
        # The kernel closes the dead process's socket: a reset (CRASHED) or an orderly
        # close (DISCONNECTED), depending on what was still unread.
        assert killed.termination in (Termination.CRASHED, Termination.DISCONNECTED)
        assert killed.detail == "did not reconnect in time"
        assert killed.rank == 2
        assert outcome.seats[1].termination is Termination.NORMAL
        assert outcome.seats[1].strikes == 0
        verified(hosted)

    with_bystander(tmp_path, main)


def test_a_frozen_bot_is_timed_out_and_the_match_goes_on(tmp_path: Path) -> None:
    async def main(running: RunningServer, by: Bystander) -> None:
        settings = MatchSettings("medina-v2", 2, 6, time=FAST, policies=QUICK)
        hosted = running.arena.create(settings)
        proc = await spawn_procbot(running.address, hosted.tokens[0])
        other = RawBot(running.address, hosted.tokens[1])
        other_task = asyncio.create_task(other.play())
        await wait_for_line(proc, "request 2")
        proc.send_signal(signal.SIGSTOP)  # half-open: the socket stays, nobody answers
        try:
            await other_task
            outcome = await outcome_of(hosted)
        finally:
            proc.send_signal(signal.SIGCONT)
        frozen = outcome.seats[0]
        assert frozen.termination is Termination.TIMEOUT and frozen.strikes == 2
        assert outcome.seats[1].termination is Termination.NORMAL
        # Resumed, it finds its match over (stale replies, then the end) and exits.
        async with asyncio.timeout(30):
            await proc.wait()
        verified(hosted)

    with_bystander(tmp_path, main)


def test_a_bot_that_keeps_reconnecting_finishes_its_match(tmp_path: Path) -> None:
    async def main(running: RunningServer, by: Bystander) -> None:
        hosted = running.arena.create(MatchSettings("medina-v1-2p", 2, 7))
        hopper = RawBot(running.address, hosted.tokens[0], name="hopper")
        hopper.leave_after_requests = 3  # drop the stream on every third request
        good = RawBot(running.address, hosted.tokens[1])
        reconnects, _ = await asyncio.gather(play_to_the_end(hopper, 200), good.play())
        assert reconnects >= 5
        outcome = await outcome_of(hosted)
        assert [s.termination for s in outcome.seats] == [Termination.NORMAL] * 2
        record = read_record(hosted.record_path)
        kinds = [e.incident.kind for _n, e in record.entries if e.HasField("incident")]
        assert kinds.count(record_pb2.INCIDENT_KIND_RECONNECTED) == reconnects
        verified(hosted)

    with_bystander(tmp_path, main)


# -- garbage, oversize messages, floods -----------------------------------------------------


async def raw_play(
    address: str, frames: list[bytes], hold: asyncio.Event | None = None
) -> tuple[grpc.StatusCode, str, list[bytes]]:
    """Send raw frames on a Play stream; returns the final status, details (followed by
    " [REASON]", the status's ErrorInfo reason) and replies."""

    async def frames_then_hold() -> object:
        for frame in frames:
            yield frame
        if hold is not None:
            await hold.wait()

    async with grpc.aio.insecure_channel(address) as channel:
        call = channel.stream_stream(
            PLAY, request_serializer=lambda b: b, response_deserializer=lambda b: b
        )(frames_then_hold())  # type: ignore[arg-type]
        got: list[bytes] = []
        try:
            async for message in call:
                got.append(message)
        except grpc.aio.AioRpcError as exc:
            trailers = exc.trailing_metadata() or ()
            reason = ""
            if any(k == "grpc-status-details-bin" for k, _ in trailers):  # made by gRPC: none
                reason = reason_of(exc.code(), trailers)
            return exc.code(), f"{exc.details() or ''} [{reason}]", got
        return grpc.StatusCode.OK, "", got


def hello_bytes(token: str, **fields: object) -> bytes:
    hello = arena_pb2.Hello(protocol_version=1, token=token, **fields)  # type: ignore[arg-type]
    return arena_pb2.PlayRequest(hello=hello).SerializeToString()


def test_garbage_bytes_and_malformed_protobuf(tmp_path: Path) -> None:
    async def main(running: RunningServer, by: Bystander) -> None:
        hosted = running.arena.create(MatchSettings("medina-v2", 2, 8))
        # Not even HTTP/2: the connection is dropped, nothing else happens.
        host, port = running.address.rsplit(":", 1)
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n" + bytes(range(256)) * 4)
        await writer.drain()
        async with asyncio.timeout(10):
            while await reader.read(4096):
                pass
        writer.close()
        # gRPC framing around bytes that are not a PlayRequest.
        code, details, _ = await raw_play(running.address, [b"\xff\xff\xff\xff\x0fjunk"])
        assert code is grpc.StatusCode.INVALID_ARGUMENT
        assert "not a PlayRequest" in details and details.endswith("[MESSAGE_MALFORMED]")
        # A good Hello, then garbage: the stream ends, the seat is only disconnected ...
        code, details, got = await raw_play(
            running.address, [hello_bytes(hosted.tokens[0]), b"\x0a\xff\xff\xff"]
        )
        assert code is grpc.StatusCode.INVALID_ARGUMENT and "not a PlayRequest" in details
        assert details.endswith("[MESSAGE_MALFORMED]")
        welcome = arena_pb2.PlayResponse.FromString(got[0]).welcome
        # ... and comes back with its resume token to finish the match.
        bot = RawBot(running.address, hosted.tokens[0], resume_token=welcome.resume_token)
        await asyncio.gather(bot.play(), RawBot(running.address, hosted.tokens[1]).play())
        outcome = await outcome_of(hosted)
        assert [s.termination for s in outcome.seats] == [Termination.NORMAL] * 2
        verified(hosted)

    with_bystander(tmp_path, main)


def test_oversize_messages_are_refused(tmp_path: Path) -> None:
    async def main(running: RunningServer, by: Bystander) -> None:
        hosted = running.arena.create(MatchSettings("medina-v2", 2, 9))
        big = hello_bytes(hosted.tokens[0], bot_name="x" * 10_000)
        code, details, _ = await raw_play(running.address, [big])
        assert code is grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "4096" in details and details.endswith("[MESSAGE_TOO_LARGE]")
        # Mid-match: the oversize message ends the stream; the bot resumes.
        sent: list[int] = []

        def oversize_once(bot: RawBot, message: arena_pb2.PlayResponse) -> bool:
            if message.HasField("request") and not sent:
                sent.append(1)
                hello = arena_pb2.Hello(protocol_version=1, bot_name="y" * 10_000)
                bot.send(arena_pb2.PlayRequest(hello=hello))
                return True
            return False

        bot = RawBot(running.address, hosted.tokens[0], hook=oversize_once, keep_status=True)
        good = RawBot(running.address, hosted.tokens[1])
        good_task = asyncio.create_task(good.play())
        await bot.play()
        assert bot.status is grpc.StatusCode.RESOURCE_EXHAUSTED
        assert bot.reason == "MESSAGE_TOO_LARGE"
        bot.keep_status = False
        await play_to_the_end(bot)
        await good_task
        outcome = await outcome_of(hosted)
        assert [s.termination for s in outcome.seats] == [Termination.NORMAL] * 2
        verified(hosted)

    with_bystander(tmp_path, main, max_message_bytes=4096)


def test_a_flooding_bot_is_rate_limited_then_cut_off(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    limits = {"unsolicited_burst": 5, "unsolicited_per_second": 1, "flood_disconnect_after": 30}

    async def main(running: RunningServer, by: Bystander) -> None:
        hosted = running.arena.create(MatchSettings("medina-v2", 2, 10))
        floods = {"n": 0}

        def flood(bot: RawBot, message: arena_pb2.PlayResponse) -> bool:
            if not message.HasField("request"):
                return False
            floods["n"] += 1
            request = message.request
            junk = 20 if floods["n"] == 2 else 100 if floods["n"] == 1 else 0
            for i in range(junk):  # replies naming requests never sent
                bot.reply(10_000 + i, first_legal(request, 0))
            bot.reply(request.request_id, first_legal(request, 0))
            return True

        bot = RawBot(running.address, hosted.tokens[0], hook=flood, keep_status=True)
        good = RawBot(running.address, hosted.tokens[1])
        good_task = asyncio.create_task(good.play())
        await bot.play()  # 100 junk messages: cut off
        # The server reads what the bot is still sending before it ends the stream, so the
        # bot's writes never wait on a full window and it sees the status, not its own
        # library's INTERNAL.
        assert bot.status is grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "unsolicited" in bot.details and bot.reason == "FLOODING"
        assert "seat 0: stream closed for flooding" in caplog.text
        assert len(notices(bot, common_pb2.ERROR_CODE_UNKNOWN_REQUEST)) == 5
        limited = notices(bot, common_pb2.ERROR_CODE_RATE_LIMITED)
        assert len(limited) == 1 and "per second" in limited[0].message
        # Back with its resume token: 20 junk messages are dropped but the real reply,
        # never limited, is taken; then it plays on quietly.
        bot.received.clear()
        bot.keep_status = False
        await play_to_the_end(bot)
        assert len(notices(bot, common_pb2.ERROR_CODE_RATE_LIMITED)) == 1
        await good_task
        outcome = await outcome_of(hosted)
        assert [s.termination for s in outcome.seats] == [Termination.NORMAL] * 2
        assert outcome.seats[0].strikes == 0
        verified(hosted)

    with_bystander(tmp_path, main, **limits)


# -- cheating and confused replies -----------------------------------------------------------


def test_bad_replies_get_in_band_errors_and_cost_nothing_else(tmp_path: Path) -> None:
    async def main(running: RunningServer, by: Bystander) -> None:
        hosted = running.arena.create(MatchSettings("medina-v2", 2, 11))
        other_ids: list[int] = []

        def remember(bot: RawBot, message: arena_pb2.PlayResponse) -> bool:
            if message.HasField("request"):
                other_ids.append(message.request.request_id)
            return False

        script: dict[int, Callable[[RawBot, arena_pb2.DecisionRequest], None]] = {
            1: lambda b, r: b.reply(987_654, first_legal(r, 0)),  # never issued
            2: lambda b, r: b.reply(own_ids[-2], first_legal(r, 0)),  # answered before
            3: lambda b, r: b.reply(
                r.request_id, game_pb2.Action(kind=game_pb2.ACTION_KIND_MERCHANT, square=9999)
            ),
            4: lambda b, r: b.reply(r.request_id, game_pb2.Action(kind=99, square=0)),  # type: ignore[arg-type]
            5: lambda b, r: b.reply(other_ids[-1], first_legal(r, 0)),  # the other seat's
            6: lambda b, r: b.send(arena_pb2.PlayRequest(hello=arena_pb2.Hello())),
        }
        counter = {"n": 0}
        own_ids: list[int] = []

        def misbehave(bot: RawBot, message: arena_pb2.PlayResponse) -> bool:
            if not message.HasField("request"):
                return False
            counter["n"] += 1
            request = message.request
            own_ids.append(request.request_id)
            if counter["n"] in script:
                script[counter["n"]](bot, request)
            if counter["n"] not in (3, 4):  # those retry after their Rejected
                bot.reply(request.request_id, first_legal(request, 0))
            if counter["n"] == 7:  # the same answer twice
                bot.reply(request.request_id, first_legal(request, 0))
            return True

        bad = RawBot(running.address, hosted.tokens[0], hook=misbehave)
        other = RawBot(running.address, hosted.tokens[1], hook=remember)
        await asyncio.gather(bad.play(), other.play())
        unknown = notices(bad, common_pb2.ERROR_CODE_UNKNOWN_REQUEST)
        assert [n.request_id for n in unknown][:1] == [987_654]
        assert any("seat 0" in n.message for n in unknown[1:])  # the other seat's id
        stale = notices(bad, common_pb2.ERROR_CODE_STALE_REQUEST)
        assert len(stale) == 2  # an old id, and the duplicate answer
        rejected = [m.rejected for m in bad.of_kind("rejected")]
        assert [r.code for r in rejected] == [common_pb2.ERROR_CODE_MALFORMED_ACTION] * 2
        assert "9999" in rejected[0].message and "99" in rejected[1].message
        protocol = notices(bad, common_pb2.ERROR_CODE_PROTOCOL)
        assert len(protocol) == 1 and "Reply" in protocol[0].message
        outcome = await outcome_of(hosted)
        assert [s.termination for s in outcome.seats] == [Termination.NORMAL] * 2
        assert outcome.seats[0].strikes == 0
        verified(hosted)
        # The record keeps each refused action as the bot sent it, malformed or not.
        recorded = [
            (r.code, r.action)
            for _, e in read_record(hosted.record_path).entries
            if e.HasField("decision")
            for r in e.decision.rejections
        ]
        assert recorded == [
            (
                common_pb2.ERROR_CODE_MALFORMED_ACTION,
                game_pb2.Action(kind=game_pb2.ACTION_KIND_MERCHANT, square=9999),
            ),
            (common_pb2.ERROR_CODE_MALFORMED_ACTION, game_pb2.Action(kind=99, square=0)),  # type: ignore[arg-type]
        ]

    with_bystander(tmp_path, main)


def test_after_the_end_the_seat_is_closed(tmp_path: Path) -> None:
    async def main(running: RunningServer, by: Bystander) -> None:
        hosted = running.arena.create(MatchSettings("medina-v2", 2, 12))

        def chatter(bot: RawBot, message: arena_pb2.PlayResponse) -> bool:
            if message.HasField("ended"):  # keep talking after the end
                for i in range(5):
                    bot.reply(i + 1, game_pb2.Action(kind=game_pb2.ACTION_KIND_TEA))
            return False

        bots = [RawBot(running.address, t, hook=chatter) for t in hosted.tokens]
        await asyncio.gather(*(b.play() for b in bots))
        assert all(b.status is None for b in bots)  # the streams ended cleanly
        for token, resume in ((hosted.tokens[0], ""), (hosted.tokens[1], bots[1].resume_token)):
            late = RawBot(running.address, token, resume_token=resume, keep_status=True)
            await late.play()
            assert late.status is grpc.StatusCode.FAILED_PRECONDITION
            assert late.reason == "MATCH_OVER"
            assert "over" in late.details
        verified(hosted)

    with_bystander(tmp_path, main)


# -- tokens and connections -------------------------------------------------------------------


def test_token_misuse_is_refused_with_clear_statuses(tmp_path: Path) -> None:
    async def main(running: RunningServer, by: Bystander) -> None:
        hosted = running.arena.create(MatchSettings("medina-v2", 3, 13))
        wrong = RawBot(running.address, hosted.tokens[0] + "x", keep_status=True)
        await wrong.play()
        assert wrong.status is grpc.StatusCode.UNAUTHENTICATED
        assert wrong.reason == "SEAT_TOKEN_UNKNOWN"
        assert hosted.tokens[0] not in wrong.details  # never echoed
        # Two connections race for seat 0: exactly one wins it.
        racers = [RawBot(running.address, hosted.tokens[0], keep_status=True) for _ in "ab"]
        tasks = [asyncio.create_task(r.play()) for r in racers]
        async with asyncio.timeout(10):
            while not any(r.welcomed.is_set() for r in racers) or not any(
                r.status is not None for r in racers
            ):
                await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED, timeout=0.05)
        winner = next(r for r in racers if r.welcomed.is_set())
        loser = next(r for r in racers if r is not winner)
        assert loser.status is grpc.StatusCode.ALREADY_EXISTS
        assert "resume token" in loser.details
        # A used token with a wrong resume token: still refused.
        thief = RawBot(running.address, hosted.tokens[0], resume_token="guess", keep_status=True)
        await thief.play()
        assert thief.status is grpc.StatusCode.ALREADY_EXISTS and thief.reason == "SEAT_TAKEN"
        assert "the resume token sent is not this seat's" in thief.details
        assert "guess" not in thief.details  # never echoed
        assert "is not this seat's" not in loser.details  # it sent none
        rest = [RawBot(running.address, t) for t in hosted.tokens[1:]]
        await asyncio.gather(*(b.play() for b in rest), *(t for t in tasks if not t.done()))
        outcome = await outcome_of(hosted)
        assert [s.termination for s in outcome.seats] == [Termination.NORMAL] * 3
        # Expired: the match is over.
        expired = RawBot(running.address, hosted.tokens[2], keep_status=True)
        await expired.play()
        assert expired.status is grpc.StatusCode.FAILED_PRECONDITION
        assert expired.reason == "MATCH_OVER"
        verified(hosted)

    with_bystander(tmp_path, main)


def test_a_stream_without_hello_meets_the_handshake_deadline(tmp_path: Path) -> None:
    async def main(running: RunningServer, by: Bystander) -> None:
        hold = asyncio.Event()
        code, details, _ = await raw_play(running.address, [], hold)
        assert code is grpc.StatusCode.DEADLINE_EXCEEDED and details.endswith("[HELLO_TIMEOUT]")
        assert "no Hello within 0.3 s" in details

    with_bystander(tmp_path, main, handshake_timeout_s=0.3)


def test_a_stream_cut_for_flooding_and_taken_over_while_it_drains_ends_cleanly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # A stream cut for flooding is read (and dropped) a while before its status goes out.
    # Its seat taken over meanwhile (the bot resumed on a second stream), its handler ended
    # the call under that read: the bot's writes failed with INTERNAL instead of the status,
    # and the reader task died of gRPC's AbortError, logged as "Task exception was never
    # retrieved" with a traceback, as often as a bot cared to repeat it.
    monkeypatch.setattr(limits_module, "DRAIN_S", 60.0)  # the flood outlasts the takeover
    caplog.set_level(logging.DEBUG, logger="medina.rpc")
    Call = grpc.aio.StreamStreamCall[arena_pb2.PlayRequest, arena_pb2.PlayResponse]

    async def main() -> None:
        running = await serve(
            tmp_path, unsolicited_burst=1, unsolicited_per_second=1, flood_disconnect_after=5
        )
        hosted = running.arena.create(MatchSettings("medina-v2", 2, 8))
        seat = hosted.seats[0]

        async def welcome(call: Call) -> arena_pb2.Welcome:
            message = await call.read()
            assert isinstance(message, arena_pb2.PlayResponse), message
            assert message.HasField("welcome"), message
            return message.welcome

        async def flood_until_cut(call: Call) -> Callable[[], Awaitable[None]]:
            """Flood on ``call`` until the server cuts it; returns how to stop."""
            stop = asyncio.Event()

            async def flood() -> None:
                junk = arena_pb2.PlayRequest(reply=arena_pb2.Reply(request_id=999_999))
                with contextlib.suppress(grpc.aio.AioRpcError, grpc.aio.UsageError):
                    while not stop.is_set():
                        await call.write(junk)

            flooding = asyncio.create_task(flood())
            async with asyncio.timeout(30):
                while seat.connection is None or seat.connection.status is None:
                    await asyncio.sleep(0.01)  # until the server has cut it

            async def stopped() -> None:
                stop.set()  # a pause ends the drain
                await flooding
                with pytest.raises(grpc.aio.AioRpcError) as ended:
                    while await call.read() is not grpc.aio.EOF:
                        pass  # notices; gRPC gives the status once they are read
                assert ended.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
                assert "unsolicited" in (ended.value.details() or "")

            return stopped

        try:
            async with grpc.aio.insecure_channel(running.address) as channel:
                stub = arena_pb2_grpc.ArenaServiceStub(channel)
                hello = arena_pb2.Hello(protocol_version=1, token=hosted.tokens[0])
                first = stub.Play()
                await first.write(arena_pb2.PlayRequest(hello=hello))
                hello.resume_token = (await welcome(first)).resume_token
                readers = {
                    t for t in asyncio.all_tasks() if "ArenaServicer._read" in repr(t.get_coro())
                }
                assert len(readers) == 1
                stop_first = await flood_until_cut(first)
                second = stub.Play()
                await second.write(arena_pb2.PlayRequest(hello=hello))
                await welcome(second)
                await stop_first()
                done, _ = await asyncio.wait(readers, timeout=30)
                assert done == readers
                assert [t.exception() for t in readers] == [None]
                # Cut again: logged, but as a warning only the first time in the match.
                await (await flood_until_cut(second))()
        finally:
            await running.stop(1)
        cuts = [r for r in caplog.records if "stream closed for flooding" in r.getMessage()]
        assert [r.levelno for r in cuts] == [logging.WARNING, logging.DEBUG]
        assert cuts[0].getMessage().startswith(f"match {hosted.match.match_id} seat 0: ")

    run(main())


def test_open_streams_are_limited_per_client(tmp_path: Path) -> None:
    async def main() -> None:
        # The bystander's first bot waits for its opponent, so its stream stays open and
        # counts for sure: 1 + 3 idle = the limit of 4. Its opponent joins at the end.
        running = await serve(
            tmp_path, max_streams_per_client=4, limit_loopback=True, handshake_timeout_s=60
        )
        try:
            by_match = running.arena.create(MatchSettings("medina-v2", 2, 99))
            by_bots = [RawBot(running.address, t, name="bystander") for t in by_match.tokens]
            by_first = asyncio.create_task(by_bots[0].play())
            await by_bots[0].welcomed.wait()
            holds = [asyncio.Event() for _ in range(3)]
            # The idle streams open one at a time, each once the server counts the last: a
            # stream opened while another is still on its way could find the limit reached.
            idle: list[asyncio.Task[tuple[grpc.StatusCode, str, list[bytes]]]] = []
            for held, hold in enumerate(holds, start=2):
                idle.append(asyncio.create_task(raw_play(running.address, [], hold)))
                async with asyncio.timeout(30):
                    while running.slots.open.get("127.0.0.1", 0) < held:
                        assert not idle[-1].done(), idle[-1].result()
                        await asyncio.sleep(0.01)
            # At the limit, any further stream is refused, a Watch as well as a Play.
            async with grpc.aio.insecure_channel(running.address) as channel:
                watch = admin_pb2_grpc.SpectatorServiceStub(channel)
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    async for _ in watch.Watch(admin_pb2.WatchRequest(match_id="none"), timeout=10):
                        pass
                assert refused.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
                assert "limit is 4" in (refused.value.details() or "")
            code, details, _ = await raw_play(running.address, [b""])
            assert code is grpc.StatusCode.RESOURCE_EXHAUSTED and "127.0.0.1" in details
            assert details.endswith("[TOO_MANY_STREAMS]")
            # Closing one idle stream (the client half-closes: the server refuses it)
            # frees its slot.
            holds[0].set()
            code, details, _ = await idle[0]
            assert code is grpc.StatusCode.INVALID_ARGUMENT  # "stream closed before Hello"
            assert details.endswith("[HELLO_MISSING]")
            hosted = running.arena.create(MatchSettings("medina-v2", 2, 14))
            first = RawBot(running.address, hosted.tokens[0])
            first_task = asyncio.create_task(first.play())
            await first.welcomed.wait()
            for h in holds[1:]:
                h.set()
            await asyncio.gather(*idle[1:])
            await RawBot(running.address, hosted.tokens[1]).play()
            await first_task
            assert (await outcome_of(hosted)).complete
            by = Bystander(by_match, by_bots, asyncio.gather(by_first, by_bots[1].play()))
            await by.check(running)
        finally:
            await running.stop(1)

    run(main())


def test_the_organisers_own_watch_streams_hold_no_slot_of_its_address(tmp_path: Path) -> None:
    # A ladder watches each of its matches from the arena's own machine: with
    # --limit-loopback, a stranger there holding the address's streams had every new
    # match's Watch refused, and the ladder aborted match after match. A Watch carrying
    # the organiser token is the organiser's and counts against no client.
    async def main() -> None:
        running = await start_server(
            ServerConfig(
                host="127.0.0.1",
                port=0,
                records_dir=tmp_path,
                organiser_token="organiser",
                limits=Limits(
                    max_streams_per_client=1, limit_loopback=True, handshake_timeout_s=60
                ),
            )
        )
        hold = asyncio.Event()
        squatter = asyncio.create_task(raw_play(running.address, [], hold))
        try:
            hosted = running.arena.create(MatchSettings("medina-v2", 2, 5))
            async with asyncio.timeout(30):
                while running.slots.open.get("127.0.0.1", 0) < 1:
                    assert not squatter.done(), squatter.result()
                    await asyncio.sleep(0.01)
            request = admin_pb2.WatchRequest(match_id=hosted.match.match_id)
            async with grpc.aio.insecure_channel(running.address) as channel:
                stub = admin_pb2_grpc.SpectatorServiceStub(channel)
                for token in ("", "Bearer guess"):  # a stranger, with or without a token
                    metadata = (("authorization", token),) if token else ()
                    with pytest.raises(grpc.aio.AioRpcError) as refused:
                        async for _ in stub.Watch(request, metadata=metadata, timeout=10):
                            pass
                    assert refused.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
                organiser = (("authorization", "Bearer organiser"),)
                watch = stub.Watch(request, metadata=organiser, timeout=10)
                first = await anext(aiter(watch))
                assert first.HasField("snapshot")
                assert running.slots.open == {"127.0.0.1": 1}  # the squatter's alone
                watch.cancel()
            hold.set()
            code, details, _ = await squatter
            assert details.endswith("[HELLO_MISSING]"), (code, details)
        finally:
            hold.set()
            await running.stop(1)

    run(main())


def test_a_burst_of_new_calls_is_taken_up_not_cancelled(tmp_path: Path) -> None:
    # gRPC holds at most 1,000 new calls waiting for the server by default and cancels some
    # beyond that: a tournament starting 512 four-player matches at once (over 2,000 streams)
    # had bots cancelled before they could say Hello. 2,500 calls at once, 50 connections.
    async def main() -> None:
        running = await serve(tmp_path)
        options = [("grpc.use_local_subchannel_pool", 1)]
        channels = [grpc.aio.insecure_channel(running.address, options=options) for _ in range(50)]
        try:
            stubs = [health_pb2_grpc.HealthStub(channel) for channel in channels]
            calls = [
                stub.Check(health_pb2.HealthCheckRequest(), timeout=60)  # type: ignore[attr-defined]
                for stub in stubs
                for _ in range(50)
            ]
            answers = await asyncio.gather(*calls, return_exceptions=True)
            failed = [a for a in answers if isinstance(a, BaseException)]
            assert not failed, f"{len(failed)} of {len(answers)} calls failed: {failed[0]!r}"
        finally:
            for channel in channels:
                await channel.close()
            await running.stop(1)

    run(main())


def test_connections_that_open_no_stream_are_closed_when_idle(tmp_path: Path) -> None:
    async def main(running: RunningServer, by: Bystander) -> None:
        host, port = running.address.rsplit(":", 1)
        # Connections that finish the HTTP/2 handshake and answer pings but open no stream
        # held a file each for five minutes; now for the idle limit (1 s here, 30 s by
        # default), while the bystander plays on.
        await asyncio.gather(greeted_connections_closed(host, int(port), 20), by.task)

    with_bystander(tmp_path, main, idle_connection_s=1)


def test_silent_tcp_connections_hold_nothing_and_are_closed(tmp_path: Path) -> None:
    async def main(running: RunningServer, by: Bystander) -> None:
        host, port = running.address.rsplit(":", 1)
        # Many raw TCP connections that never speak HTTP/2: no stream, no slot, and the
        # server closes each at the handshake deadline, while the bystander plays on.
        await asyncio.gather(silent_connections_closed(host, int(port), 20), by.task)

    with_bystander(
        tmp_path, main, max_streams_per_client=3, limit_loopback=True, handshake_timeout_s=1
    )
