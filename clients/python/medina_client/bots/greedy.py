"""A bot that looks one placement ahead with the engine and a heuristic evaluation."""

from __future__ import annotations

import logging

from medina.engine import Action
from medina.strategies import greedy_action

from ..bot import Turn
from .seeded import SeededBot

log = logging.getLogger("medina_client.greedy")


class GreedyBot(SeededBot):
    """For each legal action, apply it to the local engine state and keep the one whose
    position ``medina.strategies.heuristics.evaluate`` values most.

    Ties are broken by a seeded random number generator (``seed``, or None: from the match,
    see ``SeededBot``). When the local state cannot be rebuilt it plays a random legal
    action instead.
    """

    name = "greedy"
    version = "1"

    def choose(self, turn: Turn) -> Action:
        """The legal action leading to the best-valued position (ties: random)."""
        legal = turn.legal
        state = self.state_or_none(turn)
        if state is None:
            return self.random_legal(turn)
        return greedy_action(state, self.rng, legal or None)
