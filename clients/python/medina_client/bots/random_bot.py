"""A bot that plays a uniformly random legal action."""

from __future__ import annotations

import random

from medina.engine import Action

from ..bot import Bot, Turn
from ..strategies import random_action


class RandomBot(Bot):
    """Uniform over the legal actions; seeded for reproducible games."""

    name = "random"
    version = "1"

    def __init__(self, seed: int = 0) -> None:
        self.rng = random.Random(seed)

    def choose(self, turn: Turn) -> Action:
        """Any legal action (from the local engine when the server omitted the list)."""
        legal = turn.legal
        if legal:
            return legal[self.rng.randrange(len(legal))]
        return random_action(turn.state(), self.rng)
