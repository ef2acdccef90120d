"""A bot that searches at a level (``medina.strategies.search``): the champion's search held
to the level's depth, within a time budget."""

from __future__ import annotations

import logging

from medina.strategies.search import DEFAULT_LEVEL, SearchLevelError, level_config

from .champion import ChampionBot

#: The most time a decision may take when no budget is given: the level's depth is what
#: bounds a search; this only stops one on a slow machine (the request's clock bounds it
#: too, as the champion's: ``champion_budget_ms``).
BUDGET_CAP_MS = 1_000


class SearchBot(ChampionBot):
    """Searches each decision at ``level`` (``medina.strategies.search.LEVELS``), for at most
    ``budget_ms`` (default ``BUDGET_CAP_MS``, and never more than the champion would take
    of the request's clock).

    With ``verbose`` it logs each decision's move, value, depth and time at INFO level on
    the ``medina_client.search`` logger. The search uses no randomness: a position and a
    level give one move unless the budget cuts the search short.
    """

    name = "search"
    version = "2"
    log = logging.getLogger("medina_client.search")
    default_target_ms = BUDGET_CAP_MS

    def __init__(
        self,
        seed: int | None = None,
        level: int = DEFAULT_LEVEL,
        budget_ms: int | None = None,
        verbose: bool = False,
    ) -> None:
        config = level_config(level)
        if budget_ms is not None and (isinstance(budget_ms, bool) or budget_ms < 1):
            raise SearchLevelError(f"search budget must be at least 1 ms, got {budget_ms!r}")
        super().__init__(seed, budget_ms=budget_ms, verbose=verbose, config=config)
        self.level = level
        self.label = f"level {level}"
