"""The awk example bot under Debian's awk (mawk, installed when missing) through the stdio
bridge: as ``mawk -W interactive`` it plays a whole match; with ``fflush()`` alone mawk still
waits for a whole block of input, times out, and the bridge's hint says so."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from medina.records.reader import read_record
from medina.referee.config import MatchSettings, Policies, TimeControl, TimeoutPolicy
from medina.referee.outcome import MatchOutcome, Termination
from medina.rpc.common.config import ServerConfig
from medina.rpc.single.server import start_server
from medina.v1 import record_pb2
from medina_client import play
from medina_client.bots import RandomBot
from medina_client.stdio import UNFLUSHED_HINT

AWK_BOT = Path(__file__).resolve().parents[2] / "clients" / "stdio" / "first_bot.awk"

pytestmark = pytest.mark.timeout(300)


def mawk() -> str:
    """Debian's mawk, installed with apt-get when missing (the tests run as root)."""
    found = shutil.which("mawk")
    if found:
        return found
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        pytest.fail("mawk is missing: install Debian's mawk (apt-get install mawk)")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update", "-qq"], check=True, timeout=600, env=env)
    subprocess.run(["apt-get", "install", "-y", "-qq", "mawk"], check=True, timeout=600, env=env)
    found = shutil.which("mawk")
    if not found:
        pytest.fail("apt-get installed mawk but it is still not on PATH")
    return found


def play_awk(tmp_path: Path, *mawk_options: str) -> tuple[MatchOutcome, Path, Path]:
    """One 2-player match: the awk bot in seat 0 (through the bridge), random in seat 1; a
    timeout is a random move and a strike, the second strike forfeits."""
    log = tmp_path / "awk-bot.log"
    settings = MatchSettings(
        "medina-v2",
        2,
        5,
        time=TimeControl(decision_ms=2000, bank_ms=0),
        policies=Policies(on_timeout=TimeoutPolicy.RANDOM_ACTION, max_strikes=2),
    )

    async def main() -> tuple[MatchOutcome, Path]:
        running = await start_server(ServerConfig(host="127.0.0.1", port=0, records_dir=tmp_path))
        try:
            hosted = running.arena.create(settings)
            bridge = await asyncio.create_subprocess_exec(
                *(sys.executable, "-m", "medina_client", "stdio", "--name", "awk"),
                *("--server", running.address, "--token", hosted.tokens[0], "--log", str(log)),
                *("--", mawk(), *mawk_options, "-f", str(AWK_BOT)),
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.DEVNULL,
            )
            async with asyncio.timeout(120):
                await asyncio.gather(
                    bridge.wait(), play(RandomBot(3), running.address, hosted.tokens[1])
                )
                assert hosted.task is not None
                return await hosted.task, hosted.record_path
        finally:
            await running.stop(1)

    outcome, record = asyncio.run(main())
    return outcome, record, log


def test_mawk_interactive_plays_a_whole_match(tmp_path: Path) -> None:
    outcome, record_path, _log = play_awk(tmp_path, "-W", "interactive")
    assert outcome.complete
    assert [s.termination for s in outcome.seats] == [Termination.NORMAL] * 2
    record = read_record(record_path)
    sources = {d.source for _n, d in record.decisions if d.seat == 0}
    assert sources == {record_pb2.DECISION_SOURCE_BOT}  # every answer its own, in time


def test_fflush_alone_times_out_under_mawk_and_the_hint_says_what_to_do(tmp_path: Path) -> None:
    outcome, _record, log = play_awk(tmp_path)  # the bot calls fflush() after every line
    assert outcome.seats[0].termination is Termination.TIMEOUT  # two requests, two timeouts
    assert outcome.seats[1].termination is Termination.NORMAL
    said = log.read_text()
    assert "no answer line reached the bridge" in said
    assert "mawk -W interactive" in said and "fflush() alone is not enough" in said
    assert "fflush() alone is not enough for mawk" in UNFLUSHED_HINT
