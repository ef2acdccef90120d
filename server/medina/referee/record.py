"""What a match record holds, as plain data, and the sink the referee writes it to.

The referee calls the sink while the match runs; ``medina.records`` implements
the sink as protobuf-JSON lines flushed as written.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from enum import IntEnum
from typing import Protocol

from medina.engine import Action

from .config import MatchSettings
from .outcome import MatchOutcome, Termination

log = logging.getLogger("medina.referee")


class ErrorCode(IntEnum):
    """In-band error codes. Values match the protobuf enum ``ErrorCode``."""

    ILLEGAL_ACTION = 1
    MALFORMED_ACTION = 2
    UNKNOWN_REQUEST = 3
    STALE_REQUEST = 4
    MATCH_OVER = 5
    PROTOCOL = 6
    RATE_LIMITED = 7


class DecisionSource(IntEnum):
    """Who chose a recorded action. Values match the protobuf enum."""

    BOT = 1
    TIMEOUT = 2
    FALLBACK = 3


class IncidentKind(IntEnum):
    """Connection events and penalties. Values match the protobuf enum."""

    CONNECTED = 1
    DISCONNECTED = 2
    RECONNECTED = 3
    TIMEOUT = 4
    FORFEIT = 5
    ABORTED = 6


@dataclass(frozen=True, slots=True)
class SeatInfo:
    """A seat as recorded in the header."""

    seat: int
    name: str
    bot_name: str = ""
    bot_version: str = ""


@dataclass(frozen=True, slots=True)
class Header:
    """First record line."""

    match_id: str
    settings: MatchSettings
    well: int  # -1 when none
    start_merchant: int  # -1 when it is a decision (1st editions)
    seats: tuple[SeatInfo, ...]
    started_at: str  # RFC 3339 UTC
    writer: str


@dataclass(frozen=True, slots=True)
class Rejection:
    """A refused reply. ``action`` is None when the reply could not be decoded (code
    MALFORMED_ACTION); ``raw`` then holds the action as the bot sent it, which no engine
    action can represent: the serialized protobuf ``medina.v1.Action`` (None when the reply
    carried none)."""

    action: Action | None
    code: ErrorCode
    rule: str
    message: str
    raw: bytes | None = None


@dataclass(frozen=True, slots=True)
class DecisionEntry:
    """A decision taken."""

    index: int
    seat: int
    request_id: int
    action: Action
    time_ms: int
    rejections: tuple[Rejection, ...]
    source: DecisionSource


@dataclass(frozen=True, slots=True)
class Incident:
    """A connection event or penalty."""

    kind: IncidentKind
    seat: int
    detail: str
    at_decision: int
    termination: Termination | None = None


class RecordWriteError(Exception):
    """A sink could not keep an entry where the record lives (a full disk, say). The sink
    keeps that entry and every later one in order, to complete the record when it can; the
    referee aborts the match, naming the problem (``Match``)."""


class RecordSink(Protocol):
    """Where the referee writes a match record, entry by entry, as it happens.

    A sink that cannot write an entry raises ``RecordWriteError`` (once: it keeps that entry
    and the later ones itself, in order)."""

    def header(self, header: Header) -> None:
        """Write the first line."""

    def decision(self, entry: DecisionEntry) -> None:
        """Write a decision."""

    def incident(self, incident: Incident) -> None:
        """Write an incident."""

    def outcome(self, outcome: MatchOutcome, ended_at: str) -> None:
        """Write the last line and make the record durable."""


class NullSink:
    """A sink that keeps nothing (benchmarks)."""

    def header(self, header: Header) -> None:
        """Ignore."""

    def decision(self, entry: DecisionEntry) -> None:
        """Ignore."""

    def incident(self, incident: Incident) -> None:
        """Ignore."""

    def outcome(self, outcome: MatchOutcome, ended_at: str) -> None:
        """Ignore."""


class MemorySink:
    """A sink that keeps every entry in lists (tests)."""

    def __init__(self) -> None:
        self.headers: list[Header] = []
        self.decisions: list[DecisionEntry] = []
        self.incidents: list[Incident] = []
        self.outcomes: list[MatchOutcome] = []

    def header(self, header: Header) -> None:
        """Keep the header."""
        self.headers.append(header)

    def decision(self, entry: DecisionEntry) -> None:
        """Keep the decision."""
        self.decisions.append(entry)

    def incident(self, incident: Incident) -> None:
        """Keep the incident."""
        self.incidents.append(incident)

    def outcome(self, outcome: MatchOutcome, ended_at: str) -> None:
        """Keep the outcome."""
        self.outcomes.append(outcome)


class TeeSink:
    """The record sink, then listeners that see the same entries (metrics, viewers).

    The record comes first and its errors propagate as before, after the listeners were told
    (they count what the referee did, written yet or not); a listener that fails is logged
    and never costs the match or its record.
    """

    def __init__(self, record: RecordSink, *listeners: RecordSink) -> None:
        self.record = record
        self.listeners = listeners

    def _tell(self, method: str, *args: object) -> None:
        for listener in self.listeners:
            try:
                getattr(listener, method)(*args)
            except Exception:
                log.exception("record listener %r failed on %s", listener, method)

    def header(self, header: Header) -> None:
        """Write the header, then tell the listeners (even when the write failed)."""
        try:
            self.record.header(header)
        finally:
            self._tell("header", header)

    def decision(self, entry: DecisionEntry) -> None:
        """Write a decision, then tell the listeners (even when the write failed)."""
        try:
            self.record.decision(entry)
        finally:
            self._tell("decision", entry)

    def incident(self, incident: Incident) -> None:
        """Write an incident, then tell the listeners (even when the write failed)."""
        try:
            self.record.incident(incident)
        finally:
            self._tell("incident", incident)

    def outcome(self, outcome: MatchOutcome, ended_at: str) -> None:
        """Write the outcome, then tell the listeners (even when the write failed)."""
        try:
            self.record.outcome(outcome, ended_at)
        finally:
            self._tell("outcome", outcome, ended_at)
