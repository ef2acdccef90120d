"""The ladder: matches formed per second and decisions per second, as its users run it.

Ladder row: ``medina-arena ladder serve`` with no tuning flags (its in-process arena, SQLite,
the default offers: medina-v2 2- and 4-player at 1 000 ms), eight bot processes of the SDK's
random bot (``python -m medina_client --bot random --bot-key KEY``, the SDK's default Hello)
handed the ladder's address. Measured over a window after a warm-up: matches formed and
finished per second, decisions per second (counted in the finished matches' records), the
mean wait of a bot between the end of one match and the start of its next, and the ladder
process's CPU per decision.

Baseline, same run: the same arena path with no ladder: ``medina-arena serve`` (defaults)
and an organiser that keeps four matches of the same offers in play, created back to back,
each seat played by the SDK's random bot in one process (``medina_client.play``): what the
arena referees without a lobby, a matchmaker or a database.
"""

from __future__ import annotations

import asyncio
import itertools
import re
import sys
import tempfile
import time
from pathlib import Path

import grpc
from medina.ladder import accounts
from medina.referee.config import MatchSettings, TimeControl
from medina.storage.ladder import LadderStore
from medina.v1 import admin_pb2, admin_pb2_grpc
from medina.wire import convert
from medina_client import play
from medina_client.bots import RandomBot

from bench import quick
from bench.capacity import cpu_seconds, start_process, stop_process

BOTS = 8


def _decisions(record: Path) -> int:
    try:
        return record.read_text().count('"decision"')
    except OSError:
        return 0


async def ladder_row(tmp: Path, window_s: float) -> dict[str, float]:
    db = tmp / "ladder.db"
    store = LadderStore(str(db))
    keys = []
    for i in range(BOTS):
        made = accounts.new_key()
        store.add_bot(f"random-{i}", f"owner-{i}", made.key_id, made.salt, made.digest)
        keys.append(made.key)
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "medina.cli", "ladder", "serve", "--db", str(db), "--port", "0",
        "--records", str(tmp / "records"),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL, cwd=tmp,
    )  # fmt: skip
    assert proc.stdout is not None
    line = (await proc.stdout.readline()).decode()
    found = re.search(r"listening on (127\.0\.0\.1:\d+)", line)
    assert found, line
    address = found.group(1)
    bots = [
        await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "medina_client",
            "--server",
            address,
            "--bot-key",
            key,
            "--bot",
            "random",
            "--quiet",
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
        )
        for key in keys
    ]
    try:
        while store.counts().get("finished", 0) < 4:  # warm-up: every bot connected
            await asyncio.sleep(0.2)  # polling the ladder's database
        start, cpu0 = time.time(), cpu_seconds(proc.pid)
        formed0 = max((m.id for m in store.matches()), default=0)
        await asyncio.sleep(window_s)  # the measured window
        end, cpu1 = time.time(), cpu_seconds(proc.pid)
        matches = store.matches()
        formed = sum(1 for m in matches if m.id > formed0)
        done = [m for m in matches if m.finished_at is not None and start <= m.finished_at < end]
        decisions = sum(_decisions(tmp / m.record_path) for m in done if m.record_path)
        # A bot's wait: from the end of one of its matches to the creation of its next.
        waits: list[float] = []
        by_bot: dict[str, list[tuple[float, float | None]]] = {}
        for m in sorted(matches, key=lambda m: m.created_at):
            for seat in m.seats:
                by_bot.setdefault(seat[1], []).append((m.created_at, m.finished_at))
        for spans in by_bot.values():
            for (_, fin), (nxt, _) in itertools.pairwise(spans):
                if fin is not None and start <= fin < end and nxt >= fin:
                    waits.append(nxt - fin)
        return {
            "formed/s": formed / window_s,
            "finished/s": len(done) / window_s,
            "decisions/s": decisions / window_s,
            "wait ms": 1000 * sum(waits) / len(waits) if waits else float("nan"),
            "cpu us/decision": 1e6 * (cpu1 - cpu0) / decisions if decisions else float("nan"),
        }
    finally:
        for bot in bots:
            bot.terminate()
        await asyncio.gather(*(b.wait() for b in bots))
        proc.terminate()
        await proc.wait()
        store.engine.dispose()


async def baseline_row(tmp: Path, window_s: float) -> dict[str, float]:
    proc, address = await start_process(
        sys.executable, "-m", "medina.cli", "serve", "--port", "0",
        "--records", str(tmp / "records-base"),
    )  # fmt: skip
    counts = {"formed": 0, "finished": 0, "decisions": 0}
    measuring = asyncio.Event()
    seeds = iter(range(1, 10**9))

    async def lane(players: int) -> None:
        async with grpc.aio.insecure_channel(address) as channel:
            stub = admin_pb2_grpc.MatchServiceStub(channel)
            while True:
                settings = MatchSettings(
                    "medina-v2", players, next(seeds), time=TimeControl(decision_ms=1000)
                )
                created = await stub.CreateMatch(
                    admin_pb2.CreateMatchRequest(config=convert.settings_to_proto(settings))
                )
                if measuring.is_set():
                    counts["formed"] += 1
                await asyncio.gather(
                    *(play(RandomBot(t.seat), address, t.token) for t in created.tokens)
                )
                if measuring.is_set():
                    counts["finished"] += 1
                    summary = await stub.GetMatch(
                        admin_pb2.GetMatchRequest(match_id=created.match_id)
                    )
                    counts["decisions"] += _decisions(Path(summary.match.record_path))

    lanes = [asyncio.create_task(lane(p)) for p in (2, 2, 4, 4)]
    try:
        await asyncio.sleep(2.0)  # warm-up
        cpu0 = cpu_seconds(proc.pid)
        measuring.set()
        await asyncio.sleep(window_s)  # the measured window
        cpu1 = cpu_seconds(proc.pid)
        measuring.clear()
    finally:
        for task in lanes:
            task.cancel()
        await asyncio.gather(*lanes, return_exceptions=True)
        await stop_process(proc)
    d = counts["decisions"]
    return {
        "formed/s": counts["formed"] / window_s,
        "finished/s": counts["finished"] / window_s,
        "decisions/s": d / window_s,
        "wait ms": float("nan"),
        "cpu us/decision": 1e6 * (cpu1 - cpu0) / d if d else float("nan"),
    }


def main() -> None:
    window = 8.0 if quick() else 20.0
    print(f"\n== ladder: {BOTS} SDK random bots on ladder serve's defaults, {window:g} s window")

    async def both() -> tuple[dict[str, float], dict[str, float]]:
        with tempfile.TemporaryDirectory() as tmp:
            ladder = await ladder_row(Path(tmp), window)
            base = await baseline_row(Path(tmp), window)
            return ladder, base

    ladder, base = asyncio.run(both())
    cols = ("formed/s", "finished/s", "decisions/s", "wait ms", "cpu us/decision")
    print(f"{'':<58}" + "".join(f"{c:>16}" for c in cols))
    rows = (
        ("ladder serve (defaults), 8 bot processes with keys", ladder),
        ("baseline: serve (defaults), organiser, 4 lanes, no ladder", base),
    )
    for label, row in rows:
        print(f"{label:<58}" + "".join(f"{row[c]:>16.1f}" for c in cols))
    if base["decisions/s"]:
        print(f"ladder decisions/s = {ladder['decisions/s'] / base['decisions/s']:.2f}x baseline")
