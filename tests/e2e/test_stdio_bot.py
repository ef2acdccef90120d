"""The Node stdio example bot through ``python -m medina_client stdio`` over real gRPC on
127.0.0.1: a full match against a Python bot, and the same under ``medina-arena match``."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
from collections.abc import Awaitable
from pathlib import Path
from typing import TypeVar

import bounded
import pytest
from medina.records.reader import read_record
from medina.records.verify import verify_record
from medina.referee.config import MatchSettings
from medina.referee.outcome import Termination
from medina.rpc.common.config import ServerConfig
from medina.rpc.single.server import start_server
from medina.v1 import record_pb2
from medina_client import play
from medina_client.bots import RandomBot

T = TypeVar("T")
RANDOM_JS = Path(__file__).resolve().parents[2] / "clients" / "stdio" / "random_bot.js"

pytestmark = [
    pytest.mark.skipif(shutil.which("node") is None, reason="the example bot needs node"),
    pytest.mark.timeout(120),
]


def run(coro: Awaitable[T], timeout: float = 90) -> T:
    return bounded.run(coro, timeout)


def test_the_node_bot_plays_a_full_match_through_the_bridge(tmp_path: Path) -> None:
    log = tmp_path / "node-bot.log"

    async def main() -> tuple[int, str, str]:
        running = await start_server(ServerConfig(host="127.0.0.1", port=0, records_dir=tmp_path))
        try:
            hosted = running.arena.create(MatchSettings("medina-v2", 2, 11))
            bridge = await asyncio.create_subprocess_exec(
                *(sys.executable, "-m", "medina_client", "stdio", "--name", "node-random"),
                *("--server", running.address, "--token", hosted.tokens[0], "--log", str(log)),
                *("--", "node", str(RANDOM_JS), "--seed", "7"),
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
            python_bot = play(RandomBot(3), running.address, hosted.tokens[1])
            (out, err), _ = await asyncio.gather(bridge.communicate(), python_bot)
            assert hosted.task is not None
            outcome = await hosted.task
            assert outcome.complete
            assert [s.termination for s in outcome.seats] == [Termination.NORMAL] * 2, (
                outcome.seats,
                err,
            )
            assert outcome.seats[0].name == "node-random" and outcome.seats[0].strikes == 0
            record = read_record(hosted.record_path)
            report = verify_record(record)
            assert report.ok, report.summary()
            sources = [d.source for _n, d in record.decisions if d.seat == 0]
            assert len(sources) > 20  # a whole game of decisions
            assert set(sources) == {record_pb2.DECISION_SOURCE_BOT}  # no timeouts, no fallback
            assert bridge.returncode is not None
            return bridge.returncode, out.decode(), err.decode()
        finally:
            await running.stop(1)

    code, out, err = run(main())
    assert code == 0, err
    assert out.startswith("match over: seat 0 node-random: ")
    text = log.read_text()
    assert "random_bot: playing seat 0 of match" in text  # the child's stderr
    assert "random_bot: match over: seat 0: " in text
    assert "[bridge] the bot exited with status 0" in text


def test_medina_arena_match_runs_the_bridge_with_the_seat_in_its_command(tmp_path: Path) -> None:
    stdio = (
        # The seat's --server/--token go in before the "--", into the bridge's options.
        # Its program's log goes beside the seat's own (MEDINA_LOG_DIR).
        f"python -m medina_client stdio --name js -- node {RANDOM_JS} --seed 4"
    )
    done = subprocess.run(
        [sys.executable, "-m", "medina.cli", "match", "--ruleset", "medina-v1-2p",
         "--players", "2", "--seed", "12", "--bot", stdio,
         "--bot", "python -m medina_client --bot random",
         "--records", str(tmp_path / "records"), "--quiet"],
        capture_output=True, text=True, timeout=100,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert " js " in done.stdout  # the scoreboard names the stdio bot
    record = read_record(done.stdout.rsplit("record: ", 1)[1].strip())
    report = verify_record(record)
    assert report.ok, report.summary()
    assert {d.source for _n, d in record.decisions if d.seat == 0} == {
        record_pb2.DECISION_SOURCE_BOT
    }
    # named for the match and seat, as a sandboxed bot's (it was bot-js-PID.log), with no
    # directory left behind
    match = Path(done.stdout.rsplit("record: ", 1)[1].strip()).stem
    logs = sorted(p.name for p in (tmp_path / "records").iterdir() if "bot-js-" in p.name)
    assert len(logs) == 1 and logs[0].startswith(f"{match}.seat0.bot-js-"), logs
    assert "random_bot: match over" in (tmp_path / "records" / logs[0]).read_text()
    assert not list((tmp_path / "records").glob("*.logs"))
