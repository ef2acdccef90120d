"""``medina-arena serve --workers 2``: one address, matches in two worker processes.

The front is a real subprocess on a free port; bots are real processes (the SDK's random
bot) or in-process raw bots. Checked: matches land on both workers, seat tokens reach the
worker holding their seat (through the front or at the advertised endpoint), a wrong token
is refused as by one server, records verify, ListMatches pages across workers without
duplicates (and lists earlier runs' records once after a restart), Watch works through the
front, and a worker killed with SIGKILL is reported, answered for, and replaced.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import socket
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from medina.cli import build_parser
from medina.cli.serve_cmd import worker_argv
from medina.records.reader import read_record
from medina.records.verify import verify_record
from medina.rpc.cluster.front import start_front
from medina.rpc.common.config import ServerConfig
from medina.v1 import admin_pb2, admin_pb2_grpc, arena_pb2, arena_pb2_grpc, match_pb2

from .forfeits import check_forfeit_seat
from .rawbot import RawBot, collect_tasks, first_legal, reason_of

TOKEN = "workers-organiser-secret"
AUTH = (("authorization", f"Bearer {TOKEN}"),)
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}


@dataclass
class Front:
    """A running ``serve --workers N`` and its log, read as it is written."""

    proc: asyncio.subprocess.Process
    address: str
    lines: list[str] = field(default_factory=list)
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    async def follow(self) -> None:
        assert self.proc.stderr is not None
        while line := await self.proc.stderr.readline():
            self.lines.append(line.decode(errors="replace"))
            self.changed.set()

    async def wait_for(self, pattern: str, timeout: float = 60) -> re.Match[str]:
        """The first log line matching ``pattern`` (waiting for it to be written)."""
        async with asyncio.timeout(timeout):
            while True:
                for line in self.lines:
                    if found := re.search(pattern, line):
                        return found
                self.changed.clear()
                await self.changed.wait()

    def worker_pids(self) -> dict[str, int]:
        """A worker's address for bots (the endpoint CreateMatch names) -> its pid, from the
        front's log."""
        host = self.address.rpartition(":")[0]
        return {
            f"{host}:{m[2]}": int(m[1])
            for line in self.lines
            if (
                m := re.search(r"worker \d+ \(pid (\d+)\) serving on \S+, bots on port (\d+)", line)
            )
        }


@asynccontextmanager
async def front_process(records: Path, *extra: str, workers: int = 2) -> AsyncIterator[Front]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "medina.cli",
        "--log-level",
        "INFO",
        "serve",
        "--port",
        "0",
        "--workers",
        str(workers),
        "--records",
        str(records),
        "--organiser-token",
        TOKEN,
        *extra,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=ENV,
    )
    reader: asyncio.Task[None] | None = None
    try:
        assert proc.stdout is not None
        async with asyncio.timeout(60):
            line = (await proc.stdout.readline()).decode()
        assert line.startswith("medina-arena listening on "), line
        front = Front(proc, line.split()[-1])
        reader = asyncio.create_task(front.follow())
        yield front
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
            async with asyncio.timeout(60):
                await proc.wait()
        if reader is not None:
            await reader


def config(seed: int) -> admin_pb2.CreateMatchRequest:
    return admin_pb2.CreateMatchRequest(
        config=match_pb2.MatchConfig(ruleset=1, players=2, seed=seed)  # type: ignore[arg-type]
    )


async def sdk_bot(address: str, token: str, seed: int) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "medina_client",
        "--bot",
        "random",
        "--seed",
        str(seed),
        "--server",
        address,
        "--quiet",
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        env={**ENV, "MEDINA_TOKEN": token},
    )


async def watch(address: str, match_id: str) -> list[admin_pb2.WatchResponse]:
    async with grpc.aio.insecure_channel(address) as channel:
        stub = admin_pb2_grpc.SpectatorServiceStub(channel)
        return [m async for m in stub.Watch(admin_pb2.WatchRequest(match_id=match_id))]


