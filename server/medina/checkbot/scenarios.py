"""The checks of check-bot: one scenario per check (position, clock, opponents, drills)."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

from medina.engine import Action, ActionKind, GameState, legal_moves
from medina.referee.config import MatchSettings, Policies, TimeControl, TimeoutPolicy
from medina.referee.local import Policy, policy
from medina.referee.seat import DecisionRequest
from medina.strategies import POLICIES as STRATEGIES
from medina.strategies import random_action

from . import positions

#: Plural names of the action kinds, for reports ("only stables were legal").
KIND_WORDS = {
    ActionKind.BUILDING: "buildings",
    ActionKind.ROOFTOP: "own rooftops",
    ActionKind.NEUTRAL_ROOFTOP: "neutral rooftops",
    ActionKind.BLOCKING_ROOFTOP: "blocking rooftops",
    ActionKind.STABLE: "stables",
    ActionKind.MERCHANT: "merchants",
    ActionKind.WALL: "walls",
    ActionKind.START_MERCHANT: "start merchants",
    ActionKind.TEA: "tea breaks",
}


@dataclass(frozen=True)
class CheckOptions:
    """How check-bot runs. Validated: a bad value raises ValueError naming it."""

    seed: int = 1  # of every scripted position and opponent
    decision_ms: int = 2_000  # time per decision in every check but tight-clock
    tight_ms: int = 500  # time per decision in tight-clock
    first_extra_ms: int = 2_000  # extra time for the bot's first decision of a match
    grace_ms: int = 100  # lateness forgiven
    reconnect_s: float = 5.0  # time to reconnect after the kit drops the stream
    exit_s: float = 5.0  # time to exit after MatchEnded (match-end)
    connect_s: float = 10.0  # time to connect after the bot process starts
    limit_s: float = 120.0  # a scenario's match is aborted after this long
    only: tuple[str, ...] = ()  # run these checks only (all when empty)

    def __post_init__(self) -> None:
        if not 0 <= self.seed < 2**63:
            raise ValueError(f"seed must be 0..2**63-1, got {self.seed}")
        for name in ("decision_ms", "tight_ms"):
            value = getattr(self, name)
            if not 1 <= value <= 3_600_000:
                raise ValueError(f"{name} must be 1..3600000 ms, got {value}")
        for name in ("first_extra_ms", "grace_ms"):
            value = getattr(self, name)
            if not 0 <= value <= 3_600_000:
                raise ValueError(f"{name} must be 0..3600000 ms, got {value}")
        for name in ("reconnect_s", "exit_s", "connect_s", "limit_s"):
            value = getattr(self, name)
            if not 0 < value <= 3600:
                raise ValueError(f"{name} must be more than 0 and at most 3600 s, got {value}")
        unknown = [name for name in self.only if name not in CHECKS]
        if unknown:
            raise ValueError(f"unknown check {unknown[0]!r}; the checks are: {', '.join(CHECKS)}")

    def selected(self) -> list[str]:
        """The names of the checks to run, in the kit's order."""
        return [name for name in CHECKS if not self.only or name in self.only]


