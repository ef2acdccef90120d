"""Tournament throughput: games per minute at --concurrency 1, 2, 4 and 8, beside a single
match played alone.

Every game is what an organiser runs: a real 4-player medina-v2 match on an in-process
server, four bot processes (the example random bot, so the figure is the arena's and the
process start-up's, not a bot's thinking), the result stored in SQLite. The baseline is one
match played the same way with no tournament around it (no database, no scheduling):
the tournament's games per minute at concurrency 1 should be close to it.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path

import grpc
from medina.rpc.common.config import ServerConfig
from medina.rpc.single.server import start_server
from medina.storage.tournaments import TournamentStore
from medina.tournament.config import BotSpec, TournamentConfig, Variant
from medina.tournament.play import play_game
from medina.tournament.runner import Runner, RunOptions, enter
from medina.tournament.schedule import build

from bench import games, quick

BOT = ("python", "-m", "medina_client", "--bot", "random")


def _config(n_games: int) -> TournamentConfig:
    return TournamentConfig(
        name="bench",
        bots=tuple(BotSpec(f"random{i}", BOT) for i in range(4)),
        variants=(Variant("medina-v2", 4),),
        games=n_games,
    )


async def _single(tmp: Path) -> float:
    """Seconds for one match played alone (the baseline)."""
    cfg = _config(4)
    server = await start_server(ServerConfig(host="127.0.0.1", port=0, records_dir=tmp / "single"))
    try:
        async with grpc.aio.insecure_channel(server.address) as channel:
            g = build(cfg)[0]
            started = time.perf_counter()
            await play_game(
                channel,
                server.address,
                cfg.settings(g.variant, g.seed, g.seats),
                [cfg.bot(n) for n in g.seats],
                tmp,
                tmp / "single",
            )
            return time.perf_counter() - started
    finally:
        await server.stop(grace_s=1)


async def _tournament(tmp: Path, concurrency: int, n_games: int) -> float:
    """Seconds to play a tournament of ``n_games`` at ``concurrency``."""
    cfg = _config(n_games)
    store = TournamentStore(str(tmp / f"c{concurrency}.db"))
    row, _ = enter(store, cfg)
    runner = Runner(
        store,
        RunOptions(concurrency=concurrency, records=tmp / f"c{concurrency}", tournament_id=row.id),
    )
    started = time.perf_counter()
    tally = await runner.run()
    elapsed = time.perf_counter() - started
    assert tally.played == n_games, tally
    store.close()
    return elapsed


def main() -> None:
    """Print games per minute for each concurrency beside the single-match baseline."""
    levels = (1, 2, 4, 8)
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        single = asyncio.run(_single(tmp))
        print(
            f"single match alone (baseline): {single:.2f} s per game = {60 / single:.1f} games/min"
        )
        print(f"{'concurrency':>11} {'games':>6} {'seconds':>8} {'games/min':>10} {'x single':>9}")
        for c in levels:
            n = games(max(8, 2 * c), 4 if c <= 2 else 8) if quick() else max(8, 2 * c)
            n -= n % 4
            elapsed = asyncio.run(_tournament(tmp, c, n))
            rate = 60 * n / elapsed
            print(f"{c:>11} {n:>6} {elapsed:>8.1f} {rate:>10.1f} {rate / (60 / single):>8.2f}x")
    print("(4-player medina-v2, four random-bot processes per game, 2-core machine)")
