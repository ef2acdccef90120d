"""Decisions per second with ``serve``'s default (``default_workers()``: one worker less than
the cores, at least 1), ``--workers 1`` and ``--workers 2``, bots handed the server's address.

The server runs as its own process (``medina-arena serve`` with no tuning flags), and instant
bots (bench/instant_bots.py: every seat of ``LANES`` concurrent 4-player medina-v2 matches in
one asyncio process, answering each request at once with the first legal action, sending
the Hello the SDK sends by default) in a third, as an organiser would run them. Each lane
creates a match, plays it and creates the next; its bots are given the server's address
(a multi-worker server redirects them to their worker). Rows: the default; ``--workers 1``
and ``--workers 2`` (labelled); ``--workers 2`` with protocol 1.0 bots, which the front
forwards (labelled: the slow path). Server CPU is the server's processes' (front and
workers) user + system time over the measured window, per decision.

Then ``THINKING`` concurrent matches of bots that think 20-80 ms on a 100 ms clock, on the
default, ``--workers 1`` and ``--workers 2``: strikes, forfeits, refused CreateMatch calls, and the
latency the server adds to a decision as a bot sees it.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import statistics
import sys
import tempfile
from pathlib import Path

from medina.cli.serve_cmd import default_workers

from bench import quick

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "bench-organiser-token"
LANES = 16
#: Seconds the bots play before the measured window opens.
WARMUP_S = 2.0
#: Rounds of the ``--workers 2`` / ``--workers 1`` comparison: the two take turns (1 2, 2 1,
#: 1 2, ...), so a drift of the shared machine's speed reaches both alike; one pair alone
#: read 0.92x and 1.10x in two runs of the same code.
ROUNDS = 3
#: Concurrent matches of the thinking rows (issue 10's target: 256 with 0 strikes).
THINKING = 256
TICKS = os.sysconf("SC_CLK_TCK")


def _cpu_s(pid: int) -> tuple[float, float]:
    """User + system CPU seconds of a process, and of it with its children now running
    (Linux /proc)."""
    own = total = 0.0
    for p in [pid, *_children(pid)]:
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        used = (int(fields[11]) + int(fields[12])) / TICKS
        own = own or used
        total += used
    return own, total


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


async def measure(
    serve: tuple[str, ...],
    hello: str,
    seconds: float,
    records: Path,
    lanes: int = LANES,
    think: str | None = None,
) -> dict[str, float]:
    """One row: decisions/s and server CPU per decision (and what the bots saw)."""
    workers = int(serve[serve.index("--workers") + 1]) if "--workers" in serve else None
    front = (workers if workers is not None else default_workers()) > 1
    env = {**os.environ, "MEDINA_ORGANISER_TOKEN": TOKEN}
    server = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "medina.cli",
        "--log-level",
        "ERROR",
        "serve",
        "--port",
        "0",
        "--records",
        str(records),
        *serve,
        stdout=asyncio.subprocess.PIPE,
        env=env,
        cwd=str(ROOT),
    )
    try:
        assert server.stdout is not None
        line = (await asyncio.wait_for(server.stdout.readline(), 60)).decode()
        address = line.split()[-1]
        bots = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "bench.instant_bots",
            address,
            str(lanes),
            str(seconds),
            "--warmup",
            str(WARMUP_S),
            "--via-front",  # the bots know the server's address only
            "--hello",
            hello,
            *(["--think", think] if think else []),
            stdout=asyncio.subprocess.PIPE,
            env=env,
            cwd=str(ROOT),
        )
        # The server's CPU is sampled as the bots' measured window opens and closes: not
        # while the lanes connect, nor while the matches under way play to their end.
        assert bots.stdout is not None
        samples: list[tuple[float, float]] = []
        tally: dict[str, float] = {}
        async for raw in bots.stdout:
            line = json.loads(raw)
            if "window" in line:
                samples.append(_cpu_s(server.pid))
            else:
                tally = line
        await bots.wait()
        before, after = samples
    finally:
        server.send_signal(signal.SIGTERM)
        await server.wait()
    decisions = max(1.0, tally["decisions"])
    return {
        "rate": decisions / tally["seconds"],
        "cpu_us": (after[1] - before[1]) * 1e6 / decisions,
        # The front's own share (a single process has no front).
        "front_us": (after[0] - before[0]) * 1e6 / decisions if front else 0.0,
        "matches": tally["matches"],
        "bot_us": tally["cpu_s"] * 1e6 / decisions,
        "strikes": tally["strikes"],
        "forfeits": tally["forfeits"],
        "errors": tally["errors"],
        "p50_ms": tally["p50_ms"],
        "p99_ms": tally["p99_ms"],
        "bot_lag_p99_ms": tally["bot_lag_p99_ms"],
        "bot_lag_max_ms": tally["bot_lag_max_ms"],
        "refused": tally["refused"],
    }


async def run(seconds: float) -> None:
    """Measure the rows and print the table."""
    n = default_workers()
    default = f"default ({n} worker{'s' if n > 1 else ''})"
    rows = (
        (default, (), "sdk", "redirected" if n > 1 else "the server"),
        ("--workers 1", ("--workers", "1"), "sdk", "the server"),
        ("--workers 2", ("--workers", "2"), "sdk", "redirected"),
        ("--workers 2", ("--workers", "2"), "1.0", "forwarded (1.0 bots)"),
    )
    print(
        f"{LANES} concurrent 4-player matches, instant bots in one process handed the "
        f"server's address, {seconds:g} s each"
    )
    print(
        f"{'server':<22} {'bots play':<22} {'decisions/s':>11} {'server µs/dec':>13} "
        f"{'front':>6} {'bots µs/dec':>11} {'matches':>7} {'vs 1':>5}"
    )
    results = []
    for label, serve, hello, where in rows:
        with tempfile.TemporaryDirectory() as tmp:
            got = await measure(serve, hello, seconds, Path(tmp))
        results.append(got)
        print(
            f"{label:<22} {where:<22} {got['rate']:>11.0f} {got['cpu_us']:>13.0f} "
            f"{got['front_us']:>6.0f} {got['bot_us']:>11.0f} {got['matches']:>7.0f}",
            flush=True,
        )
    base = results[1]["rate"]
    print(
        f"default / --workers 1: {results[0]['rate'] / base:.2f}x; 1.0 bots forwarded / "
        f"--workers 1: {results[3]['rate'] / base:.2f}x"
    )
    rounds = 1 if quick() else ROUNDS
    ratios = [results[2]["rate"] / base]
    for r in range(1, rounds):
        pair: dict[int, float] = {}
        for w in (2, 1) if r % 2 else (1, 2):
            with tempfile.TemporaryDirectory() as tmp:
                pair[w] = (await measure(("--workers", str(w)), "sdk", seconds, Path(tmp)))["rate"]
        ratios.append(pair[2] / pair[1])
    print(
        f"--workers 2 / --workers 1, {len(ratios)} rounds taking turns: "
        + ", ".join(f"{x:.2f}x" for x in ratios)
        + f"; median {statistics.median(ratios):.2f}x (target >= 0.95x on this machine)"
    )
    print(
        f"\n{THINKING} concurrent 4-player matches, bots thinking 20-80 ms per decision on a "
        f"100 ms clock, one process, {seconds:g} s each (then every match plays to its end)"
    )
    print(
        f"{'server':<22} {'bots play':<22} {'decisions/s':>11} {'server µs/dec':>13} "
        f"{'added p50 ms':>12} {'added p99 ms':>12} {'strikes':>7} {'forfeits':>8} "
        f"{'refused':>7} {'errors':>6} {'matches':>7}"
    )
    for label, serve, hello, where in rows[:3]:
        with tempfile.TemporaryDirectory() as tmp:
            got = await measure(serve, hello, seconds, Path(tmp), THINKING, "20-80")
        print(
            f"{label:<22} {where:<22} {got['rate']:>11.0f} {got['cpu_us']:>13.0f} "
            f"{got['p50_ms']:>12.2f} {got['p99_ms']:>12.2f} {got['strikes']:>7.0f} "
            f"{got['forfeits']:>8.0f} {got['refused']:>7.0f} {got['errors']:>6.0f} "
            f"{got['matches']:>7.0f}",
            flush=True,
        )
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"cores here: {os.cpu_count()} (load average {load}); server µs/dec: CPU of the front and "
        "every worker per decision (front: the front's share); bots µs/dec: the bot "
        "process's; added: the latency the server adds to a thinking bot (its reply sent -> "
        "the match's next request received); refused: CreateMatch calls admission control "
        "turned away (retried by the lanes after the server's retry hint); the bots' process "
        "holds its own garbage collection while the window is measured"
    )


def main() -> None:
    """Section entry point."""
    asyncio.run(run(3.0 if quick() else 10.0))
