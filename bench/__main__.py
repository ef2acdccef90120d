"""``python -m bench [--quick] [--games N] [SECTION ...]``: run the benchmark sections in order.

A section is a module ``bench/<name>.py`` with a ``main() -> None`` that prints its own
table. To add one, import it below and append ``("<name>", <module>.main)`` to ``SECTIONS``.
Options reach the sections as environment variables (see ``bench/__init__.py``).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable

from bench import (
    GAMES_ENV,
    QUICK_ENV,
    SOAK_ENV,
    capacity,
    decision_path,
    engine,
    envs,
    handshakes,
    ladder,
    listing,
    referee,
    stream_ends,
    strength,
    tournament,
    viewer,
    viewer_load,
    workers,
)

#: The sections, run in this order.
SECTIONS: list[tuple[str, Callable[[], None]]] = [
    ("engine", engine.main),  # rules-engine speed: random self-play, movegen, apply_action
    ("envs", envs.main),  # learning environments: AEC steps/s beside engine decisions/s
    ("referee", referee.main),  # referee overhead over gRPC vs a raw ping-pong
    ("decision", decision_path.main),  # the referee's own work per decision, in process
    ("capacity", capacity.main),  # many matches on one server: dec/s, CPU, latency vs raw
    ("streams", stream_ends.main),  # what a stream leaves in bare grpc.aio, by how it ends
    ("handshakes", handshakes.main),  # what strangers' streams that never play leave in serve
    ("tournament", tournament.main),  # games per minute at concurrency 1..8 vs one match
    ("workers", workers.main),  # decisions/s with serve --workers 1 vs 2, instant bots
    ("ladder", ladder.main),  # ladder serve: matches formed/s, decisions/s vs the arena alone
    ("listing", listing.main),  # ListMatches over a directory of many records vs an empty one
    ("viewer", viewer.main),  # web viewer: board JSON, replay JSON, message sizes
    ("viewer_load", viewer_load.main),  # matches beside a viewer flooded with replay requests
    ("strength", strength.main),  # reference bots against each other, paired and rotated
]


def main(argv: list[str] | None = None) -> int:
    """Parse the options, export them for the sections, run the chosen sections."""
    names = [name for name, _ in SECTIONS]
    parser = argparse.ArgumentParser(
        prog="python -m bench", description="Run the benchmark sections in order."
    )
    parser.add_argument("--quick", action="store_true", help=f"fewer games (same as {QUICK_ENV}=1)")
    parser.add_argument(
        "--games", type=int, metavar="N", help=f"games per configuration ({GAMES_ENV})"
    )
    parser.add_argument(
        "sections",
        nargs="*",
        metavar="SECTION",
        help=f"sections to run (default: all of {', '.join(names)})",
    )
    parser.add_argument(
        "--soak",
        type=int,
        metavar="N",
        help="capacity: play N matches and report the server's RSS every 1,000 (SOAK_ENV)",
    )
    args = parser.parse_args(argv)
    if args.soak is not None:
        if args.soak < 2000:
            parser.error("--soak needs at least 2000 matches (RSS is compared from match 1000 on)")
        os.environ[SOAK_ENV] = str(args.soak)
        args.sections = args.sections or ["capacity"]
    unknown = [name for name in args.sections if name not in names]
    if unknown:
        parser.error(f"unknown section(s) {', '.join(unknown)}; known: {', '.join(names)}")
    if args.quick:
        os.environ[QUICK_ENV] = "1"
    if args.games is not None:
        if args.games < 1:
            parser.error("--games must be at least 1")
        os.environ[GAMES_ENV] = str(args.games)
    for name, run in SECTIONS:
        if args.sections and name not in args.sections:
            continue
        started = time.perf_counter()
        print(f"== {name} ==", flush=True)
        run()
        print(f"({name}: {time.perf_counter() - started:.1f} s)\n", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
