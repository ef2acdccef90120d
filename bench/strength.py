"""Strength of the reference bots: paired, seat-rotated games played in process.

The ladder, weakest first: random, greedy, the search levels (search-1 ..), champion. For
each pairing (A vs B) and each configuration (2-player and 4-player medina-v2) this section
plays every seed once per rotation of the seats: A and B alternate around the table (A,B
and B,A with two players; A,B,A,B and B,A,B,A with four), so both sides sit in every seat
on the same deal. Games run through the referee in process
(``medina.referee.local.local_match`` with ``policy(strategy, seed)`` seats, as ``selfplay``
does), with the strategies' depth or children budgets (no clock), so the table is
deterministic; only its timings vary.

Reported per pairing: A's and B's mean rank (per seat played), A's win share (each game's
first place shared equally among the seats holding it, summed over A's seats; an even share
is 0.5) with its 95 % Wilson interval over the games (a shared first counts as its share),
and the mean CPU time per decision of A and of B on this machine.

``make bench`` plays every line of the ladder (``ladder_pairings``: every level against
greedy and against the level below, the champion against the top level) at one seed each,
or ``--games N`` seeds; ``--quick`` only ``QUICK_PAIRINGS``. ``python -m bench.strength
[--seeds N] [--pairings ladder|quick] [--players P]`` plays more seeds (the ladder at the
default seeds: about an hour on one core).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

from medina.engine import Action, GameState
from medina.engine.stats import wilson
from medina.referee.config import MatchSettings
from medina.referee.local import local_match, policy
from medina.referee.record import NullSink
from medina.strategies import POLICIES
from medina.strategies.search import LEVELS

from bench import games as games_setting
from bench import quick

#: The ladder, weakest first.
LADDER: tuple[str, ...] = (
    "random",
    "greedy",
    *(f"search-{level}" for level in sorted(LEVELS)),
    "champion",
)
TOP_LEVEL = f"search-{max(LEVELS)}"


def ladder_pairings() -> list[tuple[str, str]]:
    """Every level above greedy against greedy and against the level below, greedy against
    random, and the champion against the top search level (the level below it)."""
    out: list[tuple[str, str]] = [("greedy", "random")]
    for k in range(2, len(LADDER)):
        out.append((LADDER[k], "greedy"))
        if LADDER[k - 1] != "greedy":
            out.append((LADDER[k], LADDER[k - 1]))
    return list(dict.fromkeys(out))


#: ``make bench``'s pairings: the yardsticks, the first level against greedy and the
#: champion against greedy and the top level.
QUICK_PAIRINGS: tuple[tuple[str, str], ...] = (
    ("greedy", "random"),
    ("search-1", "greedy"),
    ("champion", "greedy"),
    ("champion", TOP_LEVEL),
)
CONFIGS: tuple[tuple[str, int], ...] = (("medina-v2", 2), ("medina-v2", 4))
QUICK_SEEDS = 1
FULL_SEEDS = 10
FIRST_SEED = 5000  # seeds FIRST_SEED.. (a range the tuning never used)


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
    ms_a: float  # mean CPU time per decision of A
    ms_b: float
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


Strategy = Callable[[GameState, random.Random], Action]


def timed(strategy: Strategy, spent: list[float]) -> Strategy:
    """``strategy``, adding each decision's CPU time to ``spent`` (one entry per decision;
    CPU, not wall-clock, time, so a busy machine does not inflate it)."""

    def run(s: GameState, rng: random.Random) -> Action:
        started = time.process_time()
        action = strategy(s, rng)
        spent.append(time.process_time() - started)
        return action

    return run


def play(
    ruleset: str,
    players: int,
    seed: int,
    names: tuple[str, ...],
    spent: dict[str, list[float]] | None = None,
) -> tuple[int, ...]:
    """One in-process match; the seats' ranks (decision times per name into ``spent``)."""
    settings = MatchSettings(ruleset=ruleset, players=players, seed=seed, seat_names=names)
    times = spent if spent is not None else {}
    policies = [
        policy(timed(POLICIES[name], times.setdefault(name, [])), seed * 31 + s)
        for s, name in enumerate(names)
    ]
    match = local_match(f"strength-{seed}", settings, policies, NullSink())
    outcome = asyncio.run(match.run())
    if not outcome.complete:
        raise RuntimeError(f"strength game {ruleset} seed {seed} {names} did not complete")
    return tuple(s.rank for s in outcome.seats)