@dataclass(frozen=True)
class Scenario:
    """One match the bot plays for one check.

    The referee plays ``opening`` first; the bot's seat is ``bot`` and every other
    seat is played in process by the named policy in ``opponents``.
    """

    name: str
    ruleset: str
    players: int
    bot: int
    seed: int
    opening: tuple[Action, ...]
    time: TimeControl
    policies: Policies
    connect_s: float
    opponents: dict[int, str] = field(default_factory=dict)
    kind: ActionKind | None = None  # the kind the first decision after the opening needs
    drill_at: int = 0  # the bot's n-th answered request is refused once as a drill (0: none)
    drop_after: int = 0  # the kit drops the bot's stream after its n-th answered request
    exit_s: float = 0.5  # time given to exit after MatchEnded before the kit stops the bot

    def settings(self) -> MatchSettings:
        """The match settings (opponents named after their policies)."""
        names = tuple(
            f"check-bot {self.opponents[seat]}" if seat in self.opponents else ""
            for seat in range(self.players)
        )
        return MatchSettings(
            ruleset=self.ruleset,
            players=self.players,
            seed=self.seed,
            time=self.time,
            policies=self.policies,
            seat_names=names,
            connect_timeout_ms=int(self.connect_s * 1000),
            opening=tuple(self.opening),
        )

    def local_policies(self) -> dict[int, Policy]:
        """A fresh policy per opponent seat, seeded from the scenario."""
        return {seat: POLICIES[name](self.seed * 8 + seat) for seat, name in self.opponents.items()}

    def start(self) -> GameState:
        """The state after the opening: the bot's first decision when ``kind`` is set."""
        return positions.replay(self.ruleset, self.players, self.seed, self.opening)


def tea_first_policy(seed: int) -> Policy:
    """Takes every tea break offered, otherwise plays a random legal action."""
    rng = random.Random(seed)

    def choose(state: GameState, _request: DecisionRequest) -> Action:
        if legal_moves(state).tea:
            return Action(ActionKind.TEA)
        return random_action(state, rng)

    return choose


#: The opponents a scenario can name: the SDK's example strategies, and tea-first.
POLICIES: dict[str, Callable[[int], Policy]] = {
    **{name: partial(policy, strategy) for name, strategy in STRATEGIES.items()},
    "tea-first": tea_first_policy,
}

#: Who plays the scenarios that are not about the opponents.
_DUO = "medina-v2", 2


def _clock(options: CheckOptions, decision_ms: int) -> TimeControl:
    return TimeControl(
        decision_ms=decision_ms,
        bank_ms=0,
        increment_ms=0,
        first_decision_extra_ms=options.first_extra_ms,
        grace_ms=options.grace_ms,
    )


def _scenario(
    options: CheckOptions,
    name: str,
    ruleset: str,
    players: int,
    bot: int,
    opening: tuple[Action, ...] = (),
    *,
    kind: ActionKind | None = None,
    drill_at: int = 0,
    drop_after: int = 0,
    decision_ms: int | None = None,
    opponents: dict[int, str] | None = None,
    exit_s: float = 0.5,
) -> Scenario:
    """A scenario with the kit's clock and policies: the first timeout forfeits (the check
    has failed by then, and the referee's fallback finishes the match at once). Opponents
    play random unless ``opponents`` names another policy."""
    players_of = {seat: "random" for seat in range(players) if seat != bot}
    players_of.update(opponents or {})
    return Scenario(
        name=name,
        ruleset=ruleset,
        players=players,
        bot=bot,
        seed=options.seed,
        opening=opening,
        time=_clock(options, options.decision_ms if decision_ms is None else decision_ms),
        policies=Policies(
            on_timeout=TimeoutPolicy.FORFEIT,
            max_strikes=1,
            reconnect_grace_ms=int(options.reconnect_s * 1000),
        ),
        connect_s=options.connect_s,
        opponents=players_of,
        kind=kind,
        drill_at=drill_at,
        drop_after=drop_after,
        exit_s=exit_s,
    )


def _kind(kind: ActionKind, ruleset: str, bot: int) -> Callable[[CheckOptions], Scenario]:
    def build(options: CheckOptions) -> Scenario:
        opening = positions.only_kind(ruleset, 2, options.seed, bot, kind)
        name = "kind-" + kind.name.lower().replace("_", "-")
        return _scenario(options, name, ruleset, 2, bot, opening, kind=kind)

    return build


def _kind_tea(options: CheckOptions) -> Scenario:
    opening = positions.tea_offered(*_DUO, options.seed, 1)
    return _scenario(options, "kind-tea", *_DUO, 1, opening, kind=ActionKind.TEA)


