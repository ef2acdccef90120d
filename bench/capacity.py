"""Capacity: many concurrent matches on one ``medina-arena serve`` process, as an organiser
with instant (and thinking) bots would see it, beside a raw grpc.aio ping-pong at the same
load in the same run.

The server runs as its own process (``medina-arena serve`` on its defaults; a row with
other flags says so in its label). The bots are written from ``proto/`` alone: every seat
of every match is one bidi stream of this one asyncio process, answering with the first
legal action the moment a request arrives (``instant``) or after a think time drawn from 20-80 ms
(``thinking``). The clock is 100 ms per decision, no bank: a bot that is charged the
server's delay collects strikes.

Reported per load level (concurrent 4-player medina-v2 matches, finished ones replaced):
- decisions/s the server refereed in the measured window;
- server CPU per decision (user+system time of the server process / decisions);
- bot-seen latency: from a seat sending reply r-1 to a seat receiving request r (the whole
  referee path: judge, apply, record, observe, encode, both transport hops), p50 and p99;
  for thinking bots this is the latency the server adds (the think time is not in it);
- strikes and forfeits over every match that ended;
- the server's RSS at the end.
The raw baseline: a grpc.aio server process that answers each reply with a request of the
same median size, one stream per match, the same number of streams, the same client
process: the latency the transport alone gives at that load.

``--soak N`` (``python -m bench capacity --soak 10000``): plays N matches at 32 at once and
prints the server's RSS at match 1,000 and every 1,000 after, to show memory stays flat.
"""

from __future__ import annotations

import asyncio
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from medina.cli.serve_cmd import default_workers
from medina.rpc.common.admission import AdmissionLimits
from medina.v1 import (
    admin_pb2,
    admin_pb2_grpc,
    arena_pb2,
    arena_pb2_grpc,
    common_pb2,
    game_pb2,
    match_pb2,
)

from bench import SOAK_ENV, quick
from bench.instant_bots import leave, retry_wait, strikes_and_forfeits
from bench.pauses import no_collection

ROOT = Path(__file__).resolve().parent.parent
TICK = os.sysconf("SC_CLK_TCK")
DECISION_MS = 100


