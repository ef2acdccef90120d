"""Train the example linear policy, then play it in the arena over gRPC.

    python -m medina_envs.examples.train_policy [--games 40] [--epochs 5] [--out FILE]
                                                [--eval-games 40] [--server HOST:PORT]

1. **Data**: ``--games`` episodes of the Gymnasium environment (medina-v2, 2 players, the
   learning seat drawn each episode, a random opponent) in which the SDK's greedy strategy
   chooses the learning seat's actions: the observation the environment gives and the index
   greedy chose, at every decision (behaviour cloning; greedy reads the engine state through
   ``env.state_of_game``, the policy only the observation).
2. **Training**: ``--epochs`` passes of minibatch Adam on the cross-entropy of the linear
   policy's softmax (``medina_envs.examples.linear_policy``), in numpy; the weights go to
   ``--out`` (``linear_policy.npz`` in the current directory: the weights shipped beside
   ``linear_policy`` stay as they are; ``MEDINA_POLICY_WEIGHTS=FILE`` plays new ones).
3. **The arena**: a ``medina-arena serve`` on 127.0.0.1 (started here unless ``--server``
   names one), and ``--eval-games`` matches against the SDK's random bot and as many against
   its greedy bot, created as any organiser does (``MatchService.CreateMatch``), the policy
   playing through ``medina_client.play_policy`` — exactly as a remote bot would — and
   changing seats from game to game. Prints its mean score against each (a win 1, a draw
   1/2) with a 95 % interval (Wilson).

With the defaults it trains in seconds and takes some 20 s in all on two cores (the 80
matches most of it), and beats random with the whole interval above 1/2; greedy, its
teacher, is stronger.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import math
import random
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import grpc
import numpy as np
from medina.engine.stats import wilson
from medina.strategies import greedy_action
from medina.v1 import admin_pb2_grpc
from medina.wire.shared.client import create_match
from medina_client import Bot, play, play_policy
from medina_client.bots import GreedyBot, RandomBot
from medina_client.encoding import action_index

from medina_envs import MedinaEnv
from medina_envs.examples.cli import check_at_least, check_seed
from medina_envs.examples.linear_policy import WEIGHTS, LinearPolicy, features

RULESET, PLAYERS = "medina-v2", 2


@dataclass(frozen=True, slots=True)
class Sample:
    """One decision: the policy's features, the mask and the teacher's index."""

    phi: np.ndarray
    mask: np.ndarray
    action: int


def collect(games: int, seed: int) -> list[Sample]:
    """The teacher's decisions in ``games`` episodes of the environment."""
    env = MedinaEnv(RULESET, PLAYERS, seat=None, opponents="random")
    teacher = random.Random(seed)
    samples = []
    for game in range(games):
        obs, _ = env.reset(seed=seed + game)
        done = False
        while not done:
            s = env.state_of_game
            chosen = greedy_action(s, teacher)
            g = s.rules.geometry
            index = action_index(chosen, g.cols, g.rows)
            phi = features(obs["observation"]["planes"])
            samples.append(Sample(phi, obs["action_mask"].copy(), index))
            obs, _, done, _, _ = env.step(index)
    return samples


def train(samples: Sequence[Sample], epochs: int, seed: int, lr: float = 0.05) -> LinearPolicy:
    """Minibatch Adam on the cross-entropy of the teacher's indices."""
    policy = LinearPolicy()
    params = [policy.weights, policy.bias]
    first = [np.zeros_like(p) for p in params]
    second = [np.zeros_like(p) for p in params]
    rng = np.random.default_rng(seed)
    step = 0
    for epoch in range(epochs):
        loss, right = 0.0, 0
        order = rng.permutation(len(samples))
        for start in range(0, len(order), 32):
            batch = order[start : start + 32]
            grads = [np.zeros_like(p) for p in params]
            for i in batch:
                sample = samples[i]
                p = policy.distribution(sample.phi, sample.mask)
                loss -= math.log(p[sample.action] + 1e-12)
                right += int(np.argmax(p) == sample.action)
                g_w, g_b = LinearPolicy.grad_log_prob(sample.action, p, sample.phi)
                grads[0] += g_w
                grads[1] += g_b
            step += 1
            for k, (param, grad) in enumerate(zip(params, grads, strict=True)):
                g = grad / len(batch)  # ascent on the log-likelihood
                first[k] = 0.9 * first[k] + 0.1 * g
                second[k] = 0.999 * second[k] + 0.001 * g * g
                m_hat = first[k] / (1 - 0.9**step)
                v_hat = second[k] / (1 - 0.999**step)
                param += lr * m_hat / (np.sqrt(v_hat) + 1e-8)
        print(
            f"epoch {epoch + 1}: cross-entropy {loss / len(samples):.3f}, "
            f"greedy's choice ranked first {right / len(samples):.0%}",
            flush=True,
        )
    return policy


