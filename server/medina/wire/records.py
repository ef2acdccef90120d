"""Match record entries (medina.referee.record) <-> protobuf ``RecordEntry``."""

from __future__ import annotations

from dataclasses import replace

from google.protobuf import json_format
from google.protobuf.message import DecodeError
from google.protobuf.timestamp_pb2 import Timestamp

from medina.engine import get_ruleset
from medina.engine.geometry import Geometry
from medina.referee.outcome import MatchOutcome, Termination
from medina.referee.record import (
    DecisionEntry,
    DecisionSource,
    ErrorCode,
    Header,
    Incident,
    IncidentKind,
    Rejection,
    SeatInfo,
)
from medina.v1 import record_pb2

from .convert import action_from_proto, action_to_proto
from .settings import outcome_from_proto, outcome_to_proto, settings_from_proto, settings_to_proto
from .shared.enums import enum_from_proto, rooftop_colour_to_proto, seat_from_optional, seat_or_none

__all__ = [
    "RECORD_FORMAT",
    "RECORD_FORMAT_VERSION",
    "decision_entry",
    "decision_from_proto",
    "entry_from_json",
    "header_entry",
    "header_from_proto",
    "incident_entry",
    "incident_from_proto",
    "outcome_entry",
    "outcome_from_entry",
]

RECORD_FORMAT = "medina-record"
RECORD_FORMAT_VERSION = 2


def entry_from_json(data: dict[str, object]) -> record_pb2.RecordEntry:
    """A record line's JSON object (of the current format) as an entry; ``json_format``'s
    ParseError when it is not one."""
    entry = record_pb2.RecordEntry()
    json_format.ParseDict(data, entry)
    return entry


def header_entry(h: Header) -> record_pb2.RecordEntry:
    """The first line."""
    rules = h.settings.new_game().rules
    return record_pb2.RecordEntry(
        header=record_pb2.RecordHeader(
            format=RECORD_FORMAT,
            format_version=RECORD_FORMAT_VERSION,
            match_id=h.match_id,
            config=settings_to_proto(h.settings),
            setup=record_pb2.RecordSetup(
                well=seat_or_none(h.well),
                start_merchant=seat_or_none(h.start_merchant),
                opening=[action_to_proto(a) for a in h.settings.opening],
            ),
            seats=[
                record_pb2.RecordSeat(
                    seat=s.seat,
                    name=s.name,
                    bot_name=s.bot_name,
                    bot_version=s.bot_version,
                    rooftop_colour=rooftop_colour_to_proto(rules.rooftop_colours[s.seat]),  # type: ignore[arg-type]
                    blocking_colour=rooftop_colour_to_proto(  # type: ignore[arg-type]
                        rules.blocking_colours[s.seat] if rules.two_colour_roofs else -1
                    ),
                )
                for s in h.seats
            ],
            started_at=timestamp(h.started_at),
            writer=h.writer,
        )
    )


def timestamp(rfc3339: str) -> Timestamp:
    """An RFC 3339 time -> google.protobuf.Timestamp (unset for an empty string)."""
    ts = Timestamp()
    if rfc3339:
        ts.FromJsonString(rfc3339)
    return ts


def rfc3339(ts: Timestamp) -> str:
    """A Timestamp -> RFC 3339 UTC text ('' when unset)."""
    return ts.ToJsonString() if ts.seconds or ts.nanos else ""


def header_from_proto(msg: record_pb2.RecordHeader) -> Header:
    """A record header -> plain data; ConfigError for a bad config (naming the field).

    A setup field left absent means no well / no start merchant (-1).
    """
    setup = msg.setup
    settings = settings_from_proto(msg.config)
    if setup.opening:
        geom = get_ruleset(settings.ruleset, settings.players).geometry
        opening = tuple(action_from_proto(a, geom) for a in setup.opening)
        settings = replace(settings, opening=opening)
    return Header(
        match_id=msg.match_id,
        settings=settings,
        well=seat_from_optional(setup, "well"),
        start_merchant=seat_from_optional(setup, "start_merchant"),
        seats=tuple(SeatInfo(s.seat, s.name, s.bot_name, s.bot_version) for s in msg.seats),
        started_at=rfc3339(msg.started_at),
        writer=msg.writer,
    )


