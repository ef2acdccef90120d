"""Strength of the reference bots: paired, seat-rotated games played in process.

For each pairing (A vs B) and each configuration (4-player medina-v2, 2-player
medina-v1-2p) this section plays every seed once per rotation of the seats: A and B
alternate around the table (A,B,A,B and B,A,B,A with four players; A,B and B,A with two),
so both sides sit in every seat on the same deal. Games run through the referee in process
(``medina.referee.local.local_match`` with ``policy(strategy, seed)`` seats, as ``selfplay``
does), with the strategies' iteration budgets, so the table is deterministic.

Reported per pairing: A's and B's mean rank (per seat played), A's win share (each game's
first place shared equally among the seats holding it, summed over A's seats; an even share
is 0.5), and its 95 % interval: the normal interval over the per-seed means of the rotations
(the seeds are the independent units; the rotations of one seed are paired).
"""

from __future__ import annotations

import asyncio
import math
import statistics
import time
from dataclasses import dataclass

from medina.referee.config import MatchSettings
from medina.referee.local import local_match, policy
from medina.referee.record import NullSink
from medina_client.strategies import POLICIES

from bench import games as games_setting

#: (A, B) pairings and their seeds in a full run: greedy vs random, search (default level)
#: vs greedy, each level vs the one below (fewer seeds where games are slow).
PAIRINGS: tuple[tuple[str, str, int], ...] = (
    ("greedy", "random", 20),
    ("search", "greedy", 20),
    ("search-2", "search-1", 20),
    ("search-3", "search-2", 12),
    ("search-4", "search-3", 6),
    ("search-5", "search-4", 4),
)
QUICK_PAIRINGS = PAIRINGS[:2]
CONFIGS: tuple[tuple[str, int], ...] = (("medina-v2", 4), ("medina-v1-2p", 2))
QUICK_SEEDS = 2
FIRST_SEED = 5000  # seeds FIRST_SEED.. (a range the tuning never used)
Z95 = 1.959964


@dataclass(frozen=True, slots=True)
class Line:
    """One pairing in one configuration."""

    a: str
    b: str
    ruleset: str
    players: int
    games: int
    rank_a: float
    rank_b: float
    share_a: float
    low: float
    high: float
    seconds: float


def seatings(a: str, b: str, players: int) -> list[tuple[str, ...]]:
    """A and B alternating around the table, in each distinct rotation."""
    base = tuple(a if i % 2 == 0 else b for i in range(players))
    out: list[tuple[str, ...]] = []
    for k in range(players):
        rotated = base[k:] + base[:k]
        if rotated not in out:
            out.append(rotated)
    return out


def play(ruleset: str, players: int, seed: int, names: tuple[str, ...]) -> tuple[int, ...]:
    """One in-process match; the seats' ranks."""
    settings = MatchSettings(ruleset=ruleset, players=players, seed=seed, seat_names=names)
    policies = [policy(POLICIES[name], seed * 31 + s) for s, name in enumerate(names)]
    match = local_match(f"strength-{seed}", settings, policies, NullSink())
    outcome = asyncio.run(match.run())
    if not outcome.complete:
        raise RuntimeError(f"strength game {ruleset} seed {seed} {names} did not complete")
    return tuple(s.rank for s in outcome.seats)


def measure(a: str, b: str, ruleset: str, players: int, seeds: int) -> Line:
    """Play every seed in every seating; the line of the table."""
    started = time.perf_counter()
    per_seed: list[float] = []
    ranks_a: list[int] = []
    ranks_b: list[int] = []
    games = 0
    for seed in range(FIRST_SEED, FIRST_SEED + seeds):
        shares = []
        for names in seatings(a, b, players):
            ranks = play(ruleset, players, seed, names)
            games += 1
            firsts = [i for i, r in enumerate(ranks) if r == 1]
            shares.append(sum(1 for i in firsts if names[i] == a) / len(firsts))
            ranks_a += [r for i, r in enumerate(ranks) if names[i] == a]
            ranks_b += [r for i, r in enumerate(ranks) if names[i] == b]
        per_seed.append(statistics.fmean(shares))
    mean = statistics.fmean(per_seed)
    half = Z95 * statistics.stdev(per_seed) / math.sqrt(len(per_seed)) if seeds > 1 else 0.5
    return Line(
        a=a,
        b=b,
        ruleset=ruleset,
        players=players,
        games=games,
        rank_a=statistics.fmean(ranks_a),
        rank_b=statistics.fmean(ranks_b),
        share_a=mean,
        low=max(0.0, mean - half),
        high=min(1.0, mean + half),
        seconds=time.perf_counter() - started,
    )


def verdict(line: Line) -> str:
    """Whether the interval lies above, below or across an even share."""
    if line.low > 0.5:
        return "A stronger"
    if line.high < 0.5:
        return "B stronger"
    return "not separated"


def format_line(line: Line) -> str:
    """One row of the table (Markdown)."""
    return (
        f"| {line.a} vs {line.b} | {line.ruleset} {line.players}p | {line.games} | "
        f"{line.rank_a:.2f} / {line.rank_b:.2f} | {line.share_a:.2f} | "
        f"{line.low:.2f}..{line.high:.2f} | {verdict(line)} | {line.seconds:.0f} |"
    )


def main(full: bool = False) -> None:
    """Print the strength table: in ``make bench`` the quick one (greedy vs random and search
    vs greedy, ``QUICK_SEEDS`` seeds or ``--games``); with ``full`` every pairing at its own
    number of seeds (``python -m bench.strength``, about an hour on one core)."""
    pairings = PAIRINGS if full else QUICK_PAIRINGS
    print(
        f"paired games: seeds from {FIRST_SEED}, each in every rotation of the seats (A and B "
        "alternate); in process, iteration budgets; 95 % interval over the seeds"
    )
    if not full:
        print("quick table; the full one (every level): python -m bench.strength")
    print("| A vs B | game | games | mean rank A / B | win share A | 95 % interval | | s |")
    print("|---|---|---|---|---|---|---|---|")
    for a, b, seeds_full in pairings:
        seeds = seeds_full if full else games_setting(QUICK_SEEDS, QUICK_SEEDS)
        for ruleset, players in CONFIGS:
            print(format_line(measure(a, b, ruleset, players, seeds)), flush=True)


if __name__ == "__main__":
    main(full=True)