async def arena_game(
    address: str, policy: LinearPolicy, opponent: Callable[[int], Bot], seed: int
) -> float:
    """One match on the server: the policy's score (1 win, 1/2 draw, 0 loss)."""
    seat = seed % PLAYERS
    request = create_match("medina-v2", PLAYERS, seed)
    async with grpc.aio.insecure_channel(address) as channel:
        created = await admin_pb2_grpc.MatchServiceStub(channel).CreateMatch(request)
    tokens = [t.token for t in sorted(created.tokens, key=lambda t: t.seat)]
    plays = [
        play_policy(policy, address, token, name="linear-policy")
        if k == seat
        else play(opponent(seed * 10 + k), address, token)
        for k, token in enumerate(tokens)
    ]
    result = (await asyncio.gather(*plays))[seat]
    ranks = {s.seat: s.rank for s in result.seats}
    mine, other = ranks[seat], ranks[1 - seat]
    return 1.0 if mine < other else 0.5 if mine == other else 0.0


async def evaluate(
    address: str, policy: LinearPolicy, opponent: Callable[[int], Bot], games: int, seed: int
) -> list[float]:
    """``games`` matches, four at a time."""
    scores: list[float] = []
    for start in range(0, games, 4):
        batch = range(seed + start, seed + min(games, start + 4))
        scores += await asyncio.gather(*(arena_game(address, policy, opponent, g) for g in batch))
    return scores


async def with_server(server: str | None, run: Callable[[str], Awaitable[None]]) -> None:
    """Run ``run(address)`` against ``server``, or a ``medina-arena serve`` started here."""
    if server is not None:
        await run(server)
        return
    with tempfile.TemporaryDirectory() as records:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            *("-m", "medina.cli", "serve", "--port", "0", "--records", records),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
        try:
            assert proc.stdout is not None
            async with asyncio.timeout(60):
                line = (await proc.stdout.readline()).decode()
            if not line.startswith("medina-arena listening on "):
                raise RuntimeError(f"medina-arena serve did not start: {line!r}")
            await run(line.split()[-1])
        finally:
            proc.terminate()
            await proc.wait()


def _arena_installed() -> bool:
    # The server ships in medina-arena, not in medina-client: looked for, never imported.
    try:
        return importlib.util.find_spec("medina.cli") is not None
    except ImportError:  # no medina package at all
        return False


def report(name: str, scores: Sequence[float]) -> tuple[float, float, float]:
    """Print and return the mean score and its 95 % interval."""
    mean = sum(scores) / len(scores)
    low, high = wilson(sum(scores), len(scores))
    print(
        f"against {name} over gRPC: mean score {mean:.2f} in {len(scores)} games "
        f"(95 % interval {low:.2f}..{high:.2f}); "
        f"{'beats it' if low > 0.5 else 'loses to it' if high < 0.5 else 'not separated'}",
        flush=True,
    )
    return mean, low, high


def main(argv: list[str] | None = None) -> int:
    """Collect, train, save, then play in the arena."""
    p = argparse.ArgumentParser(prog="python -m medina_envs.examples.train_policy")
    p.add_argument("--games", type=int, default=40, help="episodes of greedy's decisions")
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument(
        "--out",
        type=Path,
        default=Path("linear_policy.npz"),
        help=f"where the weights go (default: linear_policy.npz here; shipped: {WEIGHTS})",
    )
    p.add_argument("--eval-games", type=int, default=40, help="arena matches per opponent")
    p.add_argument("--server", help="HOST:PORT of a running arena (default: start one)")
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args(argv)
    check_at_least(p, "--games", args.games, 1)  # no decisions, nothing to learn from
    check_at_least(p, "--epochs", args.epochs, 0)  # 0: the untrained policy, evaluated
    check_at_least(p, "--eval-games", args.eval_games, 0)  # 0: no evaluation
    check_seed(p, args.seed)
    # Checked before the training, not after.
    if not args.out.parent.is_dir():
        p.error(f"--out {args.out}: no directory {args.out.parent}")
    if args.server is None and args.eval_games > 0 and not _arena_installed():
        p.error(
            "evaluating starts a medina-arena server, and medina-arena is not installed here: "
            "install it, pass --server HOST:PORT of a running one, or --eval-games 0"
        )
    started = time.perf_counter()
    samples = collect(args.games, args.seed)
    print(
        f"{len(samples)} decisions from {args.games} games ({time.perf_counter() - started:.0f} s)",
        flush=True,
    )
    policy = train(samples, args.epochs, args.seed)
    policy.save(args.out)
    print(f"weights in {args.out} ({time.perf_counter() - started:.0f} s)", flush=True)
    if args.eval_games == 0:
        return 0

    async def run(address: str) -> None:
        for name, bot in (("random", RandomBot), ("greedy", GreedyBot)):
            report(name, await evaluate(address, policy, bot, args.eval_games, 10_000))

    asyncio.run(with_server(args.server, run))
    print(f"done in {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