def _rejection(r: Rejection) -> record_pb2.RecordRejection:
    msg = record_pb2.RecordRejection(
        code=int(r.code),  # type: ignore[arg-type]
        rule=r.rule,
        message=r.message,
    )
    if r.action is not None:
        msg.action.CopyFrom(action_to_proto(r.action))
    elif r.raw is not None:  # a malformed reply's action, as the bot sent it
        try:
            msg.action.ParseFromString(r.raw)
        except DecodeError:
            msg.ClearField("action")
    return msg


def _rejection_from_proto(msg: record_pb2.RecordRejection, geom: Geometry) -> Rejection:
    code = enum_from_proto(ErrorCode, msg.code, "rejection code")
    action = raw = None
    if msg.HasField("action"):
        if code is ErrorCode.MALFORMED_ACTION:  # as sent: it may be no engine action at all
            raw = msg.action.SerializeToString(deterministic=True)
        else:
            action = action_from_proto(msg.action, geom)
    return Rejection(action=action, code=code, rule=msg.rule, message=msg.message, raw=raw)


def decision_entry(d: DecisionEntry) -> record_pb2.RecordEntry:
    """One decision line."""
    return record_pb2.RecordEntry(
        decision=record_pb2.RecordDecision(
            index=d.index,
            seat=d.seat,
            request_id=d.request_id or None,  # 0: a referee decision without a request
            action=action_to_proto(d.action),
            time_ms=d.time_ms,
            rejections=[_rejection(r) for r in d.rejections],
            source=int(d.source),  # type: ignore[arg-type]
        )
    )


def decision_from_proto(msg: record_pb2.RecordDecision, geom: Geometry) -> DecisionEntry:
    """A decision line -> plain data; MalformedActionError or ValueError for bad values.

    ``geom`` is the match's board (squares are checked against it).
    """
    return DecisionEntry(
        index=msg.index,
        seat=msg.seat,
        request_id=msg.request_id,
        action=action_from_proto(msg.action, geom),
        time_ms=msg.time_ms,
        rejections=tuple(_rejection_from_proto(r, geom) for r in msg.rejections),
        source=enum_from_proto(DecisionSource, msg.source, "decision source"),
    )


def incident_entry(i: Incident) -> record_pb2.RecordEntry:
    """One incident line."""
    return record_pb2.RecordEntry(
        incident=record_pb2.RecordIncident(
            kind=int(i.kind),  # type: ignore[arg-type]
            seat=seat_or_none(i.seat),
            detail=i.detail,
            at_decision=i.at_decision,
            termination=int(i.termination) if i.termination is not None else 0,  # type: ignore[arg-type]
        )
    )


def incident_from_proto(msg: record_pb2.RecordIncident) -> Incident:
    """An incident line -> plain data; ValueError for an unknown kind or termination."""
    termination = (
        enum_from_proto(Termination, msg.termination, "incident termination")
        if msg.termination
        else None
    )
    return Incident(
        kind=enum_from_proto(IncidentKind, msg.kind, "incident kind"),
        seat=seat_from_optional(msg, "seat"),
        detail=msg.detail,
        at_decision=msg.at_decision,
        termination=termination,
    )


def outcome_entry(o: MatchOutcome, ended_at: str) -> record_pb2.RecordEntry:
    """The last line."""
    return record_pb2.RecordEntry(
        outcome=record_pb2.RecordOutcome(result=outcome_to_proto(o), ended_at=timestamp(ended_at))
    )


def outcome_from_entry(msg: record_pb2.RecordOutcome) -> tuple[MatchOutcome, str]:
    """The last line -> (outcome, ended_at); ValueError for an unknown termination."""
    return outcome_from_proto(msg.result), rfc3339(msg.ended_at)