def family(pid: int) -> list[int]:
    """A process and its children (a front and its workers)."""
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        children = []
    return [pid, *(int(c) for c in children)]


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process and its children now running, in seconds."""
    total = 0.0
    for p in family(pid):
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / TICK
    return total


def rss_mb(pid: int) -> float:
    """Resident set size of a process and its children now running, in MiB."""
    return sum(rss_mb_of(p) for p in family(pid))


def rss_mb_of(pid: int) -> float:
    """Resident set size of one process, in MiB (0 once it is gone)."""
    try:
        lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    except OSError:
        return 0.0
    return sum(int(x.split()[1]) for x in lines if x.startswith("VmRSS:")) / 1024


def pct(values: list[float], q: float) -> float:
    """The q-quantile (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


@dataclass
class Stats:
    """What the bots saw."""

    decisions: int = 0
    latencies: list[float] = field(default_factory=list)
    strikes: int = 0
    forfeits: int = 0
    matches_ended: int = 0
    request_bytes: list[int] = field(default_factory=list)
    reply_bytes: list[int] = field(default_factory=list)
    measuring: bool = False
    #: Streams the server redirected to the worker holding their match.
    redirects: int = 0
    #: Matches whose first request came ``QUEUED_S`` or more after CreateMatch answered
    #: (they waited in the server's start queue), and the longest such wait in seconds.
    queued: int = 0
    longest_wait_s: float = 0.0


def first_legal(request: arena_pb2.DecisionRequest) -> game_pb2.Action:
    """The first legal action of a request (tea when nothing else is legal)."""
    if request.legal.placements:
        first = request.legal.placements[0]
        return game_pb2.Action(kind=first.kind, square=first.squares[0], colour=first.colour)
    return game_pb2.Action(kind=game_pb2.ACTION_KIND_TEA)


#: A match whose first request comes this long after CreateMatch answered waited in the
#: server's start queue (bots that connect and a first request take milliseconds).
QUEUED_S = 0.1

#: The shortest warm-up before a window is measured ...
WARMUP_S = 3.0
#: ... and how many matches a second ``serve``'s start queue lets the load grow by (its
#: default start burst): a load of N matches is measured after N / that seconds at least,
#: once every match offered could have started, so that a row is the load the server
#: settles at, not its ramp. (With the old 3 s, 256 thinking matches were measured while
#: half of them still waited for their first start.)
RAMP_PER_S = AdmissionLimits().start_burst or 16


def warmup_s(matches: int) -> float:
    """How long ``matches`` matches are played before their window is measured."""
    return max(WARMUP_S, matches / RAMP_PER_S)


class MatchClock:
    """When the last reply of a match left its bot (for the bot-seen round trip), and when
    the match was created and its first request came."""

    def __init__(self) -> None:
        self.last_reply: float | None = None
        self.created = time.perf_counter()
        self.first_request: float | None = None


#: The Hellos a benchmark bot can send (``hello`` below).
HELLOS = ("sdk", "updates", "1.0")


def hello(token: str, kind: str) -> arena_pb2.PlayRequest:
    """``sdk``: what the Python SDK sends by default for a bot that does not use updates
    (protocol 1.1, forfeit notices, redirects, no updates); ``updates``: the same asking for
    updates (the dearer case); ``1.0``: a protocol 1.0 bot's (updates, no redirect)."""
    if kind == "1.0":
        return arena_pb2.PlayRequest(
            hello=arena_pb2.Hello(protocol_version=1, bot_name="capacity", token=token)
        )
    return arena_pb2.PlayRequest(
        hello=arena_pb2.Hello(
            protocol_version=1,
            protocol_minor=1,
            bot_name="capacity",
            token=token,
            omit_updates=kind == "sdk",
            features=["forfeit-notices", "redirect"],
        )
    )


async def seat(
    channels: Channels,
    address: str,
    token: str,
    clock: MatchClock,
    stats: Stats,
    think: tuple[float, float] | None,
    rng: random.Random,
    kind: str,
) -> None:
    """One bot seat: handshake (following a redirect as the SDK does), answer every
    request, read the end."""
    call = arena_pb2_grpc.ArenaServiceStub(channels.get(address)).Play()
    await call.write(hello(token, kind))
    message = await call.read()
    if isinstance(message, arena_pb2.PlayResponse) and message.WhichOneof("message") == "redirect":
        host = message.redirect.host or address.rpartition(":")[0]
        target = f"{host}:{message.redirect.port}"
        call = arena_pb2_grpc.ArenaServiceStub(channels.get(target)).Play()
        await call.write(hello(token, kind))
        stats.redirects += 1
        message = await call.read()
    try:
        while isinstance(message, arena_pb2.PlayResponse):
            which = message.WhichOneof("message")
            if which == "request":
                now = time.perf_counter()
                request = message.request
                if clock.first_request is None:
                    clock.first_request = now
                    wait = now - clock.created
                    if wait >= QUEUED_S:
                        stats.queued += 1
                        stats.longest_wait_s = max(stats.longest_wait_s, wait)
                if stats.measuring:
                    if clock.last_reply is not None:
                        stats.latencies.append(now - clock.last_reply)
                    stats.decisions += 1
                    if len(stats.request_bytes) < 5000:
                        stats.request_bytes.append(message.ByteSize())
                if think is not None:
                    await asyncio.sleep(rng.uniform(*think))
                reply = arena_pb2.PlayRequest(
                    reply=arena_pb2.Reply(
                        request_id=request.request_id, action=first_legal(request)
                    )
                )
                if stats.measuring and len(stats.reply_bytes) < 5000:
                    stats.reply_bytes.append(reply.ByteSize())
                clock.last_reply = time.perf_counter()
                await call.write(reply)
            elif which == "ended":
                await leave(call)
                break
            message = await call.read()
    finally:
        call.cancel()  # a no-op once the server ended the stream


class Channels:
    """One match's connections: to the address its bots were given and to wherever they
    were redirected (each match on connections of its own, as its bots' would be)."""

    def __init__(self) -> None:
        self.open: dict[str, grpc.aio.Channel] = {}

    def get(self, address: str) -> grpc.aio.Channel:
        """The connection to ``address``, opened on first use."""
        if address not in self.open:
            self.open[address] = grpc.aio.insecure_channel(address, options=CHANNEL_OPTIONS)
        return self.open[address]

    async def close(self) -> None:
        """Close every connection."""
        for channel in self.open.values():
            await channel.close()


#: Each match has its own connection, as its bots would (the server takes 64 streams per
#: HTTP/2 connection); the local subchannel pool keeps gRPC from sharing one.
CHANNEL_OPTIONS = [("grpc.use_local_subchannel_pool", 1)]


async def one_match(
    address: str,
    seed: int,
    stats: Stats,
    think: tuple[float, float] | None,
    kind: str = "sdk",
) -> float | None:
    """Create a 4-player match, play its seats, count its strikes; None once played, or the
    seconds to wait before asking again when refused (the server's retry hint). The
    organiser's calls and the match's four seats share one connection of their own (and
    one to the worker they are redirected to); the bots are given the server's address."""
    channels = Channels()
    try:
        return await _one_match(channels, address, seed, stats, think, kind)
    finally:
        await channels.close()


async def _one_match(
    channels: Channels,
    address: str,
    seed: int,
    stats: Stats,
    think: tuple[float, float] | None,
    kind: str,
) -> float | None:
    admin = admin_pb2_grpc.MatchServiceStub(channels.get(address))
    config = match_pb2.MatchConfig(
        ruleset=common_pb2.RULESET_MEDINA_V2,
        players=4,
        seed=seed,
        time_control=match_pb2.TimeControl(decision_ms=DECISION_MS, bank_ms=0, increment_ms=0),
    )
    try:
        created = await admin.CreateMatch(admin_pb2.CreateMatchRequest(config=config), timeout=30)
    except grpc.aio.AioRpcError as exc:
        if exc.code() == grpc.StatusCode.RESOURCE_EXHAUSTED:
            return retry_wait(exc)
        raise
    clock = MatchClock()
    rng = random.Random(seed)
    await asyncio.gather(
        *(seat(channels, address, t.token, clock, stats, think, rng, kind) for t in created.tokens)
    )
    summary = await admin.GetMatch(admin_pb2.GetMatchRequest(match_id=created.match_id), timeout=30)
    # Every match of the level counts for fairness (warm-up and drain too), not only those
    # that ended inside the measured window.
    stats.matches_ended += 1
    strikes, forfeits = strikes_and_forfeits(summary.match.result)
    stats.strikes += strikes
    stats.forfeits += forfeits
    return None


def serve_argv(records: str, *extra: str) -> list[str]:
    """``medina-arena serve`` as a user runs it: its defaults (one worker process per core
    behind the front, the default limits and admission), any free port; ``extra`` for a
    labelled row with other settings. CPU and RSS are the front's and its workers'."""
    return [
        sys.executable, "-m", "medina.cli", "serve", "--port", "0", "--records", records,
        *extra,
    ]  # fmt: skip


async def start_process(*argv: str) -> tuple[asyncio.subprocess.Process, str]:
    """Start a server process that prints 'listening on HOST:PORT'; its address."""
    proc = await asyncio.create_subprocess_exec(
        *argv, cwd=str(ROOT), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL
    )
    assert proc.stdout is not None
    line = (await asyncio.wait_for(proc.stdout.readline(), 60)).decode()
    if "listening on" not in line:
        raise RuntimeError(f"server did not start: {line!r}")
    return proc, line.rsplit(" ", 1)[1].strip()


async def stop_process(proc: asyncio.subprocess.Process) -> None:
    """SIGTERM and wait."""
    if proc.returncode is None:
        proc.terminate()
        try:
            await asyncio.wait_for(proc.wait(), 60)
        except TimeoutError:
            proc.kill()
            await proc.wait()


@dataclass
class Level:
    """One measured load level."""

    label: str
    matches: int
    decisions_s: float
    cpu_us: float
    p50_ms: float
    p99_ms: float
    strikes: int
    forfeits: int
    ended: int
    rss_mb: float
    client_cpu_us: float
    refused: int
    #: Matches that waited in the start queue (``Stats.queued``).
    queued: int = 0


async def measure(
    address: str,
    pid: int,
    load: Load,
    warmup_s: float,
    window_s: float,
) -> tuple[Level, Stats]:
    """Keep ``load.matches`` matches running; measure over ``window_s`` after ``warmup_s``."""
    concurrent, think = load.matches, load.think
    stats = Stats()
    refused = 0
    stop = asyncio.Event()
    seeds = iter(range(1, 10**9))

    async def keep_one() -> None:
        nonlocal refused
        while not stop.is_set():
            wait = await one_match(address, next(seeds), stats, think, load.hello)
            if wait is not None:
                refused += 1
                await asyncio.sleep(wait)

    runners = [asyncio.create_task(keep_one()) for _ in range(concurrent)]
    await asyncio.sleep(warmup_s)
    cpu0, own0, t0 = cpu_seconds(pid), time.process_time(), time.perf_counter()
    with no_collection():
        stats.measuring = True
        await asyncio.sleep(window_s)
        stats.measuring = False
    cpu1, own1, t1 = cpu_seconds(pid), time.process_time(), time.perf_counter()
    stop.set()
    await asyncio.gather(*runners)
    n = max(stats.decisions, 1)
    level = Level(
        label=load.label,
        matches=concurrent,
        decisions_s=stats.decisions / (t1 - t0),
        cpu_us=(cpu1 - cpu0) / n * 1e6,
        p50_ms=pct(stats.latencies, 0.5) * 1000,
        p99_ms=pct(stats.latencies, 0.99) * 1000,
        strikes=stats.strikes,
        forfeits=stats.forfeits,
        ended=stats.matches_ended,
        rss_mb=rss_mb(pid),
        client_cpu_us=(own1 - own0) / n * 1e6,
        refused=refused,
        queued=stats.queued,
    )
    return level, stats


async def raw_pingpong(
    concurrent: int,
    request_bytes: int,
    reply_bytes: int,
    window_s: float,
    think: tuple[float, float] | None = None,
) -> tuple[float, float, float, float]:
    """Raw grpc.aio bidi ping-pong, ``concurrent`` streams, each client waiting ``think``
    (drawn like the bots' think time) before it answers: (p50 ms, p99 ms, round trips/s,
    raw server CPU us per round trip). The latency never includes the think time."""
    proc, address = await start_process(
        sys.executable, "-m", "bench.raw_server", str(request_bytes)
    )
    latencies: list[float] = []
    measuring = False
    stop = asyncio.Event()
    payload = b"r" * reply_bytes
    try:
        async with grpc.aio.insecure_channel(address) as channel:
            method: Any = channel.stream_stream("/bench.Raw/Play")

            async def stream(rng: random.Random) -> None:
                queue: asyncio.Queue[bytes | None] = asyncio.Queue()

                async def out() -> AsyncIterator[bytes]:
                    while (m := await queue.get()) is not None:
                        yield m

                call = method(out())
                queue.put_nowait(payload)
                sent = time.perf_counter()
                async for _msg in call:
                    now = time.perf_counter()
                    if measuring:
                        latencies.append(now - sent)
                    if stop.is_set():
                        break
                    if think is not None:
                        await asyncio.sleep(rng.uniform(*think))
                    sent = time.perf_counter()
                    queue.put_nowait(payload)
                queue.put_nowait(None)
                call.cancel()

            tasks = [asyncio.create_task(stream(random.Random(n))) for n in range(concurrent)]
            await asyncio.sleep(1.0)
            with no_collection():
                measuring = True
                t0, cpu0 = time.perf_counter(), cpu_seconds(proc.pid or 0)
                await asyncio.sleep(window_s)
                measuring = False
            elapsed, cpu = time.perf_counter() - t0, cpu_seconds(proc.pid or 0) - cpu0
            stop.set()
            await asyncio.gather(*tasks, return_exceptions=True)
    finally:
        await stop_process(proc)
    n = max(len(latencies), 1)
    return pct(latencies, 0.5) * 1000, pct(latencies, 0.99) * 1000, n / elapsed, cpu / n * 1e6


@dataclass(frozen=True)
class Load:
    """One row: concurrent matches, think time, the bots' Hello, extra server options."""

    matches: int
    think: tuple[float, float] | None = None
    hello: str = "sdk"
    serve: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """How the row is named: the defaults say nothing, anything else is said."""
        bots = "instant" if self.think is None else "20-80 ms"
        bots += {"sdk": "", "updates": ", updates", "1.0": ", 1.0 bots"}[self.hello]
        return bots + (f", serve {' '.join(self.serve)}" if self.serve else "")


async def levels(loads: list[Load], window_s: float) -> None:
    """Measure each load on a fresh server, then the raw baseline at the same loads."""
    print(
        f"{'':<38} {'matches':>7} {'dec/s':>7} {'CPU us/dec':>10} {'p50 ms':>7} {'p99 ms':>7} "
        f"{'p50 x raw':>9} {'strikes':>7} {'forfeits':>8} {'ended':>5} {'RSS MB':>6} "
        f"{'refused':>7} {'queued':>6} {'wait s':>6} {'bots us/dec':>11}"
    )
    for load in loads:
        concurrent, think = load.matches, load.think
        with tempfile.TemporaryDirectory() as tmp:
            proc, address = await start_process(*serve_argv(tmp, *load.serve))
            try:
                level, stats = await measure(
                    address, proc.pid or 0, load, warmup_s(concurrent), window_s
                )
            finally:
                await stop_process(proc)
        req = int(statistics.median(stats.request_bytes)) if stats.request_bytes else 1000
        rep = int(statistics.median(stats.reply_bytes)) if stats.reply_bytes else 20
        raw50, raw99, raw_rate, raw_cpu = await raw_pingpong(
            concurrent, req, rep, min(window_s, 5.0), think
        )
        print(
            f"{level.label:<38} {level.matches:>7} "
            f"{level.decisions_s:>7.0f} {level.cpu_us:>10.0f} {level.p50_ms:>7.2f} "
            f"{level.p99_ms:>7.2f} {level.p50_ms / raw50:>8.2f}x {level.strikes:>7} "
            f"{level.forfeits:>8} {level.ended:>5} {level.rss_mb:>6.0f} {level.refused:>7} "
            f"{level.queued:>6} {stats.longest_wait_s:>6.1f} {level.client_cpu_us:>11.0f}"
        )
        raw_label = "raw ping-pong" + ("" if think is None else ", same think")
        print(
            f"{raw_label:<38} {level.matches:>7} {raw_rate:>7.0f} "
            f"{raw_cpu:>10.0f} {raw50:>7.2f} {raw99:>7.2f}",
            flush=True,
        )
    print(
        f"(4-player medina-v2, {DECISION_MS} ms per decision, no bank; `medina-arena serve` "
        f"with its defaults ({default_workers()} worker(s) here) unless the row says otherwise; "
        "CPU: the front's and the workers'; the bots are given the server's address and "
        "send the Hello the SDK sends by default (1.1, redirects followed, no updates) "
        "unless the row says otherwise; all bots in one client process, which holds its "
        "own garbage collection while a window is measured (so does the raw client); raw: "
        "as many streams, same message sizes, same "
        "think times; latency = a bot's reply sent -> the next request received (think "
        "time excluded), for the referee the whole path: judge, apply, record, observe, "
        "encode, two transport hops; strikes, forfeits, ended: every match of the level, "
        "warm-up and drain included; refused: CreateMatch answered RESOURCE_EXHAUSTED, "
        "asked again after the retry hint; each window measured after the matches "
        f"/ {RAMP_PER_S} s of play (the start queue's ramp), {WARMUP_S:g} s at least; "
        "queued: matches whose first request came "
        f"{QUEUED_S:g} s or more after CreateMatch (they waited in the server's start "
        "queue, no clock running), wait s: the longest such wait)"
    )


async def soak(total: int, concurrent: int = 32) -> None:
    """Play ``total`` matches, ``concurrent`` at once; print RSS every 1,000 matches."""
    with tempfile.TemporaryDirectory() as tmp:
        proc, address = await start_process(*serve_argv(tmp))
        pid = proc.pid or 0
        stats = Stats()
        done = 0
        seeds = iter(range(1, 10**9))
        marks: list[tuple[int, float]] = []
        started = time.perf_counter()
        try:

            async def worker() -> None:
                nonlocal done
                while done < total:
                    wait = await one_match(address, next(seeds), stats, None)
                    if wait is not None:
                        await asyncio.sleep(wait)
                    else:
                        done += 1
                        if done % 1000 == 0:
                            marks.append((done, rss_mb(pid)))
                            each = " + ".join(f"{rss_mb_of(p):.1f}" for p in family(pid))
                            print(
                                f"match {done:>6}: server RSS {marks[-1][1]:.1f} MB ({each}; "
                                f"{time.perf_counter() - started:.0f} s)",
                                flush=True,
                            )

            await asyncio.gather(*(worker() for _ in range(concurrent)))
        finally:
            await stop_process(proc)
    if len(marks) >= 2:
        first, last = marks[0][1], marks[-1][1]
        change = (last - first) / first * 100
        verdict = "PASS" if abs(change) <= 2 else "MISS"
        print(
            f"RSS of the server's processes from match {marks[0][0]} to {marks[-1][0]}: "
            f"{first:.1f} -> {last:.1f} MB ({change:+.1f} %), target +-2 %: {verdict}"
        )


def main() -> None:
    """Section entry point (``--soak N`` is read from MEDINA_BENCH_SOAK)."""
    soak_n = int(os.environ.get(SOAK_ENV, "0") or 0)
    if soak_n:
        asyncio.run(soak(soak_n))
        return
    think = (0.02, 0.08)
    if quick():
        loads = [Load(16), Load(64), Load(64, hello="updates")]
        window = 4.0
    else:
        loads = [
            Load(1),
            Load(16),
            Load(64),
            Load(128),
            Load(128, hello="updates"),
            Load(32, think),
            Load(128, think),
            Load(256, think),
            # Labelled: other settings than a user gets.
            Load(128, serve=("--workers", "1")),
            Load(128, hello="1.0"),
        ]
        window = 8.0
    asyncio.run(levels(loads, window))
