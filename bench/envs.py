"""The learning environments' speed beside the raw engine's, in the same run.

For each configuration, ``N`` seeded games are played three ways, in this one process
(pinned to one CPU where the OS allows it, as the engine section is):

* ``engine dec/s``: the raw engine — at every decision ``legal_moves`` and ``apply_action``
  of a uniformly random legal action (``moves.nth``), no observation built: the engine
  section's random self-play;
* ``AEC steps/s``: the PettingZoo AEC environment (``medina_envs.aec_env``; one per
  configuration, reset for every game, as a trainer keeps one) with a uniformly random
  policy: at every step ``env.last()`` (the agent's observation: the planes, the vector and
  the action mask of docs/encoding.md, built by ``medina_envs.observer``), a random index
  among the mask's nonzero entries (drawn by Python's ``random``, as the engine's games
  draw), ``env.step``; the steps of agents after the game ended (one each) are not counted;
* ``wire steps/s``: the same with ``observer="wire"``: every observation built from the
  arena's own protobuf messages (``medina.wire``) and encoded from them.

``ratio`` is AEC steps/s over engine decisions/s: the share of the engine's speed an agent
keeps with its tensors built (the goal is at least 50 %). Every game is a new seed, as a
trainer's games are: a game played again finds the environment's value caches (the
planes' rows, a seat's entries) warm with its own positions, which made replayed games
about 5 % faster. The three play each game in turn, in an order that rotates, so a load
spike from another process or a drift of the machine's speed reaches them alike; a rate
is the decisions of all games over their summed time. No garbage collection is forced
between games (until 27 November one was, before every game, which left each game starting
with cold caches; a trainer's loop collects only when Python's thresholds say).
``encode µs`` is the observation alone (``observer.encode_state`` of the seat to move) per
decision, over the decisions of the first games, best of ``REPEATS`` passes.
"""

from __future__ import annotations

import gc
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, partial

import numpy as np
from medina.engine import apply_action, legal_moves, new_game
from medina.engine.variants import CONFIGURATIONS
from medina_envs import aec_env, tensors
from medina_envs.aec import MedinaAECEnv
from medina_envs.core import ObserverName
from medina_envs.observer import encode_state

from bench import games as games_setting
from bench.engine import one_cpu

GAMES = 30
QUICK_GAMES = 8
REPEATS = 3
#: Games whose decision states time the encoding alone.
SAMPLE_GAMES = 3


@dataclass(frozen=True, slots=True)
class Row:
    """One line of the table."""

    ruleset: str
    players: int
    games: int
    decisions: int
    engine_per_s: float
    aec_per_s: float
    wire_per_s: float
    encode_us: float

    @property
    def ratio(self) -> float:
        """AEC steps/s over engine decisions/s."""
        return self.aec_per_s / self.engine_per_s


def engine_game(ruleset: str, players: int, seed: int) -> int:
    """One seeded random game on the raw engine; its decisions."""
    rng = random.Random(seed)
    s = new_game(ruleset, players, seed)
    while not s.over:
        moves = legal_moves(s)
        s = apply_action(s, moves.nth(rng.randrange(len(moves))))
    return s.decisions


@cache
def _env(ruleset: str, players: int, observer: ObserverName) -> MedinaAECEnv:
    """One environment per configuration, reset for every game, as a trainer keeps one."""
    return aec_env(ruleset, players, observer=observer)


def env_game(ruleset: str, players: int, seed: int, observer: ObserverName = "fast") -> int:
    """One seeded game of the AEC environment with a uniformly random policy; its steps."""
    env = _env(ruleset, players, observer)
    env.reset(seed=seed)
    rng = random.Random(seed)  # the engine's games draw with the same generator
    steps = 0
    for _ in env.agent_iter():
        obs, _, terminated, truncated, _ = env.last()
        if obs is None or terminated or truncated:
            env.step(None)
            continue
        # The mask's nonzero entries read as booleans: numpy finds them four times faster
        # than in the int8 the observation space holds (5 µs a step, the policy's own cost).
        legal = obs["action_mask"].view(np.bool_).nonzero()[0]
        env.step(int(legal[rng.randrange(legal.size)]))
        steps += 1
    return steps


