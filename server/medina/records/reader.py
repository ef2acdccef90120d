"""Reading a record back: one RecordEntry per line, checked for shape and order."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from google.protobuf import json_format

from medina.v1 import record_pb2
from medina.wire.records import entry_from_json

from .errors import RecordError, RecordReadError
from .upgrade import CURRENT_FORMAT_VERSION, upgrade_line

__all__ = ["Record", "RecordError", "parse_record", "read_record"]


@dataclass
class Record:
    """A parsed record: the header, then (line number, entry) pairs, then the outcome."""

    path: str
    header: record_pb2.RecordHeader
    entries: list[tuple[int, record_pb2.RecordEntry]] = field(default_factory=list)
    outcome: record_pb2.RecordOutcome | None = None
    outcome_line: int = 0
    truncated: bool = False  # the last line was cut off (a crash while writing it)

    @property
    def decisions(self) -> list[tuple[int, record_pb2.RecordDecision]]:
        """The decision entries with their line numbers."""
        return [(n, e.decision) for n, e in self.entries if e.HasField("decision")]

    @property
    def forfeits(self) -> dict[int, int]:
        """Seat -> termination of its FORFEIT incident (0 when the incident names none)."""
        return {
            e.incident.seat: int(e.incident.termination)
            for _n, e in self.entries
            if e.HasField("incident") and e.incident.kind == record_pb2.INCIDENT_KIND_FORFEIT
        }


def read_record(path: str | os.PathLike[str], *, allow_truncated: bool = False) -> Record:
    """Parse the record at ``path``; raises RecordError naming the line and problem.

    A last line cut off mid-write (a crash) is an error unless ``allow_truncated``;
    then the entries before it are returned and ``Record.truncated`` is set.
    """
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise RecordReadError(f"cannot read {path}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise RecordError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    return parse_record(text, str(path), allow_truncated=allow_truncated)


def parse_record(text: str, name: str = "<record>", *, allow_truncated: bool = False) -> Record:
    """Parse record text (see ``read_record``)."""
    if not text.strip():
        raise RecordError(f"{name}: empty record (no header)")
    lines = text.split("\n")
    last_complete = text.endswith("\n")
    if last_complete:
        lines.pop()
    record: Record | None = None
    next_decision = 0
    version = CURRENT_FORMAT_VERSION
    for number, line in enumerate(lines, start=1):
        is_last = number == len(lines)
        try:
            entry, version = _parse_line(line, f"{name} line {number}", version)
        except RecordError:
            if is_last and not last_complete:
                if not allow_truncated:
                    raise RecordError(
                        f"{name} line {number}: truncated (the writer stopped mid-line)"
                    ) from None
                if record is None:
                    raise RecordError(f"{name}: truncated before the header was complete") from None
                record.truncated = True
                break
            raise
        kind = entry.WhichOneof("entry")
        if record is None:
            if kind != "header":
                raise RecordError(
                    f"{name} line {number}: the first entry must be a header, got {kind}"
                )
            _check_header(entry.header, name, number)
            record = Record(path=name, header=entry.header)
            next_decision = len(entry.header.setup.opening)  # a scripted opening came first
            continue
        if record.outcome is not None:
            raise RecordError(
                f"{name} line {number}: entry after the outcome (line {record.outcome_line})"
            )
        if kind == "header":
            raise RecordError(f"{name} line {number}: a second header")
        if kind == "outcome":
            record.outcome = entry.outcome
            record.outcome_line = number
            continue
        if kind == "decision":
            if entry.decision.index != next_decision:
                raise RecordError(
                    f"{name} line {number}: decision {entry.decision.index} out of order "
                    f"(expected decision {next_decision})"
                )
            next_decision += 1
        record.entries.append((number, entry))
    if record is None:
        raise RecordError(f"{name}: empty record (no header)")
    return record


def _parse_line(line: str, where: str, version: int) -> tuple[record_pb2.RecordEntry, int]:
    """One line as an entry, upgraded from ``version`` (a header line sets the version)."""
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise RecordError(f"{where}: not JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(data, dict):
        raise RecordError(f"{where}: expected a JSON object, got {type(data).__name__}")
    header = data.get("header")
    if isinstance(header, dict):
        found = header.get("formatVersion", 0)
        version = found if isinstance(found, int) else CURRENT_FORMAT_VERSION
    try:
        entry = entry_from_json(upgrade_line(data, version))
    except json_format.ParseError as exc:
        # protobuf's message goes on to list the message's fields on further lines: the first
        # names the problem, and an error here is one line
        why = str(exc).splitlines()[0].rstrip(".")
        raise RecordError(f"{where}: not a RecordEntry ({why})") from None
    if entry.WhichOneof("entry") is None:
        raise RecordError(f"{where}: empty entry (expected header, decision, incident or outcome)")
    return entry, version


def _check_header(header: record_pb2.RecordHeader, name: str, number: int) -> None:
    if header.format and header.format != "medina-record":
        raise RecordError(f"{name} line {number}: format {header.format!r} is not 'medina-record'")
    if header.format_version > CURRENT_FORMAT_VERSION:
        raise RecordError(
            f"{name} line {number}: record format version {header.format_version} is newer "
            f"than this tool ({CURRENT_FORMAT_VERSION})"
        )
