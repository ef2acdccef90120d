"""The one-ply strategies as plain functions over an engine state: uniform random, greedy
(one ply with the heuristic evaluation) and gain (best immediate score gain)."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from medina.engine import Action, ActionKind, GameState, apply_action, legal_moves, result

from .heuristics import DEFAULT_WEIGHTS, Weights, evaluate

#: A strategy: the action to play in a state, with the randomness it may use.
Strategy = Callable[[GameState, random.Random], Action]


def random_action(s: GameState, rng: random.Random) -> Action:
    """A uniformly random legal action."""
    moves = legal_moves(s)
    return moves.nth(rng.randrange(len(moves)))


def scored_actions(
    s: GameState,
    candidates: Sequence[Action] | None = None,
    weights: Weights = DEFAULT_WEIGHTS,
) -> list[tuple[float, Action]]:
    """Every action (of ``candidates``, default every legal one) with the value of the
    position it leads to for the mover (``heuristics.evaluate``), best first; equal values
    keep the legal-action order."""
    seat = s.to_move
    scored = [
        (evaluate(apply_action(s, action), seat, weights), action)
        for action in (candidates if candidates else legal_moves(s).actions())
    ]
    scored.sort(key=lambda pair: -pair[0])
    return scored


def greedy_action(
    s: GameState, rng: random.Random, candidates: Sequence[Action] | None = None
) -> Action:
    """The action (of ``candidates``, default every legal one) leading to the position the
    heuristic evaluation values most for the mover: one ply, no search; ties broken by
    ``rng``.

    The evaluation (``medina.strategies.heuristics``) counts the score, what open palaces will
    bring and to whom, and what unplaced rooftops and tea tiles are still worth, so greedy
    grows a palace and roofs it in the same turn, keeps rooftops for palaces worth them,
    leaves no palace open for the next player, and takes a tea break rather than make a
    placement that helps an opponent.
    """
    scored = scored_actions(s, candidates)
    top = scored[0][0]
    best = [action for value, action in scored if value >= top - 1e-9]
    return best[rng.randrange(len(best))]


def gain_action(
    s: GameState, rng: random.Random, candidates: Sequence[Action] | None = None
) -> Action:
    """The action that most raises the mover's score now (``result``); ties broken by
    ``rng``. A tea break scores like doing nothing. (The old, naive greedy: weaker than
    random, kept as a yardstick.)"""
    seat = s.to_move
    before = result(s).totals[seat]
    best: list[Action] = []
    best_gain = -(10**9)
    for action in candidates if candidates else legal_moves(s).actions():
        if action.kind is ActionKind.TEA:
            gain = 0
        else:
            gain = result(apply_action(s, action)).totals[seat] - before
        if gain > best_gain:
            best, best_gain = [action], gain
        elif gain == best_gain:
            best.append(action)
    return best[rng.randrange(len(best))]
