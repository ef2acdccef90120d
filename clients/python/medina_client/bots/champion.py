"""The champion bot: selective alpha-beta / max^n search within the request's clock.

``ChampionBot`` is also what the search levels play over gRPC (``SearchBot``): the same
search and the same use of the clock, held to a level's depth."""

from __future__ import annotations

import logging
import time
from dataclasses import replace

from medina.engine import Action, GameState, square_name
from medina.strategies.champion import (
    ChampionConfig,
    ChampionConfigError,
    ChampionResult,
    champion_search,
    default_config,
)

from ..bot import Turn
from .seeded import SeededBot

#: Time per decision when no budget is given: about what an outside 300 ms alpha-beta uses.
TARGET_MS = 300
#: Time kept back for decoding, the reply and the network, whatever the budget.
MARGIN_MS = 60
#: At most this share of the time the request allows (the rest is safety, and bank).
SHARE = 0.5


def action_text(s: GameState, action: Action) -> str:
    """``building grey F7`` style text for logs."""
    g = s.rules.geometry
    name = action.kind.name.lower()
    if 0 <= action.colour < 4:
        name += " " + ("grey", "purple", "brown", "orange")[action.colour]
    return f"{name} {square_name(g, action.square)}" if action.square >= 0 else name


def champion_budget_ms(
    time_left_ms: int,
    target_ms: int = TARGET_MS,
    bank_left_ms: int | None = None,
    decisions_left: int = 1,
) -> int:
    """The search time for a decision the server allows ``time_left_ms`` for (0: no clock).

    ``time_left_ms`` is already ``min(decision_ms, bank left)``: the champion spends at most
    half of it after the margin, and never more than ``target_ms``. With a bank
    (``bank_left_ms``, absent without one) it also spreads what is left over the decisions
    it still has to take (``decisions_left``: its pieces left), so a small bank without
    increment lasts the game; with the default clock (60 s bank, 1 s increment) that bound
    stays above the 300 ms target and the bank is never touched.
    """
    budget = target_ms
    if time_left_ms > 0:
        budget = min(budget, int((time_left_ms - MARGIN_MS) * SHARE))
    if bank_left_ms is not None:
        budget = min(budget, bank_left_ms // max(1, decisions_left))
    return max(1, budget)


class ChampionBot(SeededBot):
    """Searches each decision (``medina.strategies.champion``) for ``budget_ms`` (default:
    ``champion_budget_ms`` of the request's clock) within ``config``'s limits (None: the
    champion's own for the game's players, ``default_config``).

    The search uses ``Turn.state()``: the state the seat's tracker rebuilds from the public
    history, which in Medina determines every supply (RULES 9). With ``verbose`` it logs the
    move, depth and time of each decision on the ``medina_client.champion`` logger.
    """

    name = "champion"
    version = "1"
    #: Where ``verbose`` logs, and what its lines call the search.
    log = logging.getLogger("medina_client.champion")
    label = "champion"
    #: The time per decision when ``budget_ms`` is not given.
    default_target_ms = TARGET_MS

    def __init__(
        self,
        seed: int | None = None,
        budget_ms: int | None = None,
        verbose: bool = False,
        config: ChampionConfig | None = None,
    ) -> None:
        super().__init__(seed)
        if budget_ms is not None and (isinstance(budget_ms, bool) or budget_ms < 1):
            raise ChampionConfigError(f"champion budget must be at least 1 ms, got {budget_ms!r}")
        self.given = config
        self.budget_ms = budget_ms
        self.verbose = verbose
        #: The latest search, how many ran, and how many the clock stopped before their
        #: configured depth.
        self.last: ChampionResult | None = None
        self.searches = 0
        self.cut_short = 0

    def config_for(self, players: int) -> ChampionConfig:
        """The settings searched with: the given ones (None: the champion's own for
        ``players``), with the clock, not the in-process children budget, bounding it."""
        config = self.given or default_config(players)
        return replace(config, budget=10**9)

    def choose(self, turn: Turn) -> Action:
        """The searched best action, within the time budget."""
        started = time.monotonic()
        legal = turn.legal
        state = self.state_or_none(turn)
        if state is None:
            return self.random_legal(turn)
        target = self.default_target_ms if self.budget_ms is None else self.budget_ms
        clock = turn.clock
        bank = clock.bank_left_ms if clock.HasField("bank_left_ms") else None
        budget = champion_budget_ms(
            turn.time_left_ms, target, bank, state.pieces_left(state.to_move)
        )
        found = champion_search(
            state,
            self.config_for(state.players),
            deadline=started + budget / 1000.0,
            legal=legal or None,
        )
        self.last = found
        self.searches += 1
        self.cut_short += found.stopped
        if self.verbose:
            self.log.info(
                "decision %d: %s = %+.2f, depth %d, %d nodes, %d children, %.0f ms of %d ms (%s)",
                state.decisions,
                action_text(state, found.action),
                found.value,
                found.depth,
                found.expansions,
                found.generated,
                (time.monotonic() - started) * 1000,
                budget,
                self.label,
            )
        return found.action
