"""Crash safety: SIGKILL the server process mid-match, then restart it on the same records.

The partial record must be readable and verify up to its last complete entry, and the
restarted server must list the interrupted match as aborted (and the finished one as
finished) to the organiser.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import grpc
from medina.records.catalog import UNFINISHED
from medina.records.reader import read_record
from medina.records.verify import verify_record
from medina.v1 import admin_pb2, admin_pb2_grpc, arena_pb2, match_pb2

from .rawbot import RawBot

TOKEN = "crash-organiser-secret"
AUTH = (("authorization", f"Bearer {TOKEN}"),)


@asynccontextmanager
async def server_process(records: Path) -> AsyncIterator[tuple[asyncio.subprocess.Process, str]]:
    """``medina-arena serve`` on a free port; yields the process and its address."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "medina.cli",
        "serve",
        "--workers",
        "1",  # one process: killing it kills the matches (tests/e2e/test_workers.py: a worker)
        "--port",
        "0",
        "--records",
        str(records),
        "--organiser-token",
        TOKEN,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env=env,
    )
    try:
        assert proc.stdout is not None
        async with asyncio.timeout(30):
            line = (await proc.stdout.readline()).decode()
        assert line.startswith("medina-arena listening on "), line
        yield proc, line.split()[-1]
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def create(address: str, seed: int) -> admin_pb2.CreateMatchResponse:
    async with grpc.aio.insecure_channel(address) as channel:
        config = match_pb2.MatchConfig(ruleset=1, players=2, seed=seed)  # type: ignore[arg-type]
        reply: admin_pb2.CreateMatchResponse = await admin_pb2_grpc.MatchServiceStub(
            channel
        ).CreateMatch(admin_pb2.CreateMatchRequest(config=config), metadata=AUTH)
        return reply


def test_sigkill_mid_match_leaves_a_verifiable_record_and_a_restart_lists_it(
    tmp_path: Path,
) -> None:
    async def main() -> None:
        async with server_process(tmp_path) as (proc, address):
            done = await create(address, 1)
            await asyncio.gather(*(RawBot(address, t.token).play() for t in done.tokens))
            victim = await create(address, 2)
            enough = asyncio.Event()
            seen = {"n": 0}

            def count(bot: RawBot, message: arena_pb2.PlayResponse) -> bool:
                if message.HasField("request"):
                    seen["n"] += 1
                    if seen["n"] == 12:
                        enough.set()
                        return True  # hold this one: the server dies with it open
                return False

            bots = [RawBot(address, t.token, hook=count, keep_status=True) for t in victim.tokens]
            tasks = [asyncio.create_task(b.play()) for b in bots]
            async with asyncio.timeout(30):
                await enough.wait()
            proc.send_signal(signal.SIGKILL)
            assert await proc.wait() == -signal.SIGKILL
            await asyncio.gather(*tasks)
            assert all(b.status is grpc.StatusCode.UNAVAILABLE for b in bots)

        path = tmp_path / f"{victim.match_id}.jsonl"
        left = path.read_bytes()
        record = read_record(path, allow_truncated=True)
        assert record.outcome is None and len(record.decisions) >= 10
        report = verify_record(record)
        assert report.ok and report.note.startswith(UNFINISHED), report.summary()
        cli = subprocess.run(
            [sys.executable, "-m", "medina.cli", "replay", "verify", str(path)],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        )
        assert cli.returncode == 0 and UNFINISHED in cli.stdout, cli.stdout + cli.stderr

        async with server_process(tmp_path) as (proc, address):
            async with grpc.aio.insecure_channel(address) as channel:
                stub = admin_pb2_grpc.MatchServiceStub(channel)
                listed = await stub.ListMatches(admin_pb2.ListMatchesRequest(), metadata=AUTH)
                by_id = {m.match_id: m for m in listed.matches}
                assert by_id[done.match_id].state == admin_pb2.MATCH_STATE_FINISHED
                assert by_id[done.match_id].result.ending == match_pb2.MATCH_ENDING_COMPLETE
                lost = by_id[victim.match_id]
                assert lost.state == admin_pb2.MATCH_STATE_ABORTED and lost.from_record
                assert lost.note.startswith("unfinished: no outcome line yet")
                assert lost.decisions == len(record.decisions)
                assert lost.result.ending == match_pb2.MATCH_ENDING_ABORTED
                assert all(
                    s.termination == match_pb2.TERMINATION_ABORTED for s in lost.result.seats
                )
                got = await stub.GetMatch(
                    admin_pb2.GetMatchRequest(match_id=victim.match_id), metadata=AUTH
                )
                assert got.match == lost
                try:
                    await stub.AbortMatch(
                        admin_pb2.AbortMatchRequest(match_id=victim.match_id), metadata=AUTH
                    )
                    raise AssertionError("aborting a match of an earlier run must fail")
                except grpc.aio.AioRpcError as exc:
                    assert exc.code() is grpc.StatusCode.FAILED_PRECONDITION
                    assert "only its record remains" in (exc.details() or "")
                # The old seat tokens open nothing on the new server.
                stale = RawBot(address, victim.tokens[0].token, keep_status=True)
                await stale.play()
                assert stale.status is grpc.StatusCode.UNAUTHENTICATED
            proc.send_signal(signal.SIGTERM)
            async with asyncio.timeout(30):
                assert await proc.wait() == 0
        assert path.read_bytes() == left  # the restart never rewrites a record

    asyncio.run(main())
