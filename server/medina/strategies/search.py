"""The search levels: the champion's search (``medina.strategies.champion``) held to a depth.

Each level is a ``ChampionConfig`` whose ``max_depth`` (plies, one decision each), and the
widths searched below the root, bound the work, so a level plays the same move whatever the
machine; its children budget is only a safety cap that these depths never reach in medina-v2.
The levels were chosen so that each beats the one below with a 95 % interval above an even
share over paired games (``bench/strength.py``; clients/python/README.md has the table):

1. every legal action once, judged by the champion's evaluation (greedy's evaluation plus
   the prospects of claimed palaces): one ply;
2. three plies: the six best actions, below them the three best of each decision, the last
   ply the mover's best by the evaluation.

Two plies did not separate from one (0.61 of 48 paired 2-player games), nor three from two
in 4-player games (0.67 of 24), so the levels are one and three plies apart.

The champion is the same search bounded by the clock instead (300 ms by default), which
reaches deeper. A bot playing a level over gRPC keeps a time budget as well
(``medina_client.bots.search``), so a slow machine cuts a search short instead of timing out.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from medina.engine import Action, GameState

from .champion import ChampionConfig, champion_strategy


class SearchLevelError(ValueError):
    """A search level or setting out of range; the message names it."""


#: Children generated at most per decision at any level (never reached at these depths).
SAFETY_BUDGET = 100_000

#: The search levels, weakest first.
LEVELS: dict[int, ChampionConfig] = {
    1: ChampionConfig(budget=SAFETY_BUDGET, max_depth=1),
    2: ChampionConfig(budget=SAFETY_BUDGET, root_width=6, width=3, max_depth=3),
}
DEFAULT_LEVEL = 2


def level_config(level: int) -> ChampionConfig:
    """The configuration of search level ``level`` (see ``LEVELS``); SearchLevelError
    otherwise."""
    if isinstance(level, bool) or not isinstance(level, int) or level not in LEVELS:
        raise SearchLevelError(
            f"search level must be one of {', '.join(map(str, LEVELS))}, got {level!r}"
        )
    return LEVELS[level]


def search_strategy(level: int) -> Callable[[GameState, random.Random], Action]:
    """An in-process strategy searching at ``level`` (no clock), so games between
    strategies are deterministic for a seed (the random generator is not used)."""
    strategy = champion_strategy(level_config(level))
    strategy.__name__ = f"search_{level}"
    return strategy