def measure(
    a: str, b: str, ruleset: str, players: int, seeds: int, first: int = FIRST_SEED
) -> Line:
    """Play every seed in every seating; the line of the table."""
    started = time.perf_counter()
    ranks_a: list[int] = []
    ranks_b: list[int] = []
    spent: dict[str, list[float]] = {a: [], b: []}
    wins = 0.0
    games = 0
    for seed in range(first, first + seeds):
        for names in seatings(a, b, players):
            ranks = play(ruleset, players, seed, names, spent)
            games += 1
            firsts = [i for i, r in enumerate(ranks) if r == 1]
            wins += sum(1 for i in firsts if names[i] == a) / len(firsts)
            ranks_a += [r for i, r in enumerate(ranks) if names[i] == a]
            ranks_b += [r for i, r in enumerate(ranks) if names[i] == b]
    low, high = wilson(wins, games)
    return Line(
        a=a,
        b=b,
        ruleset=ruleset,
        players=players,
        games=games,
        rank_a=statistics.fmean(ranks_a),
        rank_b=statistics.fmean(ranks_b),
        share_a=wins / games,
        low=low,
        high=high,
        ms_a=1000 * statistics.fmean(spent[a]) if spent[a] else 0.0,
        ms_b=1000 * statistics.fmean(spent[b]) if spent[b] else 0.0,
        seconds=time.perf_counter() - started,
    )


def verdict(line: Line) -> str:
    """Whether the interval lies above, below or across an even share."""
    if line.low > 0.5:
        return "A stronger"
    if line.high < 0.5:
        return "B stronger"
    return "not separated"


HEADER = (
    "| A vs B | game | games | mean rank A / B | win share A | 95 % Wilson | verdict "
    "| CPU ms/decision A / B | s |\n|---|---|---|---|---|---|---|---|---|"
)


def format_line(line: Line) -> str:
    """One row of the table (Markdown)."""
    return (
        f"| {line.a} vs {line.b} | {line.ruleset} {line.players}p | {line.games} | "
        f"{line.rank_a:.2f} / {line.rank_b:.2f} | {line.share_a:.2f} | "
        f"{line.low:.2f}..{line.high:.2f} | {verdict(line)} | "
        f"{line.ms_a:.0f} / {line.ms_b:.0f} | {line.seconds:.0f} |"
    )


def run_table(
    pairings: list[tuple[str, str]],
    seeds: int,
    configs: tuple[tuple[str, int], ...],
    first: int = FIRST_SEED,
) -> list[Line]:
    """Print the header and one line per pairing and configuration, as they finish."""
    print(
        f"paired games: seeds {first}..{first + seeds - 1}, each in every rotation "
        "of the seats (A and B alternate); in process, iteration / children budgets"
    )
    print(HEADER, flush=True)
    lines = []
    for a, b in pairings:
        for ruleset, players in configs:
            line = measure(a, b, ruleset, players, seeds, first)
            lines.append(line)
            print(format_line(line), flush=True)
    return lines


def main() -> None:
    """``make bench``'s table: every line of the ladder (``ladder_pairings``) at
    ``QUICK_SEEDS`` seed(s) each, or ``--games N`` seeds; with ``--quick``, only
    ``QUICK_PAIRINGS``. ``python -m bench.strength --help`` for more seeds."""
    seeds = games_setting(QUICK_SEEDS, QUICK_SEEDS)
    pairings = list(QUICK_PAIRINGS) if quick() else ladder_pairings()
    print(
        f"{seeds} seed(s) a line, every seat rotation (python -m bench --games N strength "
        "for N; python -m bench.strength --pairings ladder --seeds N plays the ladder alone)"
    )
    run_table(pairings, seeds, CONFIGS)


def cli(argv: list[str] | None = None) -> int:
    """``python -m bench.strength``: the chosen pairings at ``--seeds`` seeds."""
    parser = argparse.ArgumentParser(prog="python -m bench.strength", description=__doc__)
    parser.add_argument("--seeds", type=int, default=FULL_SEEDS, help="seeds per pairing")
    parser.add_argument(
        "--first-seed",
        type=int,
        default=FIRST_SEED,
        help=f"first seed (default {FIRST_SEED}); another range adds games to a measurement",
    )
    parser.add_argument(
        "--pairings",
        choices=("quick", "ladder"),
        default="ladder",
        help="quick: make bench's; ladder: every level vs greedy and vs the level below",
    )
    parser.add_argument(
        "--only", nargs="*", metavar="A:B", help=f"just these pairings (e.g. champion:{TOP_LEVEL})"
    )
    parser.add_argument(
        "--players", type=int, choices=(2, 4), help="only this player count (default both)"
    )
    args = parser.parse_args(argv)
    if args.seeds < 1:
        parser.error("--seeds must be at least 1")
    if args.only:
        pairings = []
        for spec in args.only:
            a, sep, b = spec.partition(":")
            if not sep or a not in POLICIES or b not in POLICIES:
                parser.error(f"--only takes A:B with A and B of {', '.join(POLICIES)}")
            pairings.append((a, b))
    else:
        pairings = ladder_pairings() if args.pairings == "ladder" else list(QUICK_PAIRINGS)
    configs = tuple(c for c in CONFIGS if args.players in (None, c[1]))
    run_table(pairings, args.seeds, configs, args.first_seed)
    return 0


if __name__ == "__main__":
    raise SystemExit(cli())
