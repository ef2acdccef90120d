"""Example bots: ``random``, ``greedy`` and ``search``."""

from __future__ import annotations

from collections.abc import Callable

from ..bot import Bot
from .greedy import GreedyBot
from .random_bot import RandomBot
from .search import SearchBot

BOTS: dict[str, Callable[[int], Bot]] = {
    "random": RandomBot,
    "greedy": GreedyBot,
    "search": SearchBot,
}

__all__ = ["BOTS", "GreedyBot", "RandomBot", "SearchBot"]
