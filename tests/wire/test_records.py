"""wire.records and wire.enums: record entries and match results round trip; bad enums name
their field."""

from __future__ import annotations

import pytest
from google.protobuf import json_format
from medina.engine import Action, ActionKind, Breakdown, PalaceScore
from medina.engine.geometry import geometry
from medina.referee.config import MatchSettings
from medina.referee.outcome import MatchOutcome, SeatOutcome, Termination
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
from medina.v1 import common_pb2, game_pb2, match_pb2, record_pb2
from medina.wire import records
from medina.wire.convert import MalformedActionError, outcome_from_proto, outcome_to_proto
from medina.wire.shared.enums import enum_from_proto

G = geometry(18, 13)
#: A malformed action as a bot sent it: no engine action can say it.
WIRE = game_pb2.Action(kind=99, square=500, colour=9)  # type: ignore[arg-type]
RAW = WIRE.SerializeToString(deterministic=True)


def json_round_trip(entry: record_pb2.RecordEntry) -> record_pb2.RecordEntry:
    back = record_pb2.RecordEntry()
    json_format.Parse(json_format.MessageToJson(entry, indent=None), back)
    return back


def test_headers_round_trip() -> None:
    header = Header(
        match_id="m-1",
        settings=MatchSettings("medina-v2", 3, 99, start_seat=2, seat_names=("a", "b", "c")),
        well=100,
        start_merchant=61,
        seats=(SeatInfo(0, "a", "bot", "1.0"), SeatInfo(1, "b"), SeatInfo(2, "c")),
        started_at="2026-01-01T00:00:00Z",
        writer="medina-arena test",
    )
    entry = json_round_trip(records.header_entry(header))
    assert entry.header.format == "medina-record" and entry.header.format_version == 2
    assert records.header_from_proto(entry.header) == header


def test_a_header_without_setup_has_no_well() -> None:
    config = records.header_entry(
        Header("x", MatchSettings("medina-v1", 3, 1), -1, -1, (), "", "")
    ).header.config
    header = records.header_from_proto(record_pb2.RecordHeader(config=config))
    assert (header.well, header.start_merchant) == (-1, -1)


@pytest.mark.parametrize(
    "decision",
    [
        DecisionEntry(0, 1, 7, Action(ActionKind.BUILDING, 40, 2), 12, (), DecisionSource.BOT),
        DecisionEntry(5, 0, 0, Action(ActionKind.TEA), 0, (), DecisionSource.TIMEOUT),
        DecisionEntry(
            9,
            2,
            31,
            Action(ActionKind.WALL, 3),
            4000,
            (
                Rejection(Action(ActionKind.ROOFTOP, 60), ErrorCode.ILLEGAL_ACTION, "r", "m"),
                Rejection(None, ErrorCode.MALFORMED_ACTION, "malformed", "no kind"),
                Rejection(None, ErrorCode.MALFORMED_ACTION, "malformed", "kind 99", RAW),
            ),
            DecisionSource.FALLBACK,
        ),
    ],
)
def test_decisions_round_trip(decision: DecisionEntry) -> None:
    entry = json_round_trip(records.decision_entry(decision))
    assert records.decision_from_proto(entry.decision, G) == decision


def test_a_malformed_replys_action_is_recorded_as_sent() -> None:
    refused = Rejection(None, ErrorCode.MALFORMED_ACTION, "malformed", "kind 99", RAW)
    d = DecisionEntry(3, 0, 4, Action(ActionKind.WALL, 3), 9, (refused,), DecisionSource.BOT)
    line = json_format.MessageToDict(records.decision_entry(d))
    assert line["decision"]["rejections"][0]["action"] == {
        "kind": 99,
        "square": 500,
        "colour": 9,
    }
    assert json_round_trip(records.decision_entry(d)).decision.rejections[0].action == WIRE


@pytest.mark.parametrize(
    "incident",
    [
        Incident(IncidentKind.CONNECTED, 0, "bot 1.0", 0),
        Incident(IncidentKind.FORFEIT, 2, "did not reconnect", 17, Termination.DISCONNECTED),
        Incident(IncidentKind.ABORTED, -1, "organiser", 30),
    ],
)
def test_incidents_round_trip(incident: Incident) -> None:
    entry = json_round_trip(records.incident_entry(incident))
    assert records.incident_from_proto(entry.incident) == incident


def outcome() -> MatchOutcome:
    palace = PalaceScore(3, 44, 4, 2, 2, 1, 0)
    rich = Breakdown(4, 2, 2, 1, 0, 4, 3, (palace,))
    empty = Breakdown(0, 0, 0, 0, 0, 0, 0, ())
    return MatchOutcome(
        seats=(
            SeatOutcome(0, "a", 16, 1, rich, Termination.NORMAL, "", 0),
            SeatOutcome(1, "b", 0, 2, empty, Termination.TIMEOUT, "ran out of time", 3),
        ),
        complete=True,
    )


def test_outcomes_round_trip() -> None:
    entry = json_round_trip(records.outcome_entry(outcome(), "2026-01-01T01:00:00Z"))
    assert records.outcome_from_entry(entry.outcome) == (outcome(), "2026-01-01T01:00:00Z")
    assert outcome_from_proto(outcome_to_proto(outcome())) == outcome()


def test_bad_values_name_their_field() -> None:
    bad = records.decision_entry(
        DecisionEntry(0, 0, 0, Action(ActionKind.WALL, 3), 0, (), DecisionSource.BOT)
    ).decision
    bad.source = 0  # type: ignore[assignment]
    with pytest.raises(ValueError, match="decision source is not set"):
        records.decision_from_proto(bad, G)
    bad.source = 1  # type: ignore[assignment]
    bad.action.square = 500
    with pytest.raises(MalformedActionError, match="off the board"):
        records.decision_from_proto(bad, G)
    with pytest.raises(ValueError, match="incident kind 42 is unknown"):
        records.incident_from_proto(record_pb2.RecordIncident(kind=42))  # type: ignore[arg-type]
    result = outcome_to_proto(outcome())
    result.seats[1].termination = 99  # type: ignore[assignment]
    with pytest.raises(ValueError, match="seat 1 termination 99 is unknown"):
        outcome_from_proto(result)


def test_enums_share_the_protobuf_numbers() -> None:
    for domain, proto in (
        (Termination, match_pb2.Termination),
        (ErrorCode, common_pb2.ErrorCode),
        (DecisionSource, record_pb2.DecisionSource),
        (IncidentKind, record_pb2.IncidentKind),
    ):
        for member in domain:
            assert enum_from_proto(domain, member.value, "x") is member
            assert proto.DESCRIPTOR.values_by_number[member.value].name.endswith(member.name)
