"""The reference strategies: plain functions from an engine state (and a seeded
``random.Random``) to an action. Random, greedy and gain (``basic``), the search levels
(``search``) and the champion (``champion``), judged by ``heuristics``.

They use the engine alone, so both sides play them: the SDK's example bots over gRPC
(``medina_client.bots``), and the arena in process (``selfplay``, check-bot's scripted
opponents, the strength bench) through ``POLICIES``. They ship in the ``medina-engine``
distribution, so neither the server nor the SDK depends on the other for them."""

from __future__ import annotations

from .basic import Strategy, gain_action, greedy_action, random_action, scored_actions
from .champion import champion_strategy
from .search import DEFAULT_LEVEL, LEVELS, search_strategy

__all__ = [
    "POLICIES",
    "Strategy",
    "champion_strategy",
    "gain_action",
    "greedy_action",
    "random_action",
    "scored_actions",
    "search_strategy",
]

#: The in-process strategies by name (``medina-arena selfplay --bots``, check-bot opponents).
#: ``search`` is the search bot at its default level, ``search-1`` and ``search-2`` at each
#: level (``search.LEVELS``), ``champion`` the champion (``medina.strategies.champion``), all
#: with their depth or children budgets (no clock), so selfplay is deterministic.
POLICIES: dict[str, Strategy] = {
    "random": random_action,
    "gain": gain_action,
    "greedy": greedy_action,
    "search": search_strategy(DEFAULT_LEVEL),
    **{f"search-{level}": search_strategy(level) for level in LEVELS},
    "champion": champion_strategy(),
}
