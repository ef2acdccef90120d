"""Rules-engine speed: seeded random self-play for every ruleset and player count.

For each configuration this section

1. plays one warm-up game (not counted);
2. plays ``N`` seeded random games, timing each whole game with ``time.perf_counter_ns``:
   ``new_game`` and then, at every decision, ``legal_moves`` and ``apply_action`` of a
   uniformly random legal action (``moves.nth(rng.randrange(len(moves)))``). The legal
   actions are computed at every decision (``apply_action`` builds the next decision's
   ``LegalMoves`` and caches it on the new state);
3. replays the first few of those games (untimed) to collect their decision states and
   times, over all of those states, three operations separately (the best of three passes,
   divided by the number of states, as ``timeit`` does):

   * ``movegen``: ``legal_moves`` on ``s.copy()``, i.e. a state whose cache is empty, so
     the legal actions are generated from scratch (the copies are made before timing);
   * ``apply``: ``apply_action`` of the action the game played, on the original (cached)
     state, as in play; it validates the action, copies the state, places the piece,
     settles tiles and builds the *next* decision's legal actions;
   * ``actions()``: expanding the cached ``LegalMoves`` to the full list of ``Action``.

A second table measures what a search bot needs, per configuration:

* ``with lists ms``: the median of whole seeded random games in which the legal actions are
  materialised as a list of ``Action`` at every decision (``legal_moves(s).actions()``),
  the game scored with ``result`` at the end: the engine's target line;
* ``rollouts/s`` from the opening (the state ``new_game`` returns) and from mid-game (the
  state halfway through seeded random game 0): each rollout plays uniformly random legal
  actions (``nth``) to the end and scores it, as a Monte Carlo search bot does.

Everything runs in this one process, pinned to one CPU where the OS allows it (the
previous affinity is restored afterwards). The garbage collector stays on; a
``gc.collect()`` before each timed phase keeps one phase's garbage out of the next.
"""

from __future__ import annotations

import gc
import os
import platform
import random
import statistics
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from medina.engine import Action, GameState, apply_action, legal_moves, new_game, result
from medina.engine.variants import CONFIGURATIONS

from bench import games as games_setting
from bench import quick

#: (ruleset, players) in table order.
CONFIGS = CONFIGURATIONS
#: The line the engine aims for: median milliseconds per random game with action lists.
TARGET = ("medina-v2", 4, 10.0)
ROLLOUTS = 200
QUICK_ROLLOUTS = 40
GAMES = 300
QUICK_GAMES = 40
SAMPLE_GAMES = 20  # games whose decision states feed the per-operation timings
QUICK_SAMPLE_GAMES = 5
REPEATS = 3
WARMUP_SEED = 10**6  # a seed outside the timed range


@dataclass(frozen=True, slots=True)
class Row:
    """One line of the table."""

    ruleset: str
    players: int
    games: int
    decisions: float  # per game
    legal: float  # mean legal actions per decision
    median_ms: float
    p90_ms: float
    games_per_s: float
    movegen_us: float
    apply_us: float
    actions_us: float


def play(ruleset: str, players: int, seed: int) -> tuple[int, int]:
    """Play one seeded random game; (nanoseconds, decisions)."""
    rng = random.Random(seed)
    started = time.perf_counter_ns()
    s = new_game(ruleset, players, seed)
    while not s.over:
        moves = legal_moves(s)
        s = apply_action(s, moves.nth(rng.randrange(len(moves))))
    return time.perf_counter_ns() - started, s.decisions


def play_with_lists(ruleset: str, players: int, seed: int) -> int:
    """One seeded random game materialising the legal actions at every decision; ns."""
    rng = random.Random(seed)
    started = time.perf_counter_ns()
    s = new_game(ruleset, players, seed)
    while not s.over:
        actions = legal_moves(s).actions()
        s = apply_action(s, actions[rng.randrange(len(actions))])
    result(s)
    return time.perf_counter_ns() - started


def rollout(s: GameState, rng: random.Random) -> GameState:
    """Uniformly random legal actions from ``s`` to the end of the game."""
    while not s.over:
        moves = legal_moves(s)
        s = apply_action(s, moves.nth(rng.randrange(len(moves))))
    return s


def rollouts_per_s(start: GameState, n: int) -> float:
    """Scored random rollouts per second from ``start`` (seeded, ``n`` of them)."""
    rng = random.Random(1)
    gc.collect()
    t0 = time.perf_counter_ns()
    for _ in range(n):
        result(rollout(start, rng))
    return n / ((time.perf_counter_ns() - t0) / 1e9)


