"""A bot that searches with the engine: determinized rollouts within a time budget."""

from __future__ import annotations

import logging
import time

from medina.engine import Action, GameState, square_name
from medina.strategies.search import (
    DEFAULT_LEVEL,
    SearchLevelError,
    SearchResult,
    level_config,
    search,
)

from ..bot import Turn
from .seeded import SeededBot

log = logging.getLogger("medina_client.search")

#: Share of the decision's time a search may use when no budget is given, and its cap.
BUDGET_SHARE = 0.25
BUDGET_CAP_MS = 1_000
#: Time kept back for decoding, the reply and the network, whatever the budget.
MARGIN_MS = 50
#: Candidates ``--verbose`` logs per decision.
SHOWN = 5


def default_budget_ms(time_left_ms: int) -> int:
    """A safe share of the decision's time: a quarter of it, at most ``BUDGET_CAP_MS``."""
    return max(0, min(BUDGET_CAP_MS, int(time_left_ms * BUDGET_SHARE)))


def action_text(s: GameState, action: Action) -> str:
    """``building grey F7`` style text for logs."""
    g = s.rules.geometry
    name = action.kind.name.lower()
    if 0 <= action.colour < 4:
        name += " " + ("grey", "purple", "brown", "orange")[action.colour]
    return f"{name} {square_name(g, action.square)}" if action.square >= 0 else name


class SearchBot(SeededBot):
    """Searches each decision at ``level`` (1..5; its iteration cap) for at most
    ``budget_ms`` (default: ``default_budget_ms`` of the time the request allows).

    With ``verbose`` it logs the top candidate actions and their values at INFO level
    on the ``medina_client.search`` logger. Seeded (``seed``, or None: from the match, see
    ``SeededBot``): with a budget too large to bind, the same game gives the same choices.
    """

    name = "search"
    version = "1"

    def __init__(
        self,
        seed: int | None = None,
        level: int = DEFAULT_LEVEL,
        budget_ms: int | None = None,
        verbose: bool = False,
    ) -> None:
        super().__init__(seed)
        self.config = level_config(level)
        if budget_ms is not None and (isinstance(budget_ms, bool) or budget_ms < 1):
            raise SearchLevelError(f"search budget must be at least 1 ms, got {budget_ms!r}")
        self.level = level
        self.budget_ms = budget_ms
        self.verbose = verbose
        #: The latest search, and how many searches ran / were stopped by the budget.
        self.last: SearchResult | None = None
        self.searches = 0
        self.cut_short = 0

    def choose(self, turn: Turn) -> Action:
        """The action with the best mean rollout value found within the budget."""
        started = time.monotonic()
        legal = turn.legal
        state = self.state_or_none(turn)
        if state is None:
            return self.random_legal(turn)
        budget = self.budget_ms
        if budget is None:
            budget = default_budget_ms(turn.time_left_ms)
        budget = min(budget, max(0, turn.time_left_ms - MARGIN_MS)) if turn.time_left_ms else budget
        deadline = started + budget / 1000.0
        found = search(state, self.rng, self.config, deadline=deadline, legal=legal or None)
        self.last = found
        self.searches += 1
        self.cut_short += found.stopped_early
        if self.verbose:
            self._log(state, found, time.monotonic() - started, budget)
        return found.action

    def _log(self, s: GameState, found: SearchResult, spent_s: float, budget_ms: int) -> None:
        top = "; ".join(
            f"{action_text(s, c.action)} = {c.value:+.2f} ({c.visits} rollouts, "
            f"static {c.prior:+.2f})"
            for c in found.candidates[:SHOWN]
        )
        log.info(
            "decision %d: %s after %d iterations in %.0f ms of %d ms (level %d%s); top: %s",
            s.decisions,
            action_text(s, found.action),
            found.iterations,
            spent_s * 1000,
            budget_ms,
            self.level,
            ", stopped by the budget" if found.stopped_early else "",
            top,
        )
