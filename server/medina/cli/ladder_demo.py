"""``medina-arena ladder demo`` (``make ladder``): a local ladder with the example bots,
its standings printed as they change, until Ctrl-C (or ``--seconds``)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
import tempfile
from pathlib import Path

from medina.ladder.house import (
    HouseBot,
    HouseUnavailable,
    drain_house,
    require_sdk,
    start_house,
)
from medina.ladder.serve import LadderServerConfig, start_ladder
from medina.ladder.service import LadderConfig
from medina.ladder.standings import as_table
from medina.rpc.common.serving import wait_for_signal
from medina.storage.ladder import LadderStore

#: The demo's bots, each of its own owner (one owner's bots would not meet).
DEMO_BOTS = (
    HouseBot("greedy", "house-1", ("--bot", "greedy")),
    HouseBot("search-2", "house-2", ("--bot", "search", "--level", "2")),
    HouseBot("random", "house-3", ("--bot", "random")),
    HouseBot("search-1", "house-4", ("--bot", "search", "--level", "1")),
)


def add_parser(lsub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``ladder demo``."""
    demo = lsub.add_parser("demo", help="a local ladder with the example bots (make ladder)")
    demo.add_argument("--dir", help="where the database and records go (default: a temp dir)")
    demo.add_argument(
        "--every", type=float, default=5.0, help="seconds between standings (default 5)"
    )
    demo.add_argument("--seconds", type=float, help="stop after this long (default: Ctrl-C)")
    demo.set_defaults(run=_demo)


def _demo(args: argparse.Namespace) -> int:
    if args.every <= 0:
        print("medina-arena ladder demo: --every must be positive", file=sys.stderr)
        return 2
    try:
        require_sdk()
    except HouseUnavailable as exc:
        print(f"medina-arena ladder demo: {exc}", file=sys.stderr)
        return 2
    if args.dir:
        where = Path(args.dir)
        where.mkdir(parents=True, exist_ok=True)
        return asyncio.run(_run(where, args.every, args.seconds))
    with tempfile.TemporaryDirectory(prefix="medina-ladder-") as tmp:
        return asyncio.run(_run(Path(tmp), args.every, args.seconds))


async def _run(where: Path, every: float, seconds: float | None) -> int:
    config = LadderServerConfig(
        db=str(where / "ladder.db"),
        port=0,
        records_dir=where / "records",
        ladder=LadderConfig(seed=1),
    )
    ladder = await start_ladder(config)
    address = f"127.0.0.1:{ladder.port}"
    store = ladder.store
    procs: list[asyncio.subprocess.Process] = []
    try:
        procs = await start_house(store, address, DEMO_BOTS, where)
        print(
            f"ladder at {address} with {len(DEMO_BOTS)} example bots; database "
            f"{config.db}; Ctrl-C stops",
            flush=True,
        )
        names = [b.name for b in DEMO_BOTS]
        await _show(store, every, seconds, dict(zip(names, procs, strict=True)), where)
    finally:
        await drain_house(ladder.ladder, procs)
        await ladder.stop()
    return 0


async def _show(
    store: LadderStore,
    every: float,
    seconds: float | None,
    procs: dict[str, asyncio.subprocess.Process],
    where: Path,
) -> None:
    stop = asyncio.create_task(wait_for_signal())
    told: set[str] = set()
    loop = asyncio.get_running_loop()
    end = None if seconds is None else loop.time() + seconds
    last = ""
    while not stop.done():
        lines = await asyncio.to_thread(store.lines)
        counts = await asyncio.to_thread(store.counts)
        table = as_table(lines)
        for name, proc in procs.items():
            if proc.returncode is not None and name not in told:
                told.add(name)
                print(
                    f"bot {name} exited ({proc.returncode}); see {where / f'bot-{name}.log'}",
                    file=sys.stderr,
                    flush=True,
                )
        if table != last:
            print(f"\n{counts.get('finished', 0)} matches played\n{table}", flush=True)
            last = table
        wait = every if end is None else min(every, end - loop.time())
        if wait <= 0:
            break
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(wait):
                await asyncio.shield(stop)
    stop.cancel()
