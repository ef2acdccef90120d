"""Match record entries (medina.referee.record) -> protobuf ``RecordEntry``."""

from __future__ import annotations

from medina.referee.outcome import MatchOutcome
from medina.referee.record import DecisionEntry, Header, Incident, Rejection
from medina.v1 import record_pb2

from .convert import action_to_proto
from .settings import outcome_to_proto, settings_to_proto

RECORD_FORMAT = "medina-record"
RECORD_FORMAT_VERSION = 1


def header_entry(h: Header) -> record_pb2.RecordEntry:
    """The first line."""
    return record_pb2.RecordEntry(
        header=record_pb2.RecordHeader(
            format=RECORD_FORMAT,
            format_version=RECORD_FORMAT_VERSION,
            match_id=h.match_id,
            config=settings_to_proto(h.settings),
            setup=record_pb2.RecordSetup(well=h.well, start_merchant=h.start_merchant),
            seats=[
                record_pb2.RecordSeat(
                    seat=s.seat, name=s.name, bot_name=s.bot_name, bot_version=s.bot_version
                )
                for s in h.seats
            ],
            started_at=h.started_at,
            writer=h.writer,
        )
    )


def _rejection(r: Rejection) -> record_pb2.RecordRejection:
    msg = record_pb2.RecordRejection(
        code=int(r.code),  # type: ignore[arg-type]
        rule=r.rule,
        message=r.message,
    )
    if r.action is not None:
        msg.action.CopyFrom(action_to_proto(r.action))
    return msg


def decision_entry(d: DecisionEntry) -> record_pb2.RecordEntry:
    """One decision line."""
    return record_pb2.RecordEntry(
        decision=record_pb2.RecordDecision(
            index=d.index,
            seat=d.seat,
            request_id=d.request_id,
            action=action_to_proto(d.action),
            time_ms=d.time_ms,
            rejections=[_rejection(r) for r in d.rejections],
            source=int(d.source),  # type: ignore[arg-type]
        )
    )


def incident_entry(i: Incident) -> record_pb2.RecordEntry:
    """One incident line."""
    return record_pb2.RecordEntry(
        incident=record_pb2.RecordIncident(
            kind=int(i.kind),  # type: ignore[arg-type]
            seat=i.seat,
            detail=i.detail,
            at_decision=i.at_decision,
            termination=int(i.termination) if i.termination is not None else 0,  # type: ignore[arg-type]
        )
    )


def outcome_entry(o: MatchOutcome, ended_at: str) -> record_pb2.RecordEntry:
    """The last line."""
    return record_pb2.RecordEntry(
        outcome=record_pb2.RecordOutcome(result=outcome_to_proto(o), ended_at=ended_at)
    )
