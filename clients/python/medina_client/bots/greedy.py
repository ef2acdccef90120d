"""A bot that plays the action with the best immediate score gain, using the engine."""

from __future__ import annotations

import random

from medina.engine import Action
from medina.engine.strategy import greedy_action

from ..bot import Bot, Turn


class GreedyBot(Bot):
    """For each legal action, apply it to the local engine state and keep the best gain."""

    name = "greedy"
    version = "1"

    def __init__(self, seed: int = 0) -> None:
        self.rng = random.Random(seed)

    def choose(self, turn: Turn) -> Action:
        """The legal action that raises this seat's score most now (ties: random)."""
        return greedy_action(turn.state(), self.rng, turn.legal)
