"""Stopping `serve` as an operator does: SIGHUP (a closed terminal, a logrotate habit) is a
graceful stop as SIGTERM is, the stop and what became of the matches are said at the
default log level, a second signal ends the grace at once, and the viewer and /metrics
answer until the matches are over."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import urllib.request
from pathlib import Path

import grpc
from medina.records.reader import read_record
from medina.v1 import admin_pb2, admin_pb2_grpc, arena_pb2, match_pb2

from .rawbot import RawBot

TOKEN = "shutdown-organiser-secret"
AUTH = (("authorization", f"Bearer {TOKEN}"),)


class Lines:
    """A stream's lines as they come, and a wait for one holding a text."""

    def __init__(self, stream: asyncio.StreamReader) -> None:
        self.lines: list[str] = []
        self._new = asyncio.Event()
        self.task = asyncio.create_task(self._read(stream))

    async def _read(self, stream: asyncio.StreamReader) -> None:
        while line := await stream.readline():
            self.lines.append(line.decode())
            self._new.set()
        self._new.set()

    async def holding(self, text: str) -> str:
        while True:
            found = next((line for line in self.lines if text in line), None)
            if found is not None:
                return found
            assert not self.task.done(), f"no line holding {text!r}: {self.lines}"
            self._new.clear()
            await self._new.wait()


def get(url: str) -> int:
    with urllib.request.urlopen(url, timeout=10) as answer:
        status: int = answer.status
        return status


def test_sighup_stops_gracefully_said_at_the_default_level_and_a_second_signal_ends_the_grace(
    tmp_path: Path,
) -> None:
    async def main() -> tuple[int, list[str], Path]:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "medina.cli", "serve", "--workers", "1", "--port", "0",
            "--records", str(tmp_path), "--organiser-token", TOKEN, "--grace-s", "600",
            "--http", "0", "--http-host", "127.0.0.1",
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env,
        )  # fmt: skip
        assert proc.stdout is not None and proc.stderr is not None
        err = Lines(proc.stderr)
        try:
            async with asyncio.timeout(60):
                address = (await proc.stdout.readline()).decode().split()[-1]
                viewer = (await proc.stdout.readline()).decode().split()[-1]
                async with grpc.aio.insecure_channel(address) as channel:
                    config = match_pb2.MatchConfig(ruleset=1, players=2, seed=3)  # type: ignore[arg-type]
                    made = await admin_pb2_grpc.MatchServiceStub(channel).CreateMatch(
                        admin_pb2.CreateMatchRequest(config=config), metadata=AUTH
                    )
                held = asyncio.Event()

                def hold(_bot: RawBot, message: arena_pb2.PlayResponse) -> bool:
                    if message.HasField("request"):
                        held.set()
                        return True  # never answered: the match stays in play
                    return False

                bots = [RawBot(address, t.token, hook=hold, keep_status=True) for t in made.tokens]
                playing = asyncio.gather(*(b.play() for b in bots))
                await held.wait()
                proc.send_signal(signal.SIGHUP)
                said = await err.holding("SIGHUP: shutting down")
                assert "1 running match(es) have up to 600 s to end" in said, said
                assert "(SIGHUP again ends them now)" in said, said
                # The grace has begun: the viewer and /metrics still answer.
                assert await asyncio.to_thread(get, f"{viewer}metrics") == 200
                proc.send_signal(signal.SIGHUP)
                code = await proc.wait()
                await err.task
                await playing
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
        return code, err.lines, tmp_path / f"{made.match_id}.jsonl"

    code, lines, path = asyncio.run(main())
    assert code == 0, lines
    assert any("stopped: 0 match(es) ended within the grace, 1 aborted" in x for x in lines), lines
    record = read_record(path)
    assert record.outcome is not None
    assert "server shutting down" in str(record.outcome)
