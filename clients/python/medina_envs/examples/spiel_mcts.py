"""OpenSpiel's MCTS bot plays Medina against the SDK's example bots, in process.

    python -m medina_envs.examples.spiel_mcts --ruleset medina-v2 --players 2 \\
        --opponents greedy --games 4 --simulations 40

The MCTS seat moves round the table from game to game; the others play the named example
strategies (``medina_envs.opponents``: one for all, or one per other seat in turn). MCTS
(``open_spiel.python.algorithms.mcts``) searches the OpenSpiel game (``medina_envs.spiel``)
and values its leaves with ``--evaluator``: ``rollout`` (OpenSpiel's uniformly random
rollouts to the end) or ``heuristic`` (the greedy bot's static evaluation,
``HeuristicEvaluator``). It searches the true state, whose only hidden facts (the other
supplies) the table can deduce from the history anyway. Prints one line per game and the
MCTS seat's mean outcome; a bad option is a one-line usage error before any game.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

import numpy as np
from medina.engine import RULESETS, EngineError
from medina.strategies.heuristics import evaluate
from medina_client.encoding import action_index
from open_spiel.python.algorithms import mcts

from medina_envs import core
from medina_envs.examples.cli import check_at_least, check_seed
from medina_envs.opponents import NAMES, Opponent, opponent
from medina_envs.spiel import MedinaState, load

#: Points of heuristic lead that make a leaf worth tanh(1) = 0.76 of a win.
LEAD_SCALE = 10.0


class HeuristicEvaluator(mcts.Evaluator):  # type: ignore[misc]
    """Leaf values from the greedy bot's evaluation (``medina.strategies.heuristics``): each
    seat's value is the tanh of its evaluation over ``LEAD_SCALE``; a finished game its
    outcome. Priors are uniform."""

    def evaluate(self, state: MedinaState) -> np.ndarray:
        """Every seat's value of ``state`` in -1..1."""
        s = state.engine_state
        if s is None:
            return np.zeros(state.players)
        if s.over:
            return np.array(core.outcome(s))
        return np.tanh(np.array([evaluate(s, p) for p in range(s.players)]) / LEAD_SCALE)

    def prior(self, state: MedinaState) -> list[tuple[int, float]]:
        """Uniform over the legal actions (the chance outcomes at a chance node)."""
        if state.is_chance_node():
            outcomes: list[tuple[int, float]] = state.chance_outcomes()
            return outcomes
        legal = state.legal_actions()
        return [(a, 1.0 / len(legal)) for a in legal]


def play_game(
    ruleset: str,
    players: int,
    mcts_seat: int,
    opponents: Sequence[str],
    simulations: int,
    seed: int,
    evaluator: str = "rollout",
) -> tuple[float, ...]:
    """One game; every seat's outcome."""
    game = load(ruleset, players)
    rng = np.random.RandomState(seed)
    leaves = (
        HeuristicEvaluator()
        if evaluator == "heuristic"
        else mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=rng)
    )
    bot = mcts.MCTSBot(
        game, uct_c=2.0, max_simulations=simulations, evaluator=leaves, random_state=rng
    )
    others = [p for p in range(players) if p != mcts_seat]
    bots: dict[int, Opponent] = {
        p: opponent(opponents[i % len(opponents)], seed * 10 + p) for i, p in enumerate(others)
    }
    state: MedinaState = game.new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            actions, probs = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(int(rng.choice(actions, p=probs)))
        elif state.current_player() == mcts_seat:
            state.apply_action(bot.step(state))
        else:
            s = state.engine_state
            assert s is not None
            g = s.rules.geometry
            state.apply_action(action_index(bots[s.to_move](s), g.cols, g.rows))
    s = state.engine_state
    assert s is not None
    return core.outcome(s)


def main(argv: list[str] | None = None) -> int:
    """Play the games and print the MCTS seat's results."""
    p = argparse.ArgumentParser(prog="python -m medina_envs.examples.spiel_mcts")
    p.add_argument("--ruleset", choices=RULESETS, default="medina-v2")
    p.add_argument("--players", type=int, default=2)
    p.add_argument(
        "--opponents",
        default="random",
        help=(
            "an example strategy for all the other seats, or a comma-separated one per other "
            f"seat in turn ({', '.join(NAMES)})"
        ),
    )
    p.add_argument("--games", type=int, default=4)
    p.add_argument("--simulations", type=int, default=40, help="MCTS simulations per decision")
    p.add_argument("--evaluator", choices=("rollout", "heuristic"), default="rollout")
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args(argv)
    names = args.opponents.split(",")
    unknown = [n for n in names if n not in NAMES]
    if unknown:
        p.error(f"unknown opponent(s) {', '.join(unknown)}; known: {', '.join(NAMES)}")
    try:
        core.check_configuration(args.ruleset, args.players)
    except EngineError as exc:
        p.error(str(exc))
    others = args.players - 1
    if len(names) not in (1, others):
        p.error(
            f"--opponents names {len(names)} strategies for the {others} other seat(s) of "
            f"{args.players} players: give one for all, or one per other seat"
        )
    check_at_least(p, "--games", args.games, 1)
    check_at_least(p, "--simulations", args.simulations, 1)
    check_seed(p, args.seed)
    total = 0.0
    for k in range(args.games):
        seat = k % args.players
        started = time.perf_counter()
        outcome = play_game(
            args.ruleset,
            args.players,
            seat,
            names,
            args.simulations,
            args.seed + k,
            args.evaluator,
        )
        total += outcome[seat]
        print(
            f"game {k + 1}: MCTS ({args.evaluator}) in seat {seat} against {args.opponents}: "
            f"outcome "
            f"{outcome[seat]:+.2f} ({time.perf_counter() - started:.1f} s)",
            flush=True,
        )
    print(f"MCTS mean outcome over {args.games} games: {total / args.games:+.2f} (-1..1)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
