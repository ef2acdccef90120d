"""The seats a single-agent environment plays itself: the SDK's example strategies by name, or
any policy over the encoding (a trained one, for self-play).

>>> from medina_envs.opponents import opponent
>>> greedy = opponent("greedy", seed=1)
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import TypeAlias

from medina.engine import Action, GameState
from medina.strategies import POLICIES
from medina_client.encoding import PolicyInput

from . import core
from .observer import encode_state

__all__ = ["NAMES", "Opponent", "OpponentSpec", "Policy", "opponent"]

#: A policy: the observation an environment gives (``PolicyInput``) -> an action index.
Policy: TypeAlias = Callable[[PolicyInput], int]
#: How an opponent is named: a strategy of ``NAMES``, or a policy.
OpponentSpec: TypeAlias = str | Policy
#: An opponent as the environment runs it: the action for the seat to move.
Opponent: TypeAlias = Callable[[GameState], Action]
#: The SDK's example strategies (``medina.strategies.POLICIES``): random, gain,
#: greedy, search (its default level), search-1, search-2 and champion, each with its
#: depth or children budget only.
NAMES = tuple(sorted(POLICIES))


class _Strategy:
    """An SDK strategy by name with its own generator: a class, not a closure, so an
    environment holding it pickles (the strategy is looked up by name, the generator's
    state travels with it, and a restored environment plays on the same game)."""

    def __init__(self, name: str, seed: int) -> None:
        self.name = name
        self.rng = random.Random(seed)

    def __call__(self, s: GameState) -> Action:
        return POLICIES[self.name](s, self.rng)


class _PolicyOpponent:
    """A policy over the encoding playing the seat to move (it pickles if the policy does)."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy

    def __call__(self, s: GameState) -> Action:
        seat = s.to_move
        who = f"the opponent policy in seat {seat}"
        chosen = self.policy(encode_state(s, seat).policy_input())
        return core.chosen_action(s, core.action_index(chosen, who), who)


def opponent(spec: OpponentSpec, seed: int) -> Opponent:
    """The opponent ``spec`` names, with its own randomness seeded by ``seed``.

    A name plays the SDK strategy on the engine state (the strategies see what the table
    could deduce, as the example bots do over the wire); a policy is given the encoding of
    the seat to move's view, like a learning agent, and must return an index its mask
    allows (IllegalIndexError otherwise). Either pickles (a policy if it pickles itself).
    """
    if isinstance(spec, str):
        if spec not in POLICIES:
            raise ValueError(f"unknown opponent {spec!r}: expected one of {', '.join(NAMES)}")
        return _Strategy(spec, seed)
    if not callable(spec):
        raise TypeError(f"an opponent is a strategy name or a policy function, not {spec!r}")
    return _PolicyOpponent(spec)
