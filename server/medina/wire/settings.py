"""Match configuration and results <-> protobuf."""

from __future__ import annotations

from google.protobuf.message import Message

from medina.engine import EngineError, get_ruleset
from medina.referee.config import (
    DEFAULT_CONNECT_TIMEOUT_MS,
    MatchSettings,
    Policies,
    TimeControl,
    TimeoutPolicy,
)
from medina.referee.errors import ConfigError
from medina.referee.outcome import MatchOutcome, SeatOutcome, Termination
from medina.v1 import common_pb2, match_pb2

from .shared.enums import (
    RULESET_IDS,
    RULESET_NAMES,
    enum_from_proto,
    rooftop_colour_from_proto,
    rooftop_colour_to_proto,
)
from .shared.scores import breakdown_from_proto, breakdown_to_proto


def settings_to_proto(s: MatchSettings) -> match_pb2.MatchConfig:
    """Referee settings -> MatchConfig (every default written out)."""
    t = s.time
    p = s.policies
    msg = match_pb2.MatchConfig(
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
        connect_timeout_ms=s.connect_timeout_ms,
    )
    rules = s.new_game().rules
    for seat in range(s.players):
        entry = msg.seats.add(
            name=s.seat_names[seat] if s.seat_names else "",
            rooftop_colour=rooftop_colour_to_proto(rules.rooftop_colours[seat]),
        )
        if rules.two_colour_roofs:
            entry.blocking_colour = rooftop_colour_to_proto(rules.blocking_colours[seat])  # type: ignore[assignment]
    if s.well is not None:
        msg.setup.well = s.well
    if s.start_merchant is not None:
        msg.setup.start_merchant = s.start_merchant
    return msg


def _given(msg: Message, name: str, default: int) -> int:
    """An optional field's value when present (zero included), else ``default``."""
    return int(getattr(msg, name)) if msg.HasField(name) else default


def settings_from_proto(msg: match_pb2.MatchConfig) -> MatchSettings:
    """MatchConfig -> validated referee settings. An absent clock or policy field takes the
    server default; a present one is taken as it is, zero included.

    Raises ConfigError naming the bad field.
    """
    ruleset = RULESET_NAMES.get(int(msg.ruleset))
    if ruleset is None:
        raise ConfigError(
            f"ruleset {int(msg.ruleset)} is not a known ruleset "
            f"(expected one of {', '.join(common_pb2.Ruleset.keys()[1:])})"
        )
    d = TimeControl()
    t = msg.time_control
    time = TimeControl(
        decision_ms=_given(t, "decision_ms", d.decision_ms),
        bank_ms=_given(t, "bank_ms", d.bank_ms),
        increment_ms=_given(t, "increment_ms", d.increment_ms),
        first_decision_extra_ms=_given(t, "first_decision_extra_ms", d.first_decision_extra_ms),
        grace_ms=_given(t, "grace_ms", d.grace_ms),
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
        max_strikes=_given(p, "max_strikes", q.max_strikes),
        max_rejections=_given(p, "max_rejections", q.max_rejections),
        reconnect_grace_ms=_given(p, "reconnect_grace_ms", q.reconnect_grace_ms),
    )
    seats = list(msg.seats)
    if seats and len(seats) != msg.players:
        raise ConfigError(f"seats: {len(seats)} entries given for {msg.players} players")
    return MatchSettings(
        ruleset=ruleset,
        players=msg.players,
        seed=msg.seed,
        start_seat=msg.start_seat,
        time=time,
        policies=policies,
        seat_names=tuple(seat.name for seat in seats) if any(x.name for x in seats) else (),
        connect_timeout_ms=_given(msg, "connect_timeout_ms", DEFAULT_CONNECT_TIMEOUT_MS),
        rooftop_colours=_colours(seats, "rooftop_colour", ruleset, msg.players),
        blocking_colours=_colours(seats, "blocking_colour", ruleset, msg.players),
        well=msg.setup.well if msg.setup.HasField("well") else None,
        start_merchant=msg.setup.start_merchant if msg.setup.HasField("start_merchant") else None,
    )


def _colours(
    seats: list[match_pb2.SeatConfig], name: str, ruleset: str, players: int
) -> tuple[int, ...]:
    """The seats' colours of one kind: () when none is given (the ruleset's defaults); given
    for some seats only, the others keep their defaults."""
    values = [int(getattr(seat, name)) for seat in seats]
    if not any(values):
        return ()
    try:
        rules = get_ruleset(ruleset, players)
    except EngineError as exc:
        raise ConfigError(str(exc)) from None
    defaults = rules.rooftop_colours if name == "rooftop_colour" else rules.blocking_colours
    if name == "blocking_colour" and not rules.two_colour_roofs:
        raise ConfigError(f"seats[].blocking_colour: {ruleset} has no blocking rooftops")
    out = []
    for seat, value in enumerate(values):
        if value and value not in (1, 2, 3, 4):
            raise ConfigError(f"seats[{seat}].{name} {value} is not a rooftop colour")
        out.append(rooftop_colour_from_proto(value) if value else defaults[seat])
    # The defaults written out (as settings_to_proto does) are no choice of the match.
    return () if tuple(out) == tuple(defaults) else tuple(out)


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
        ending=_ending_to_proto(o),  # type: ignore[arg-type]
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
        complete=msg.ending == match_pb2.MATCH_ENDING_COMPLETE,
        abandoned=msg.ending == match_pb2.MATCH_ENDING_ABANDONED,
    )


def _ending_to_proto(o: MatchOutcome) -> int:
    """How the match ended as a whole (the one place that maps the referee's outcome)."""
    if o.complete:
        return match_pb2.MATCH_ENDING_COMPLETE
    return match_pb2.MATCH_ENDING_ABANDONED if o.abandoned else match_pb2.MATCH_ENDING_ABORTED
