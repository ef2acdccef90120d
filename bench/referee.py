"""What a seat's clock measures over real gRPC (transport only), beside a raw gRPC ping-pong.

Full 4-player medina-v2 matches are played against four bot processes that answer at
once with the first legal action (bench/first_legal_bot.py). The server measures each
decision from writing the request to reading the reply, as the seat's clock does:
the transport and the bot only, not the referee's own work (the capacity section
times the whole round trip a bot sees). In the same run a raw server-first
bidirectional ping-pong with payloads of the same median sizes runs against one
client process (bench/pingpong_client.py).
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import grpc
from medina.engine import apply_action, legal_moves, new_game, observe
from medina.referee.config import MatchSettings, TimeControl
from medina.rpc.common.config import ServerConfig
from medina.rpc.single.server import start_server
from medina.v1 import arena_pb2
from medina.wire import convert

from bench import quick

ROOT = Path(__file__).resolve().parent.parent
PINGPONG = "/bench.PingPong/Play"


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def _spawn(module: str, *args: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        module,
        *args,
        cwd=str(ROOT),
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )


async def referee_latencies(
    matches: int, records: Path, players: int
) -> tuple[list[float], list[int]]:
    """Reply latencies (s) over ``matches`` full medina-v2 matches and the seeds played."""
    running = await start_server(ServerConfig(host="127.0.0.1", port=0, records_dir=records))
    latencies: list[float] = []
    seeds = list(range(1, matches + 1))
    try:
        for seed in seeds:
            settings = MatchSettings(
                "medina-v2", players, seed, time=TimeControl(decision_ms=30_000, bank_ms=0)
            )
            hosted = running.arena.create(settings)
            bots = [
                await _spawn("bench.first_legal_bot", running.address, token)
                for token in hosted.tokens
            ]
            assert hosted.task is not None
            outcome = await hosted.task
            for bot in bots:
                await bot.wait()
            if not outcome.complete:
                raise RuntimeError(f"benchmark match {seed} did not complete")
            latencies.extend(hosted.match.reply_seconds[players:])  # skip each first reply
    finally:
        await running.stop(grace_s=1)
    return latencies, seeds


def message_sizes(seeds: list[int], players: int = 4) -> tuple[int, int]:
    """Median serialized sizes of a DecisionRequest and of a Reply in the same games."""
    requests: list[int] = []
    replies: list[int] = []
    for seed in seeds:
        s = new_game("medina-v2", players, seed)
        cursors = [0] * players
        while not s.over:
            seat = s.to_move
            obs = observe(s, seat, since=cursors[seat])
            cursors[seat] = s.n_events
            msg = arena_pb2.PlayResponse(
                request=arena_pb2.DecisionRequest(
                    request_id=s.decisions + 1,
                    observation=convert.observation_to_proto(obs),
                    legal=convert.legal_to_proto(legal_moves(s)),
                    clock=arena_pb2.Clock(time_left_ms=30_000, last_reply_ms=1),
                )
            )
            requests.append(msg.ByteSize())
            action = legal_moves(s).nth(0)
            reply = arena_pb2.PlayRequest(
                reply=arena_pb2.Reply(
                    request_id=s.decisions + 1, action=convert.action_to_proto(action)
                )
            )
            replies.append(reply.ByteSize())
            s = apply_action(s, action)
    return int(statistics.median(requests)), int(statistics.median(replies))


async def pingpong_latencies(rounds: int, request_bytes: int, reply_bytes: int) -> list[float]:
    """Server-measured round trips of a raw bidi ping-pong against one client process."""
    latencies: list[float] = []
    payload = b"q" * request_bytes
    done = asyncio.Event()

    async def play(_requests: Any, context: Any) -> None:
        for _ in range(rounds):
            started = time.perf_counter()
            await context.write(payload)
            await context.read()
            latencies.append(time.perf_counter() - started)
        done.set()

    handler = grpc.method_handlers_generic_handler(
        "bench.PingPong", {"Play": grpc.stream_stream_rpc_method_handler(play)}
    )
    server = grpc.aio.server()
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    client = await _spawn("bench.pingpong_client", f"127.0.0.1:{port}", str(reply_bytes))
    await done.wait()
    await client.wait()
    await server.stop(1)
    return latencies[10:]  # warm-up


async def run(matches: int) -> None:
    """Measure both and print the table: 4-player matches (the target line) and 2-player
    matches (server and two bot processes, like the two-process ping-pong)."""
    seeds = list(range(1, matches + 1))
    request_bytes, reply_bytes = message_sizes(seeds)
    # The raw ping-pong runs before and after the matches, so drift in the machine's load
    # during the run weighs on both sides of the ratio alike.
    rounds = 160 * matches
    raw = await pingpong_latencies(rounds // 2, request_bytes, reply_bytes)
    with tempfile.TemporaryDirectory() as tmp:
        four, _ = await referee_latencies(matches, Path(tmp), 4)
        two, _ = await referee_latencies(matches, Path(tmp), 2)
    raw += await pingpong_latencies(rounds // 2, request_bytes, reply_bytes)
    raw_med, raw_p99 = statistics.median(raw) * 1000, _pct(raw, 0.99) * 1000
    print(f"{'':<38} {'decisions':>9} {'median ms':>10} {'p99 ms':>8} {'ratio':>6}")
    rows = (("transport only, 4 bot processes", four), ("transport only, 2 bot processes", two))
    ratios = {}
    for label, values in rows:
        med, p99 = statistics.median(values) * 1000, _pct(values, 0.99) * 1000
        ratios[label] = med / raw_med
        print(f"{label:<38} {len(values):>9} {med:>10.3f} {p99:>8.3f} {med / raw_med:>5.2f}x")
    raw_label = "raw gRPC bidi ping-pong (2 processes)"
    print(f"{raw_label:<38} {len(raw):>9} {raw_med:>10.3f} {raw_p99:>8.3f}")
    print(f"message sizes: request {request_bytes} B, reply {reply_bytes} B (medians, 4 players)")
    ratio = ratios["transport only, 4 bot processes"]
    print(
        f"transport only ({ratio:.2f}x raw): what a seat's clock measures, request written -> "
        "reply read, so the referee's own work (judge, apply, record, observe, encode) is left "
        "out; the round trip a bot sees, and its ratio to raw, is the capacity section's"
    )


def main() -> None:
    """Section entry point."""
    asyncio.run(run(2 if quick() else 8))
