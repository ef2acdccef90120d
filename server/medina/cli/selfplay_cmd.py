"""``medina-arena selfplay``: engine-only games between built-in bots, writing records."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import Any

from medina.records.writer import RecordWriter
from medina.referee.config import MatchSettings
from medina.referee.local import local_match, policy
from medina.strategies import POLICIES

from .errors import CommandError
from .options import add_match_options, settings_from_args


def add_parser(sub: Any) -> None:
    """Register the command."""
    p: argparse.ArgumentParser = sub.add_parser(
        "selfplay", help="engine-only games between built-in bots (no network)"
    )
    add_match_options(p)
    p.add_argument("--games", type=int, default=1, help="number of games (seeds seed..seed+K-1)")
    p.add_argument("--out", default="records", help="directory for the records")
    p.add_argument(
        "--bots",
        default="greedy,random",
        help="comma-separated built-in bots by seat, repeated to fill the seats "
        f"({', '.join(POLICIES)})",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Play the games and print one line per game and the totals."""
    names = [n.strip() for n in str(args.bots).split(",") if n.strip()]
    unknown = [n for n in names if n not in POLICIES]
    if not names or unknown:
        raise CommandError(f"unknown bot(s) {unknown or names}: choose from {', '.join(POLICIES)}")
    if args.games < 1:
        raise CommandError(f"--games must be at least 1, got {args.games}")
    bots = tuple(names[i % len(names)] for i in range(args.players))
    base = settings_from_args(args, names=bots)
    out = Path(args.out)
    wins = [0.0] * args.players
    for k in range(args.games):
        settings = MatchSettings(
            ruleset=base.ruleset,
            players=base.players,
            seed=base.seed + k,
            start_seat=base.start_seat,
            time=base.time,
            policies=base.policies,
            seat_names=bots,
        )
        match_id = f"selfplay-{settings.ruleset}-{settings.players}p-{settings.seed}"
        try:
            writer = RecordWriter(out, match_id)
        except (OSError, ValueError) as exc:
            raise CommandError(str(exc)) from None
        policies = [policy(POLICIES[bots[s]], settings.seed * 31 + s) for s in range(args.players)]
        try:
            outcome = asyncio.run(local_match(match_id, settings, policies, writer).run())
        finally:
            writer.close()
        winners = [s.seat for s in outcome.seats if s.rank == 1]
        for seat in winners:
            wins[seat] += 1 / len(winners)
        totals = " ".join(f"{s.total:3d}" for s in outcome.seats)
        print(f"game {k + 1:>3} seed {settings.seed:>6}: totals {totals}  record {writer.path}")
    table = ", ".join(f"seat {s} ({bots[s]}) {wins[s]:g}" for s in range(args.players))
    print(f"wins: {table}")
    return 0
