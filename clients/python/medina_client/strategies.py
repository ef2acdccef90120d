"""The SDK's example strategies as plain functions over an engine state: uniform random and
greedy (best immediate score gain). The example bots play them over gRPC; ``selfplay`` and
check-bot's scripted opponents play them in process (``POLICIES``)."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from medina.engine import Action, ActionKind, GameState, apply_action, legal_moves, result

#: A strategy: the action to play in a state, with the randomness it may use.
Strategy = Callable[[GameState, random.Random], Action]


def random_action(s: GameState, rng: random.Random) -> Action:
    """A uniformly random legal action."""
    moves = legal_moves(s)
    return moves.nth(rng.randrange(len(moves)))


def greedy_action(
    s: GameState, rng: random.Random, candidates: Sequence[Action] | None = None
) -> Action:
    """The action (of ``candidates``, default every legal one) that most raises the
    mover's score now; ties broken by ``rng``.

    A tea break scores like doing nothing, so it is chosen only when every
    placement would lower the score.
    """
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


#: The in-process strategies by name (``medina-arena selfplay --bots``, check-bot opponents).
POLICIES: dict[str, Strategy] = {"random": random_action, "greedy": greedy_action}