def _tea_and_pass(options: CheckOptions) -> Scenario:
    opening = positions.tea_then_pass("medina-v2", 3, options.seed, 0)
    return _scenario(
        options, "tea-and-pass", "medina-v2", 3, 0, opening, opponents={1: "tea-first"}
    )


def _rejection_retry(options: CheckOptions) -> Scenario:
    return _scenario(options, "rejection-retry", *_DUO, 1, (), drill_at=3)


def _tight_clock(options: CheckOptions) -> Scenario:
    return _scenario(
        options,
        "tight-clock",
        "medina-v2",
        4,
        2,
        (),
        decision_ms=options.tight_ms,
        opponents={0: "greedy"},
    )


def _reconnect(options: CheckOptions) -> Scenario:
    # The clock keeps running while the bot is away: give it the whole reconnect time, so
    # that a bot that does not come back is told so rather than that it timed out.
    away_ms = int(options.reconnect_s * 1000) + 1000
    decision_ms = max(options.decision_ms, away_ms)
    return _scenario(options, "reconnect", *_DUO, 0, (), drop_after=4, decision_ms=decision_ms)


def _match_end(options: CheckOptions) -> Scenario:
    opening = positions.late(*_DUO, options.seed, 1, 8)
    return _scenario(options, "match-end", *_DUO, 1, opening, exit_s=options.exit_s)


#: Every check, in the order the kit runs them, with its scenario builder.
CHECKS: dict[str, Callable[[CheckOptions], Scenario]] = {
    "kind-building": _kind(ActionKind.BUILDING, "medina-v2", 0),
    "kind-rooftop": _kind(ActionKind.ROOFTOP, "medina-v2", 1),
    "kind-neutral-rooftop": _kind(ActionKind.NEUTRAL_ROOFTOP, "medina-v2", 0),
    "kind-blocking-rooftop": _kind(ActionKind.BLOCKING_ROOFTOP, "medina-v1-2p", 1),
    "kind-stable": _kind(ActionKind.STABLE, "medina-v2", 0),
    "kind-merchant": _kind(ActionKind.MERCHANT, "medina-v2", 1),
    "kind-wall": _kind(ActionKind.WALL, "medina-v2", 0),
    "kind-start-merchant": _kind(ActionKind.START_MERCHANT, "medina-v1-2p", 0),
    "kind-tea": _kind_tea,
    "tea-and-pass": _tea_and_pass,
    "rejection-retry": _rejection_retry,
    "tight-clock": _tight_clock,
    "reconnect": _reconnect,
    "match-end": _match_end,
}

#: One line per check: what it asks of the bot.
DESCRIPTIONS = {
    "kind-building": "a decision where only buildings are legal",
    "kind-rooftop": "a decision where only own rooftops are legal",
    "kind-neutral-rooftop": "a decision where only neutral rooftops are legal (medina-v2, 2p)",
    "kind-blocking-rooftop": "a decision where only blocking rooftops are legal (medina-v1-2p)",
    "kind-stable": "a decision where only stables are legal",
    "kind-merchant": "a decision where only merchants are legal",
    "kind-wall": "a decision where only walls are legal",
    "kind-start-merchant": "the start merchant, the first decision of medina-v1-2p",
    "kind-tea": "a decision offering a tea break among at most 3 actions",
    "tea-and-pass": "another seat's tea break and another's automatic pass before a request",
    "rejection-retry": "a drill rejection of a legal reply; answer the same request again",
    "tight-clock": f"a whole 4-player match at {CheckOptions().tight_ms} ms per decision",
    "reconnect": "the kit drops the stream; reconnect with the resume token and finish",
    "match-end": "exit with code 0 soon after MatchEnded",
}


__all__ = [
    "CHECKS",
    "DESCRIPTIONS",
    "KIND_WORDS",
    "POLICIES",
    "CheckOptions",
    "Scenario",
    "tea_first_policy",
]
