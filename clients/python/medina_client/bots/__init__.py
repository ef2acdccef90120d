"""Example bots: ``random`` and ``greedy``."""

from __future__ import annotations

from collections.abc import Callable

from ..bot import Bot
from .greedy import GreedyBot
from .random_bot import RandomBot

BOTS: dict[str, Callable[[int], Bot]] = {"random": RandomBot, "greedy": GreedyBot}

__all__ = ["BOTS", "GreedyBot", "RandomBot"]
