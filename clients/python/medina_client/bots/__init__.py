"""Example bots: ``random``, ``greedy`` and ``search``."""

from __future__ import annotations

from collections.abc import Callable

from ..bot import Bot
from .greedy import GreedyBot
from .random_bot import RandomBot
from .search import SearchBot
from .seeded import SeededBot, match_seed

#: The example bots by name; each takes a seed (None: seeded from the match it plays).
BOTS: dict[str, Callable[[int | None], Bot]] = {
    "random": RandomBot,
    "greedy": GreedyBot,
    "search": SearchBot,
}

__all__ = ["BOTS", "GreedyBot", "RandomBot", "SearchBot", "SeededBot", "match_seed"]
