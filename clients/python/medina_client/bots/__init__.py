"""Example bots: ``random``, ``greedy``, ``search`` and ``champion``."""

from __future__ import annotations

from collections.abc import Callable

from ..bot import Bot
from .champion import ChampionBot
from .greedy import GreedyBot
from .random_bot import RandomBot
from .search import SearchBot
from .seeded import SeededBot, match_seed

#: The example bots by name; each takes a seed (None: seeded from the match it plays).
BOTS: dict[str, Callable[[int | None], Bot]] = {
    "random": RandomBot,
    "greedy": GreedyBot,
    "search": SearchBot,
    "champion": ChampionBot,
}

__all__ = ["BOTS", "ChampionBot", "GreedyBot", "RandomBot", "SearchBot", "SeededBot", "match_seed"]
