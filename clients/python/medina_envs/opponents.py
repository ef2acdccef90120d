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


def opponent(spec: OpponentSpec, seed: int) -> Opponent:
    """The opponent ``spec`` names, with its own randomness seeded by ``seed``.

    A name plays the SDK strategy on the engine state (the strategies see what the table
    could deduce, as the example bots do over the wire); a policy is given the encoding of
    the seat to move's view, like a learning agent, and must return an index its mask
    allows (IllegalIndexError otherwise).
    """
    if isinstance(spec, str):
        strategy = POLICIES.get(spec)
        if strategy is None:
            raise ValueError(f"unknown opponent {spec!r}: expected one of {', '.join(NAMES)}")
        rng = random.Random(seed)
        return lambda s: strategy(s, rng)
    if not callable(spec):
        raise TypeError(f"an opponent is a strategy name or a policy function, not {spec!r}")
    policy = spec

    def play(s: GameState) -> Action:
        seat = s.to_move
        who = f"the opponent policy in seat {seat}"
        chosen = policy(encode_state(s, seat).policy_input())
        index = core.action_index(chosen, who)
        return core.chosen_action(s, index, who)

    return play