async def list_all(
    stub: admin_pb2_grpc.MatchServiceAsyncStub,
    size: int,
    states: tuple[admin_pb2.MatchState.ValueType, ...] = (),
) -> tuple[list[admin_pb2.MatchSummary], int, int]:
    """Every match, a page of ``size`` at a time: (matches, pages, total_size)."""
    found: list[admin_pb2.MatchSummary] = []
    token, pages, total = "", 0, -1
    while True:
        page = await stub.ListMatches(
            admin_pb2.ListMatchesRequest(page_size=size, page_token=token, states=states),
            metadata=AUTH,
        )
        pages += 1
        total = page.total_size
        found.extend(page.matches)
        token = page.next_page_token
        if not token:
            return found, pages, total


async def play_status(address: str, token: str) -> tuple[grpc.StatusCode | None, str]:
    bot = RawBot(address, token, keep_status=True)
    async with asyncio.timeout(60):
        await bot.play()
    return bot.status, bot.details


def test_matches_run_on_both_workers_behind_one_address(tmp_path: Path) -> None:
    async def main() -> None:
        async with (
            front_process(tmp_path) as front,
            grpc.aio.insecure_channel(front.address) as channel,
        ):
            stub = admin_pb2_grpc.MatchServiceStub(channel)
            # One after the other: each goes to the worker with fewer matches waiting.
            created = [await stub.CreateMatch(config(s), metadata=AUTH) for s in range(4)]
            endpoints = [c.endpoint for c in created]
            assert all(c.HasField("endpoint") for c in created)
            assert endpoints[0] != endpoints[1] and set(endpoints) == set(endpoints[:2])
            assert set(endpoints) == set(front.worker_pids())

            # A token of the other worker, sent straight to a worker, opens nothing
            # there: the front did route each seat to its own worker.
            other = endpoints[1]
            assert await play_status(other, created[0].tokens[0].token) == (
                grpc.StatusCode.UNAUTHENTICATED,
                "unknown seat token",
            )
            # A wrong token at the front: refused as a single server refuses it.
            assert await play_status(front.address, "f" * 48) == (
                grpc.StatusCode.UNAUTHENTICATED,
                "unknown seat token",
            )

            spectator = asyncio.create_task(watch(front.address, created[0].match_id))
            # Matches 0 and 1: bots know only the front; 2 and 3: the endpoint.
            bots = [
                await sdk_bot(front.address if i < 2 else c.endpoint, t.token, 10 * i + n)
                for i, c in enumerate(created)
                for n, t in enumerate(c.tokens)
            ]
            async with asyncio.timeout(120):
                codes = [await b.wait() for b in bots]
                watched = await spectator
            assert codes == [0] * len(bots)
            assert watched[0].HasField("snapshot") and watched[-1].HasField("result")
            assert any(m.HasField("update") for m in watched)

            for c in created:
                got = await stub.GetMatch(
                    admin_pb2.GetMatchRequest(match_id=c.match_id), metadata=AUTH
                )
                assert got.match.state == admin_pb2.MATCH_STATE_FINISHED
                assert got.match.result == watched[-1].result or c is not created[0]
                report = verify_record(read_record(Path(got.match.record_path)))
                assert report.ok, report.summary()
            # The token of an ended match: as a single server answers.
            status, details = await play_status(front.address, created[0].tokens[0].token)
            assert (status, details) == (
                grpc.StatusCode.FAILED_PRECONDITION,
                "the match is over",
            )

            ids = {c.match_id for c in created}
            for size in (1, 3, 100):
                listed, pages, total = await list_all(stub, size)
                assert [m.match_id for m in listed].count(created[0].match_id) == 1
                assert {m.match_id for m in listed} == ids and len(listed) == 4
                assert total == 4 and pages == -(-4 // size)
            finished, _pages, _total = await list_all(stub, 2, (admin_pb2.MATCH_STATE_FINISHED,))
            assert {m.match_id for m in finished} == ids
            waiting, _pages, total = await list_all(stub, 2, (admin_pb2.MATCH_STATE_WAITING,))
            assert waiting == [] and total == 0

            # `match --server` gives its bots the endpoint: they skip the front.
            played = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "medina.cli",
                "match",
                "--server",
                front.address,
                "--organiser-token",
                TOKEN,
                "--players",
                "2",
                "--seed",
                "9",
                "--records",
                str(tmp_path / "logs"),
                "--quiet",
                "--bot",
                "python -m medina_client --bot random",
                "--bot",
                "python -m medina_client --bot greedy",
                stdout=asyncio.subprocess.DEVNULL,
                env=ENV,
            )
            async with asyncio.timeout(120):
                assert await played.wait() == 0
            front.proc.send_signal(signal.SIGTERM)
            async with asyncio.timeout(60):
                assert await front.proc.wait() == 0
            # The SDK's bots that knew just the front (matches 0 and 1) were redirected to
            # their worker: no bot stream was forwarded. The spectators were: this test's
            # and the match command's.
            await front.wait_for(
                r"forwarded 0 bot stream\(s\) and 2 spectator stream\(s\) to the workers; "
                r"redirected 4 bot stream\(s\)"
            )

        # A restart lists the earlier run's records once, though two workers serve it.
        async with (
            front_process(tmp_path) as front,
            grpc.aio.insecure_channel(front.address) as channel,
        ):
            stub = admin_pb2_grpc.MatchServiceStub(channel)
            everything, _pages, total = await list_all(stub, 100)
            assert total == 5 and ids < {m.match_id for m in everything}  # and match's own
            assert all(m.from_record for m in everything)
            for size in (1, 2, 3):  # pages after a record's token go on from that record
                listed, pages, total = await list_all(stub, size)
                assert [m.match_id for m in listed] == [m.match_id for m in everything]
                assert total == 5 and pages == -(-5 // size)

    asyncio.run(main())


def test_a_killed_worker_is_reported_and_replaced(tmp_path: Path) -> None:
    async def main() -> None:
        async with front_process(tmp_path) as front:
            async with grpc.aio.insecure_channel(front.address) as channel:
                stub = admin_pb2_grpc.MatchServiceStub(channel)
                lost = await stub.CreateMatch(config(1), metadata=AUTH)
                pid = front.worker_pids()[lost.endpoint]
                # A bot waits for its opponent through the front when its worker is killed.
                waiting = RawBot(front.address, lost.tokens[0].token, keep_status=True)
                playing = asyncio.create_task(waiting.play())
                async with asyncio.timeout(60):
                    await waiting.welcomed.wait()
                os.kill(pid, signal.SIGKILL)
                async with asyncio.timeout(60):
                    await playing
                assert waiting.status is grpc.StatusCode.UNAVAILABLE, waiting.details
                died = await front.wait_for(rf"(worker \d+ \(pid {pid}\)) died")
                name = died[1]
                assert "killed by signal 9" in died.string
                await front.wait_for(r"worker \d+ \(pid \d+\) replaces the worker that died")

                # The lost match's calls: UNAVAILABLE, naming the worker.
                for call in (
                    stub.AbortMatch(
                        admin_pb2.AbortMatchRequest(match_id=lost.match_id), metadata=AUTH
                    ),
                    watch(front.address, lost.match_id),
                ):
                    try:
                        await call
                        raise AssertionError("a call for a lost match must fail")
                    except grpc.aio.AioRpcError as exc:
                        assert exc.code() is grpc.StatusCode.UNAVAILABLE
                        assert name in (exc.details() or "")
                status, details = await play_status(front.address, lost.tokens[0].token)
                assert status is grpc.StatusCode.UNAVAILABLE and name in details
                # Its record is an interrupted one, as after a crash.
                await front.wait_for(
                    rf"{re.escape(name)} died with 1 match\(es\) waiting or in play"
                )
                got = await stub.GetMatch(
                    admin_pb2.GetMatchRequest(match_id=lost.match_id), metadata=AUTH
                )
                assert got.match.state == admin_pb2.MATCH_STATE_ABORTED
                assert got.match.from_record and f"{name} died" in got.match.note

                health = health_pb2_grpc.HealthStub(channel)
                answer = await health.Check(health_pb2.HealthCheckRequest())  # type: ignore[attr-defined]
                assert answer.status == health_pb2.HealthCheckResponse.SERVING

                # Both workers (one of them new) take and play matches.
                created = [await stub.CreateMatch(config(s), metadata=AUTH) for s in (2, 3)]
                assert len({c.endpoint for c in created}) == 2
                assert lost.endpoint not in {c.endpoint for c in created}
                bots = [RawBot(front.address, t.token) for c in created for t in c.tokens]
                async with asyncio.timeout(120):
                    await asyncio.gather(*(b.play() for b in bots))
                assert all(b.ended is not None for b in bots)
                listed, _pages, total = await list_all(stub, 2)
                assert total == 3 and len({m.match_id for m in listed}) == 3
            pids = set(front.worker_pids().values())
            front.proc.send_signal(signal.SIGTERM)
            async with asyncio.timeout(60):
                assert await front.proc.wait() == 0
        for worker in pids:  # the front waited for its workers: none is left running
            try:
                os.kill(worker, 0)
                raise AssertionError(f"worker {worker} outlived its front")
            except ProcessLookupError:
                pass

    asyncio.run(main())


def test_matches_and_seats_the_front_forgot_are_found_by_asking_every_worker(
    tmp_path: Path,
) -> None:
    async def main() -> None:
        args = build_parser().parse_args(["serve", "--records", str(tmp_path), "--grace-s", "1"])
        settings = ServerConfig(host="127.0.0.1", port=0, records_dir=tmp_path)
        # The front remembers one match's routes: the older two are asked for.
        front = await start_front(
            settings, worker_argv(args), 2, public_host="127.0.0.1", routes_kept=1
        )
        try:
            async with grpc.aio.insecure_channel(front.address) as channel:
                stub = admin_pb2_grpc.MatchServiceStub(channel)
                created = [await stub.CreateMatch(config(s), metadata=AUTH) for s in range(3)]
                first, second, third = created
                assert first.endpoint == third.endpoint != second.endpoint
                got = await stub.GetMatch(
                    admin_pb2.GetMatchRequest(match_id=second.match_id), metadata=AUTH
                )
                assert got.match.state == admin_pb2.MATCH_STATE_WAITING
                spectator = asyncio.create_task(watch(front.address, second.match_id))
                # The second match's worker is not the first asked about its tokens.
                pumps: set[asyncio.Task[object]] = set()
                collect = collect_tasks(pumps, "_pump")
                bots = [RawBot(front.address, t.token, hook=collect) for t in second.tokens]
                async with asyncio.timeout(120):
                    await asyncio.gather(*(b.play() for b in bots))
                    watched = await spectator
                assert all(b.ended is not None for b in bots)
                # The front's pumps end with their calls, never cancelled (cancelling a
                # pending grpc.aio read leaks its state).
                assert len(pumps) == len(bots)
                _done, pending = await asyncio.wait(pumps, timeout=10)
                assert not pending and not any(t.cancelled() for t in pumps)
                assert watched[-1].HasField("result")
                aborted = await stub.AbortMatch(
                    admin_pb2.AbortMatchRequest(match_id=first.match_id, reason="test"),
                    metadata=AUTH,
                )
                assert aborted.match.state == admin_pb2.MATCH_STATE_ABORTED
                try:
                    await stub.GetMatch(admin_pb2.GetMatchRequest(match_id="nope"), metadata=AUTH)
                    raise AssertionError("an unknown match id must be refused")
                except grpc.aio.AioRpcError as exc:
                    assert exc.code() is grpc.StatusCode.NOT_FOUND
                    assert exc.details() == "no match with id 'nope'"
        finally:
            await front.stop(1.0)

    asyncio.run(main())


def test_max_matches_counts_the_matches_of_every_worker(tmp_path: Path) -> None:
    async def main() -> None:
        async with (
            front_process(tmp_path, "--max-matches", "3") as front,
            grpc.aio.insecure_channel(front.address) as channel,
        ):
            stub = admin_pb2_grpc.MatchServiceStub(channel)
            created = [await stub.CreateMatch(config(s), metadata=AUTH) for s in range(3)]
            assert len({c.endpoint for c in created}) == 2
            try:
                await stub.CreateMatch(config(4), metadata=AUTH)
                raise AssertionError("a fourth match must be refused")
            except grpc.aio.AioRpcError as exc:
                assert exc.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
                assert "limit of 3 matches waiting or running" in (exc.details() or "")
            await stub.AbortMatch(
                admin_pb2.AbortMatchRequest(match_id=created[1].match_id), metadata=AUTH
            )
            # Matches 0 and 2 wait on one worker; the other now has none: it gets the next.
            again = await stub.CreateMatch(config(5), metadata=AUTH)
            assert created[0].endpoint == created[2].endpoint != again.endpoint
            listed, _pages, total = await list_all(stub, 10)
            assert total == 4 and len(listed) == 4

    asyncio.run(main())


def flood(bot: RawBot, message: arena_pb2.PlayResponse) -> bool:
    """Answer the first request with 400 replies naming requests never sent (past the
    default flood limit of 200 dropped in a row), then the real one."""
    if not message.HasField("request"):
        return False
    for i in range(400):
        bot.reply(10_000 + i, first_legal(message.request, 0))
    bot.reply(message.request.request_id, first_legal(message.request, 0))
    return True


def test_the_front_relays_reasons_and_creates_a_match_once_per_request_id(
    tmp_path: Path,
) -> None:
    async def main() -> None:
        async with (
            front_process(tmp_path) as front,
            grpc.aio.insecure_channel(front.address) as channel,
        ):
            stub = admin_pb2_grpc.MatchServiceStub(channel)
            ask = config(5)
            ask.request_id = "ladder-42"
            # Retries may reach the front while the first is under way, or after: one match.
            answers = await asyncio.gather(
                *(stub.CreateMatch(ask, metadata=AUTH) for _ in range(3))
            )
            again = await stub.CreateMatch(ask, metadata=AUTH)
            assert answers[0] == answers[1] == answers[2] == again
            _matches, _pages, total = await list_all(stub, 10)
            assert total == 1
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await stub.CreateMatch(ask, metadata=(("authorization", "Bearer wrong"),))
            assert reason_of(info.value.code(), info.value.trailing_metadata()) == (
                "ORGANISER_TOKEN_INVALID"
            )
            # Statuses made by a worker reach the bot through the front with their reason.
            bot = RawBot(front.address, "f" * 48, keep_status=True)
            await bot.play()
            assert bot.status is grpc.StatusCode.UNAUTHENTICATED
            assert bot.reason == "SEAT_TOKEN_UNKNOWN"
            # A bot that asks for redirects is sent to the worker's own address for bots ...
            asks = RawBot(front.address, answers[0].tokens[0].token, features=("redirect",))
            await asks.play()
            assert [m.WhichOneof("message") for m in asks.received] == ["redirect"]
            port = asks.received[0].redirect.port
            assert not asks.received[0].redirect.host  # the host it connected to
            assert answers[0].endpoint == f"127.0.0.1:{port}"
            # ... where it plays; a 1.0 bot (no redirect asked) plays through the front.
            there = RawBot(f"127.0.0.1:{port}", answers[0].tokens[0].token)
            through = RawBot(front.address, answers[0].tokens[1].token)
            await asyncio.gather(there.play(), through.play())
            assert there.ended is not None and through.ended is not None
            # A flooding 1.0 bot through the front, and one at its worker's port: each is cut
            # off with RESOURCE_EXHAUSTED and its reason (not the client library's INTERNAL).
            for where, features in ((front.address, ()), (front.address, ("redirect",))):
                flooded = await stub.CreateMatch(config(7), metadata=AUTH)
                tokens = [t.token for t in flooded.tokens]
                if features:
                    asker = RawBot(where, tokens[0], features=features)
                    await asker.play()
                    where = f"127.0.0.1:{asker.received[0].redirect.port}"
                flooder = RawBot(where, tokens[0], hook=flood, keep_status=True)
                partner = asyncio.create_task(RawBot(front.address, tokens[1]).play())
                await flooder.play()
                assert flooder.status is grpc.StatusCode.RESOURCE_EXHAUSTED
                assert flooder.reason == "FLOODING"
                await stub.AbortMatch(
                    admin_pb2.AbortMatchRequest(match_id=flooded.match_id), metadata=AUTH
                )
                await asyncio.gather(partner, return_exceptions=True)
            big = RawBot(front.address, answers[0].tokens[0].token, keep_status=True)
            big.name = "x" * 70_000  # over the 64 KiB default
            await big.play()
            assert big.status is grpc.StatusCode.RESOURCE_EXHAUSTED
            assert big.reason == "MESSAGE_TOO_LARGE"

    asyncio.run(asyncio.wait_for(main(), 120))


def free_port_pair() -> int:
    """A port P with P and P+1 free now (bound and released)."""
    for _ in range(50):
        with socket.socket() as a:
            a.bind(("127.0.0.1", 0))
            base = int(a.getsockname()[1])
            if base >= 65535:
                continue
            with socket.socket() as b:
                try:
                    b.bind(("127.0.0.1", base + 1))
                except OSError:
                    continue
                return base
    raise AssertionError("no two consecutive free ports")


def test_worker_ports_fix_where_bots_are_sent(tmp_path: Path) -> None:
    async def main() -> None:
        base = free_port_pair()
        async with (
            front_process(tmp_path, "--worker-ports", str(base)) as front,
            grpc.aio.insecure_channel(front.address) as channel,
        ):
            stub = admin_pb2_grpc.MatchServiceStub(channel)
            created = [await stub.CreateMatch(config(s), metadata=AUTH) for s in range(2)]
            assert {c.endpoint for c in created} == {f"127.0.0.1:{base}", f"127.0.0.1:{base + 1}"}

    asyncio.run(asyncio.wait_for(main(), 120))


def test_forfeit_seat_reaches_the_worker_holding_the_match(tmp_path: Path) -> None:
    async def main() -> None:
        async with front_process(tmp_path) as front:
            await check_forfeit_seat(front.address, AUTH)

    asyncio.run(asyncio.wait_for(main(), 180))


def test_the_organisers_watch_through_the_front_holds_no_client_slot(tmp_path: Path) -> None:
    # As on the single server (test_faults): a stranger on the organiser's machine holding
    # its address's streams must not have the organiser's Watch refused.
    async def main() -> None:
        extra = ("--limit-loopback", "--max-streams-per-client", "1", "--handshake-timeout-s", "60")
        async with (
            front_process(tmp_path, *extra) as front,
            grpc.aio.insecure_channel(front.address) as channel,
        ):
            created = await admin_pb2_grpc.MatchServiceStub(channel).CreateMatch(
                config(7), metadata=AUTH
            )
            request = admin_pb2.WatchRequest(match_id=created.match_id)
            spectators = admin_pb2_grpc.SpectatorServiceStub(channel)
            hold = asyncio.Event()

            async def silent() -> AsyncIterator[arena_pb2.PlayRequest]:
                await hold.wait()  # no Hello: the stream holds the address's one slot
                return
                yield

            squatter = arena_pb2_grpc.ArenaServiceStub(channel).Play(silent())
            refused = False
            async with asyncio.timeout(30):
                while not refused:  # until the squatter's stream is counted
                    stranger = spectators.Watch(request, timeout=10)
                    try:
                        await anext(aiter(stranger))
                        stranger.cancel()
                        await asyncio.sleep(0.05)  # polling the front's count
                    except grpc.aio.AioRpcError as exc:
                        assert exc.code() is grpc.StatusCode.RESOURCE_EXHAUSTED, exc
                        refused = True
            call = spectators.Watch(request, metadata=AUTH, timeout=10)
            first = await anext(aiter(call))
            assert first.HasField("snapshot")
            call.cancel()
            hold.set()
            squatter.cancel()

    asyncio.run(main())
