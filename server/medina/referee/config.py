"""Match configuration: time control, misbehaviour policies and their documented defaults."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum

from medina.engine import Action, EngineError, GameState, apply_action, get_ruleset, new_game

from .errors import ConfigError

#: Defaults for bots on the same machine (docs/protocol.md explains each choice).
DEFAULT_DECISION_MS = 5_000
DEFAULT_BANK_MS = 60_000
DEFAULT_INCREMENT_MS = 1_000
DEFAULT_FIRST_DECISION_EXTRA_MS = 10_000
DEFAULT_GRACE_MS = 250
DEFAULT_MAX_STRIKES = 3
DEFAULT_MAX_REJECTIONS = 3
DEFAULT_RECONNECT_GRACE_MS = 15_000
DEFAULT_CONNECT_TIMEOUT_MS = 30_000
LIMIT_MS = 3_600_000  # no single clock setting above an hour


class TimeoutPolicy(IntEnum):
    """What happens when a seat runs out of time. Values match the protobuf enum."""

    FORFEIT = 1
    RANDOM_ACTION = 2


@dataclass(frozen=True, slots=True)
class TimeControl:
    """Clock settings, in milliseconds (see the protobuf ``TimeControl`` comment)."""

    decision_ms: int = DEFAULT_DECISION_MS
    bank_ms: int = DEFAULT_BANK_MS
    increment_ms: int = DEFAULT_INCREMENT_MS
    first_decision_extra_ms: int = DEFAULT_FIRST_DECISION_EXTRA_MS
    grace_ms: int = DEFAULT_GRACE_MS

    def __post_init__(self) -> None:
        _check_ms("time_control.decision_ms", self.decision_ms, least=1)  # 0 would be no time
        for name in ("bank_ms", "increment_ms", "first_decision_extra_ms", "grace_ms"):
            _check_ms(f"time_control.{name}", getattr(self, name))


@dataclass(frozen=True, slots=True)
class Policies:
    """How the referee treats seats that misbehave."""

    on_timeout: TimeoutPolicy = TimeoutPolicy.RANDOM_ACTION
    max_strikes: int = DEFAULT_MAX_STRIKES
    max_rejections: int = DEFAULT_MAX_REJECTIONS
    reconnect_grace_ms: int = DEFAULT_RECONNECT_GRACE_MS

    def __post_init__(self) -> None:
        if not isinstance(self.on_timeout, TimeoutPolicy):
            problem = f"unknown policy {self.on_timeout!r}"
            raise ConfigError(f"policies.on_timeout: {problem}", "policies.on_timeout", problem)
        if not 1 <= self.max_strikes <= 1000:  # 0 would forfeit before any timeout
            raise ConfigError.of("policies.max_strikes", f"must be 1..1000, got {self.max_strikes}")
        if not 0 <= self.max_rejections <= 1000:
            raise ConfigError.of(
                "policies.max_rejections", f"must be 0..1000, got {self.max_rejections}"
            )
        _check_ms("policies.reconnect_grace_ms", self.reconnect_grace_ms)


@dataclass(frozen=True, slots=True)
class MatchSettings:
    """Everything needed to set up and referee one match. Validated on construction."""

    ruleset: str
    players: int
    seed: int
    start_seat: int = 0
    time: TimeControl = field(default_factory=TimeControl)
    policies: Policies = field(default_factory=Policies)
    seat_names: tuple[str, ...] = ()
    connect_timeout_ms: int = DEFAULT_CONNECT_TIMEOUT_MS
    #: Per seat, the engine rooftop colour (0 red .. 3 green); empty: the ruleset's defaults.
    rooftop_colours: tuple[int, ...] = ()
    #: [v1-2p] per seat, the blocking rooftop colour; empty: the ruleset's defaults.
    blocking_colours: tuple[int, ...] = ()
    #: [v2] the well's square; None: drawn from the seed.
    well: int | None = None
    #: [v2] the start merchant's square; None: drawn from the seed.
    start_merchant: int | None = None
    #: A scripted opening: the game starts from the position after these actions (the
    #: record keeps them in its setup). Check-bot sets up its situations this way.
    opening: tuple[Action, ...] = ()

    def __post_init__(self) -> None:
        try:
            get_ruleset(self.ruleset, self.players)
        except EngineError as exc:
            raise ConfigError(str(exc)) from None
        if not 0 <= self.seed < 2**64:
            raise ConfigError(f"seed must be 0..2**64-1, got {self.seed}")
        if not 0 <= self.start_seat < self.players:
            raise ConfigError(
                f"start_seat {self.start_seat} is not a seat of a {self.players}-player match"
            )
        if self.seat_names and len(self.seat_names) != self.players:
            raise ConfigError(
                f"seats: {len(self.seat_names)} names given for {self.players} players"
            )
        for name in self.seat_names:
            if len(name) > 100:
                raise ConfigError(f"seat name {name[:20]!r}... is longer than 100 characters")
        _check_ms("connect_timeout_ms", self.connect_timeout_ms)
        try:
            self.new_game()
        except EngineError as exc:
            raise ConfigError(str(exc)) from None

    def new_game(self) -> GameState:
        """The game these settings start (setup drawn from the seed unless fixed), after the
        scripted opening if there is one."""
        s = new_game(
            self.ruleset,
            self.players,
            self.seed,
            start_seat=self.start_seat,
            well=self.well,
            start_merchant=self.start_merchant,
            rooftop_colours=self.rooftop_colours or None,
            blocking_colours=self.blocking_colours or None,
        )
        for action in self.opening:
            s = apply_action(s, action)
        return s

    def seat_name(self, seat: int) -> str:
        """Configured name of ``seat`` (``seat N``, 0-based like every seat number, when none
        was given)."""
        if self.seat_names and self.seat_names[seat]:
            return self.seat_names[seat]
        return f"seat {seat}"


def seat_label(seat: int, configured: str, bot_name: str) -> str:
    """How results and viewers name ``seat``: the organiser's name for it when one was given
    (a tournament's bot name: two bots that both call themselves ``stdiobot`` in their
    handshake stay apart), else the name its bot gave when it connected, else ``seat N``."""
    return configured or bot_name or f"seat {seat}"


def _check_ms(name: str, value: int, least: int = 0) -> None:
    if not isinstance(value, int) or not least <= value <= LIMIT_MS:
        raise ConfigError.of(name, f"must be {least}..{LIMIT_MS} ms, got {value!r}")