def encode_us(ruleset: str, players: int) -> float:
    """Microseconds of ``encode_state`` per decision over the first games' decisions."""
    states = []
    for seed in range(SAMPLE_GAMES):
        rng = random.Random(seed)
        s = new_game(ruleset, players, seed)
        while not s.over:
            states.append(s)
            moves = legal_moves(s)
            s = apply_action(s, moves.nth(rng.randrange(len(moves))))
    best = float("inf")
    for _ in range(REPEATS):
        gc.collect()
        started = time.perf_counter_ns()
        for s in states:
            encode_state(s, s.to_move)
        best = min(best, (time.perf_counter_ns() - started) / 1e3 / len(states))
    return best


def measure(ruleset: str, players: int, n_games: int) -> Row:
    """Time one configuration over ``n_games`` new seeded games."""
    runs: dict[str, Callable[[int], int]] = {
        "engine": partial(engine_game, ruleset, players),
        "fast": partial(env_game, ruleset, players, observer="fast"),
        "wire": partial(env_game, ruleset, players, observer="wire"),
    }
    for run in runs.values():  # warm-up: imports, the environment, constant caches
        run(10**6)
    # An environment's game of a seed is not the engine's (reset draws the game's seed), so
    # each counts its own decisions.
    spent = dict.fromkeys(runs, 0)
    done = dict.fromkeys(runs, 0)
    names = list(runs)
    # One collection before, none between games: a trainer's loop collects when Python's
    # thresholds say, and a game that leaves objects behind (in caches) pays for the
    # collections they cause, as it would there.
    gc.collect()
    for seed in range(n_games):
        for name in names[seed % 3 :] + names[: seed % 3]:
            started = time.perf_counter_ns()
            done[name] += runs[name](seed)
            spent[name] += time.perf_counter_ns() - started
    return Row(
        ruleset=ruleset,
        players=players,
        games=n_games,
        decisions=done["engine"],
        engine_per_s=done["engine"] / (spent["engine"] / 1e9),
        aec_per_s=done["fast"] / (spent["fast"] / 1e9),
        wire_per_s=done["wire"] / (spent["wire"] / 1e9),
        encode_us=encode_us(ruleset, players),
    )


HEADERS = (
    ("ruleset", "<", 13),
    ("n", ">", 2),
    ("games", ">", 5),
    ("decisions", ">", 9),
    ("engine dec/s", ">", 12),
    ("AEC steps/s", ">", 11),
    ("ratio", ">", 6),
    ("wire steps/s", ">", 12),
    ("encode µs", ">", 9),
)


def line(cells: tuple[str, ...]) -> str:
    """One table line."""
    return "  ".join(
        f"{c:{align}{width}}" for c, (_, align, width) in zip(cells, HEADERS, strict=True)
    )


def main() -> None:
    """Print the table."""
    n_games = games_setting(GAMES, QUICK_GAMES)
    with one_cpu() as pinning:
        print(
            f"Environment steps vs engine decisions: {n_games} seeded random games each; {pinning}"
            f"; tensors {'compiled' if tensors.COMPILED else 'in pure Python (not compiled)'}"
        )
        print(line(tuple(name for name, _, _ in HEADERS)))
        print(line(tuple("-" * width for _, _, width in HEADERS)))
        rows = []
        for ruleset, players in CONFIGURATIONS:
            row = measure(ruleset, players, n_games)
            rows.append(row)
            print(
                line(
                    (
                        row.ruleset,
                        str(row.players),
                        str(row.games),
                        str(row.decisions),
                        f"{row.engine_per_s:,.0f}",
                        f"{row.aec_per_s:,.0f}",
                        f"{row.ratio:.0%}",
                        f"{row.wire_per_s:,.0f}",
                        f"{row.encode_us:.0f}",
                    )
                ),
                flush=True,
            )
    worst = min(rows, key=lambda r: r.ratio)
    print(
        f"\nAEC steps/s are {worst.ratio:.0%} to "
        f"{max(r.ratio for r in rows):.0%} of the engine's decisions/s (goal: at least 50 %)"
    )
