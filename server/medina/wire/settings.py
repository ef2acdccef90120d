"""Match configuration and results <-> protobuf."""

from __future__ import annotations

from medina.engine import Breakdown, PalaceScore
from medina.referee.config import MatchSettings, Policies, TimeControl, TimeoutPolicy
from medina.referee.errors import ConfigError
from medina.referee.outcome import MatchOutcome, SeatOutcome, Termination
from medina.v1 import game_pb2, match_pb2

from .enums import RULESET_IDS, RULESET_NAMES, enum_from_proto


def settings_to_proto(s: MatchSettings) -> match_pb2.MatchConfig:
    """Referee settings -> MatchConfig (every default written out)."""
    t = s.time
    p = s.policies
    return match_pb2.MatchConfig(
        ruleset=RULESET_IDS[s.ruleset],  # type: ignore[arg-type]
        players=s.players,
        seed=s.seed,
        start_seat=s.start_seat,
        time_control=match_pb2.TimeControl(
            decision_ms=t.decision_ms,
            bank_ms=t.bank_ms,
            increment_ms=t.increment_ms,
            first_decision_extra_ms=t.first_decision_extra_ms,
            grace_ms=t.grace_ms,
        ),
        policies=match_pb2.Policies(
            on_timeout=int(p.on_timeout),  # type: ignore[arg-type]
            max_strikes=p.max_strikes,
            max_rejections=p.max_rejections,
            reconnect_grace_ms=p.reconnect_grace_ms,
        ),
        seats=[match_pb2.SeatConfig(name=n) for n in s.seat_names],
    )


def settings_from_proto(msg: match_pb2.MatchConfig) -> MatchSettings:
    """MatchConfig -> validated referee settings; zero clock/policy fields take the defaults.

    Raises ConfigError naming the bad field.
    """
    ruleset = RULESET_NAMES.get(int(msg.ruleset))
    if ruleset is None:
        raise ConfigError(
            f"ruleset {int(msg.ruleset)} is not a known ruleset "
            f"(expected one of {', '.join(f'{v}={k}' for k, v in RULESET_IDS.items())})"
        )
    d = TimeControl()
    t = msg.time_control
    time = TimeControl(
        decision_ms=t.decision_ms or d.decision_ms,
        bank_ms=t.bank_ms or d.bank_ms,
        increment_ms=t.increment_ms or d.increment_ms,
        first_decision_extra_ms=t.first_decision_extra_ms or d.first_decision_extra_ms,
        grace_ms=t.grace_ms or d.grace_ms,
    )
    q = Policies()
    p = msg.policies
    if p.on_timeout == 0:
        on_timeout = q.on_timeout
    else:
        try:
            on_timeout = TimeoutPolicy(p.on_timeout)
        except ValueError:
            raise ConfigError(f"policies.on_timeout: unknown policy {int(p.on_timeout)}") from None
    policies = Policies(
        on_timeout=on_timeout,
        max_strikes=p.max_strikes or q.max_strikes,
        max_rejections=p.max_rejections or q.max_rejections,
        reconnect_grace_ms=p.reconnect_grace_ms or q.reconnect_grace_ms,
    )
    return MatchSettings(
        ruleset=ruleset,
        players=msg.players,
        seed=msg.seed,
        start_seat=msg.start_seat,
        time=time,
        policies=policies,
        seat_names=tuple(seat.name for seat in msg.seats),
    )


def breakdown_to_proto(b: Breakdown) -> game_pb2.ScoreBreakdown:
    """Engine score breakdown -> protobuf."""
    return game_pb2.ScoreBreakdown(
        buildings=b.buildings,
        stables=b.stables,
        walls=b.walls,
        merchants=b.merchants,
        well_bonus=b.well_bonus,
        palace_tiles=b.palace_tiles,
        tower_tiles=b.tower_tiles,
        palaces=[
            game_pb2.PalaceScore(
                colour=p.colour + 1,  # type: ignore[arg-type]
                roof_square=p.square,
                buildings=p.buildings,
                stables=p.stables,
                walls=p.walls,
                merchants=p.merchants,
                well_bonus=p.well_bonus,
                total=p.total,
            )
            for p in b.palaces
        ],
    )


def breakdown_from_proto(msg: game_pb2.ScoreBreakdown) -> Breakdown:
    """Protobuf score breakdown -> engine."""
    return Breakdown(
        buildings=msg.buildings,
        stables=msg.stables,
        walls=msg.walls,
        merchants=msg.merchants,
        well_bonus=msg.well_bonus,
        palace_tiles=msg.palace_tiles,
        tower_tiles=msg.tower_tiles,
        palaces=tuple(
            PalaceScore(
                colour=int(p.colour) - 1,
                square=p.roof_square,
                buildings=p.buildings,
                stables=p.stables,
                walls=p.walls,
                merchants=p.merchants,
                well_bonus=p.well_bonus,
            )
            for p in msg.palaces
        ),
    )


def outcome_to_proto(o: MatchOutcome) -> match_pb2.MatchResult:
    """Referee outcome -> MatchResult."""
    return match_pb2.MatchResult(
        seats=[
            match_pb2.SeatResult(
                seat=s.seat,
                name=s.name,
                total=s.total,
                rank=s.rank,
                breakdown=breakdown_to_proto(s.breakdown),
                termination=int(s.termination),  # type: ignore[arg-type]
                detail=s.detail,
                strikes=s.strikes,
            )
            for s in o.seats
        ],
        complete=o.complete,
    )


def outcome_from_proto(msg: match_pb2.MatchResult) -> MatchOutcome:
    """MatchResult -> referee outcome (ValueError naming the seat for a bad termination)."""
    return MatchOutcome(
        seats=tuple(
            SeatOutcome(
                seat=s.seat,
                name=s.name,
                total=s.total,
                rank=s.rank,
                breakdown=breakdown_from_proto(s.breakdown),
                termination=enum_from_proto(
                    Termination, s.termination, f"seat {s.seat} termination"
                ),
                detail=s.detail,
                strikes=s.strikes,
            )
            for s in msg.seats
        ),
        complete=msg.complete,
    )
