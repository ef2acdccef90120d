"""Record entries and sinks, and the referee's enums against the protocol's."""

from __future__ import annotations

import re
from enum import IntEnum
from importlib import metadata
from typing import Any

import pytest
from medina.engine import Action, ActionKind, new_game, result
from medina.referee.config import MatchSettings, TimeoutPolicy
from medina.referee.match import WRITER, MatchPhase, writer_name
from medina.referee.outcome import MatchOutcome, SeatOutcome, Termination
from medina.referee.record import (
    DecisionEntry,
    DecisionSource,
    ErrorCode,
    Header,
    Incident,
    IncidentKind,
    MemorySink,
    NullSink,
    RecordSink,
    SeatInfo,
)

# referee enum, protobuf module, protobuf enum
ENUMS: list[tuple[type[IntEnum], str, str]] = [
    (Termination, "match_pb2", "Termination"),
    (TimeoutPolicy, "match_pb2", "TimeoutPolicy"),
    (DecisionSource, "record_pb2", "DecisionSource"),
    (IncidentKind, "record_pb2", "IncidentKind"),
    (ErrorCode, "common_pb2", "ErrorCode"),
    (MatchPhase, "admin_pb2", "MatchState"),
]


@pytest.mark.parametrize(("enum", "module", "name"), ENUMS, ids=[e[2] for e in ENUMS])
def test_enum_values_match_the_protocol(enum: type[IntEnum], module: str, name: str) -> None:
    pb = pytest.importorskip(f"medina.v1.{module}")
    proto: Any = getattr(pb, name)
    prefix = re.sub(r"(?<!^)(?=[A-Z])", "_", name).upper() + "_"
    expected = {k.removeprefix(prefix): v for k, v in proto.items() if v != 0}
    assert {m.name: int(m) for m in enum} == expected


def entries() -> tuple[Header, DecisionEntry, Incident, MatchOutcome]:
    settings = MatchSettings("medina-v2", 2, seed=1)
    s = new_game("medina-v2", 2, 1)
    header = Header("m", settings, s.well, 0, (SeatInfo(0, "a"), SeatInfo(1, "b")), "now", "w")
    decision = DecisionEntry(0, 0, 1, Action(ActionKind.TEA), 5, (), DecisionSource.BOT)
    incident = Incident(IncidentKind.CONNECTED, 0, "bot", 0)
    res = result(s)
    outcome = MatchOutcome(
        tuple(
            SeatOutcome(seat, "x", 0, 1, res.breakdowns[seat], Termination.NORMAL, "", 0)
            for seat in range(2)
        ),
        complete=True,
    )
    return header, decision, incident, outcome


def write(sink: RecordSink) -> None:
    header, decision, incident, outcome = entries()
    sink.header(header)
    sink.decision(decision)
    sink.incident(incident)
    sink.outcome(outcome, "2026-01-01T00:00:00.000Z")


def test_memory_sink_keeps_every_entry() -> None:
    sink = MemorySink()
    write(sink)
    header, decision, incident, outcome = entries()
    assert sink.headers == [header]
    assert sink.decisions == [decision]
    assert sink.incidents == [incident]
    assert sink.outcomes == [outcome]


def test_null_sink_accepts_everything() -> None:
    write(NullSink())


def test_entries_are_frozen() -> None:
    _, decision, incident, _ = entries()
    with pytest.raises(AttributeError):
        decision.time_ms = 0  # type: ignore[misc]
    assert incident.termination is None


def test_the_writer_is_the_installed_version() -> None:
    assert f"medina-arena {metadata.version('medina-arena-dev')}" == WRITER
    assert writer_name(("no-such-distribution",)) == "medina-arena (version unknown)"
