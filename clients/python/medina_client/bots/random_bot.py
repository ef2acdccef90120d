"""A bot that plays a uniformly random legal action."""

from __future__ import annotations

from medina.engine import Action
from medina.strategies import random_action

from ..bot import Turn
from .seeded import SeededBot


class RandomBot(SeededBot):
    """Uniform over the legal actions; seeded for reproducible games (``seed``, or None: from
    the match, see ``SeededBot``)."""

    name = "random"
    version = "1"

    def choose(self, turn: Turn) -> Action:
        """Any legal action (from the local engine when the server omitted the list)."""
        legal = turn.legal
        if legal:
            return legal[self.rng.randrange(len(legal))]
        return random_action(turn.state(), self.rng)