@dataclass(frozen=True, slots=True)
class SearchRow:
    """One line of the search-speed table."""

    ruleset: str
    players: int
    games: int
    with_lists_ms: float
    opening_per_s: float
    midgame_per_s: float


def measure_search(ruleset: str, players: int, n_games: int, n_rollouts: int) -> SearchRow:
    """Full games with action lists, and rollouts from the opening and from mid-game."""
    play_with_lists(ruleset, players, WARMUP_SEED)
    gc.collect()
    times = sorted(play_with_lists(ruleset, players, seed) / 1e6 for seed in range(n_games))
    states = [s for s, _ in record(ruleset, players, 0)]
    opening = new_game(ruleset, players, 0)
    middle = states[len(states) // 2]
    return SearchRow(
        ruleset=ruleset,
        players=players,
        games=n_games,
        with_lists_ms=statistics.median(times),
        opening_per_s=rollouts_per_s(opening, n_rollouts),
        midgame_per_s=rollouts_per_s(middle, n_rollouts),
    )


def record(ruleset: str, players: int, seed: int) -> list[tuple[GameState, Action]]:
    """Replay the game ``play`` plays for ``seed``: every decision state and its action."""
    rng = random.Random(seed)
    s = new_game(ruleset, players, seed)
    out = []
    while not s.over:
        moves = legal_moves(s)
        action = moves.nth(rng.randrange(len(moves)))
        out.append((s, action))
        s = apply_action(s, action)
    return out


def time_ops(sample: list[tuple[GameState, Action]]) -> tuple[float, float, float]:
    """(movegen, apply, actions()) in microseconds per call over the sample states."""
    clock = time.perf_counter_ns
    states = [s for s, _ in sample]
    cached = [legal_moves(s) for s in states]
    movegen = apply = expand = float("inf")
    for _ in range(REPEATS):
        fresh = [s.copy() for s in states]
        gc.collect()
        t0 = clock()
        for c in fresh:
            legal_moves(c)
        movegen = min(movegen, clock() - t0)
        del fresh
        gc.collect()
        t0 = clock()
        for s, a in sample:
            apply_action(s, a)
        apply = min(apply, clock() - t0)
        gc.collect()
        t0 = clock()
        for m in cached:
            m.actions()
        expand = min(expand, clock() - t0)
    n = len(sample) * 1000
    return movegen / n, apply / n, expand / n


def measure(ruleset: str, players: int, n_games: int, n_sample: int) -> Row:
    """Play and time one configuration."""
    play(ruleset, players, WARMUP_SEED)
    gc.collect()
    times: list[int] = []
    decisions = 0
    for seed in range(n_games):
        ns, d = play(ruleset, players, seed)
        times.append(ns)
        decisions += d
    sample = [
        pair for seed in range(min(n_sample, n_games)) for pair in record(ruleset, players, seed)
    ]
    legal = statistics.fmean(len(legal_moves(s)) for s, _ in sample)
    movegen_us, apply_us, actions_us = time_ops(sample)
    ms = sorted(t / 1e6 for t in times)
    return Row(
        ruleset=ruleset,
        players=players,
        games=n_games,
        decisions=decisions / n_games,
        legal=legal,
        median_ms=statistics.median(ms),
        p90_ms=percentile(ms, 0.9),
        games_per_s=n_games / (sum(ms) / 1e3),
        movegen_us=movegen_us,
        apply_us=apply_us,
        actions_us=actions_us,
    )


def percentile(ordered: list[float], q: float) -> float:
    """The ``q`` quantile of sorted values, interpolating linearly between ranks."""
    if len(ordered) == 1:
        return ordered[0]
    pos = q * (len(ordered) - 1)
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


@contextmanager
def one_cpu() -> Iterator[str]:
    """Pin this process to one CPU where supported; yields a description of the pinning."""
    get = getattr(os, "sched_getaffinity", None)
    put = getattr(os, "sched_setaffinity", None)
    if get is None or put is None:
        yield "not pinned (no CPU affinity on this OS); single process"
        return
    before: set[int] = get(0)
    cpu = max(before)
    try:
        put(0, {cpu})
    except OSError as err:
        yield f"not pinned ({err.strerror}); single process"
        return
    try:
        yield f"pinned to CPU {cpu} of {len(before)} available; single process"
    finally:
        put(0, before)


HEADERS = (
    ("ruleset", "<", 12),
    ("players", ">", 7),
    ("games", ">", 5),
    ("dec/game", ">", 8),
    ("legal/dec", ">", 9),
    ("median ms", ">", 9),
    ("p90 ms", ">", 7),
    ("games/s", ">", 7),
    ("movegen µs", ">", 10),
    ("apply µs", ">", 8),
    ("actions() µs", ">", 12),
)


def format_row(cells: tuple[str, ...]) -> str:
    """One table line, columns aligned as in ``HEADERS``."""
    return "  ".join(
        f"{cell:{align}{width}}" for cell, (_, align, width) in zip(cells, HEADERS, strict=True)
    )


def cells(row: Row) -> tuple[str, ...]:
    """The printed cells of a row."""
    return (
        row.ruleset,
        str(row.players),
        str(row.games),
        f"{row.decisions:.1f}",
        f"{row.legal:.1f}",
        f"{row.median_ms:.2f}",
        f"{row.p90_ms:.2f}",
        f"{row.games_per_s:.0f}",
        f"{row.movegen_us:.1f}",
        f"{row.apply_us:.1f}",
        f"{row.actions_us:.1f}",
    )


SEARCH_HEADERS = (
    ("ruleset", "<", 12),
    ("players", ">", 7),
    ("games", ">", 5),
    ("with lists ms", ">", 13),
    ("rollouts/s opening", ">", 18),
    ("rollouts/s mid-game", ">", 19),
)


def search_line(cells: tuple[str, ...]) -> str:
    """One line of the search-speed table."""
    return "  ".join(
        f"{cell:{align}{width}}"
        for cell, (_, align, width) in zip(cells, SEARCH_HEADERS, strict=True)
    )


def search_table(n_games: int) -> list[SearchRow]:
    """Print the search-speed table; returns its rows."""
    n_rollouts = QUICK_ROLLOUTS if quick() else ROLLOUTS
    print(
        f"search speed: median of {n_games} random games with legal_moves(s).actions() at "
        f"every decision and result() at the end; {n_rollouts} scored random rollouts "
        "(nth) from the opening and from the middle of seeded game 0"
    )
    print(search_line(tuple(name for name, _, _ in SEARCH_HEADERS)))
    print(search_line(tuple("-" * width for _, _, width in SEARCH_HEADERS)))
    rows = []
    for ruleset, players in CONFIGS:
        row = measure_search(ruleset, players, n_games, n_rollouts)
        rows.append(row)
        print(
            search_line(
                (
                    row.ruleset,
                    str(row.players),
                    str(row.games),
                    f"{row.with_lists_ms:.2f}",
                    f"{row.opening_per_s:.0f}",
                    f"{row.midgame_per_s:.0f}",
                )
            ),
            flush=True,
        )
    return rows


def main() -> None:
    """Print the engine table, the search-speed table and the target line."""
    n_games = games_setting(GAMES, QUICK_GAMES)
    n_sample = QUICK_SAMPLE_GAMES if quick() else SAMPLE_GAMES
    with one_cpu() as pinning:
        print(
            f"random self-play, {n_games} seeded games per row (seeds 0..{n_games - 1}) after "
            f"1 warm-up game; Python {platform.python_version()}; {pinning}; gc on"
        )
        print(
            f"per-call µs: best of {REPEATS} passes over every decision of the first "
            f"{min(n_sample, n_games)} games; movegen = legal_moves on an uncached s.copy(); "
            "apply includes the next decision's movegen"
        )
        print(format_row(tuple(name for name, _, _ in HEADERS)))
        print(format_row(tuple("-" * width for _, _, width in HEADERS)))
        rows = []
        for ruleset, players in CONFIGS:
            row = measure(ruleset, players, n_games, n_sample)
            rows.append(row)
            print(format_row(cells(row)), flush=True)
        print()
        search_rows = search_table(n_games)
    ruleset, players, limit = TARGET
    hit = next(r for r in search_rows if (r.ruleset, r.players) == (ruleset, players))
    verdict = "PASS" if hit.with_lists_ms <= limit else "MISS"
    print(
        f"target: {ruleset} {players}p median <= {limit:g} ms per game with action lists: "
        f"{hit.with_lists_ms:.2f} ms  {verdict}"
    )
