"""RecordWriter: the referee's RecordSink as protobuf-JSON lines, each written whole."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import logging
import os
import re
from pathlib import Path

from google.protobuf import json_format

from medina.engine import Action
from medina.referee.outcome import MatchOutcome
from medina.referee.record import (
    DecisionEntry,
    DecisionSource,
    Header,
    Incident,
    RecordWriteError,
)
from medina.v1 import record_pb2
from medina.wire.convert import action_to_proto
from medina.wire.records import decision_entry, header_entry, incident_entry, outcome_entry

from .errors import RecordError

_SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


class RecordExistsError(RecordError):
    """A record for this match id already exists; records are never overwritten."""


def entry_line(entry: record_pb2.RecordEntry) -> bytes:
    """One record line: the JSON mapping of ``entry``, compact, newline-terminated."""
    data = json_format.MessageToDict(entry)
    return (json.dumps(data, separators=(",", ":"), ensure_ascii=False) + "\n").encode()


log = logging.getLogger("medina.records")

#: JSON of each action as it appears in decision lines (actions are few and immutable).
_ACTION_JSON: dict[Action, str] = {}


def decision_line(d: DecisionEntry) -> bytes:
    """A decision line, byte for byte what ``entry_line(decision_entry(d))`` writes, built
    without the generic protobuf-JSON printer (it runs on every decision). Decisions with
    rejections, rare, take the generic path."""
    if d.rejections:
        return entry_line(decision_entry(d))
    action = _ACTION_JSON.get(d.action)
    if action is None:
        action = json.dumps(
            json_format.MessageToDict(action_to_proto(d.action)),
            separators=(",", ":"),
            ensure_ascii=False,
        )
        _ACTION_JSON[d.action] = action
    parts = []
    if d.index:
        parts.append(f'"index":{d.index}')
    if d.seat:
        parts.append(f'"seat":{d.seat}')
    if d.request_id:
        parts.append(f'"requestId":{d.request_id}')
    parts.append(f'"action":{action}')
    if d.time_ms:
        parts.append(f'"timeMs":{d.time_ms}')
    parts.append(f'"source":"{_SOURCE_NAMES[d.source]}"')
    return ('{"decision":{' + ",".join(parts) + "}}\n").encode()


_SOURCE_NAMES = {
    s: record_pb2.DecisionSource.Name(int(s))  # type: ignore[arg-type]
    for s in DecisionSource
}


class RecordWriter:
    """Appends a match record to ``<directory>/<match_id>.jsonl`` (the referee's RecordSink).

    Each line goes out whole in one ``write`` on an unbuffered append-only
    descriptor, so it is in the file (the operating system's) as soon as the
    call returns and a crash loses at most the line being written; the file is
    fsynced on close (off the event loop), not per line. The directory is created
    if missing; an existing record is never overwritten (RecordExistsError).
    Usable as a context manager that closes the file.

    A line that cannot be written (a full disk, a file size limit) is cut back off the
    file, so the file always ends with a whole line, and ``RecordWriteError`` is raised
    once; that line and every later one are then kept in memory, in order (``unwritten``),
    until ``flush`` writes them. ``close`` leaves the file open while lines are kept.
    """

    def __init__(self, directory: Path, match_id: str) -> None:
        if not _SAFE_ID.match(match_id):
            raise RecordError(f"match id {match_id!r} is not usable as a file name")
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / f"{match_id}.jsonl"
        try:
            self._fd: int | None = os.open(
                self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o644
            )
        except FileExistsError:
            raise RecordExistsError(f"record {self.path} already exists") from None
        # held while the file is open (the kernel lets go when this process dies): another
        # server reading the directory tells a match in play from an interrupted one
        with contextlib.suppress(OSError):
            fcntl.flock(self._fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        #: Bytes of whole lines in the file (it was created empty).
        self._size = 0
        #: Lines not written yet, in order: the first one that failed and all after it.
        self.unwritten: list[bytes] = []
        #: Why the first of ``unwritten`` could not be written ("" when nothing is kept).
        self.problem = ""
        self._closing = False

    def _write(self, entry: record_pb2.RecordEntry) -> None:
        self._write_line(entry_line(entry))

    def _write_line(self, line: bytes) -> None:
        if self._fd is None or self._closing:
            raise RecordError(f"record {self.path} is closed")
        if self.unwritten:  # keep the order: after the line that failed
            self.unwritten.append(line)
            return
        try:
            self._append(self._fd, line)
        except OSError as exc:
            self.unwritten.append(line)
            self.problem = _problem(exc)
            log.debug("record %s: a line could not be written: %s", self.path, self.problem)
            raise RecordWriteError(self.problem) from exc

    def _append(self, fd: int, line: bytes) -> None:
        """Write ``line`` whole, or cut the file back to its last whole line and raise."""
        try:
            written = os.write(fd, line)
            while written < len(line):  # a regular file writes whole until it is full
                written += os.write(fd, line[written:])
        except OSError:
            try:
                os.ftruncate(fd, self._size)
            except OSError as cut:  # pragma: no cover - truncating frees space
                log.error("could not cut the record %s back to a whole line: %s", self.path, cut)
            raise
        self._size += len(line)

    def flush(self) -> bool:
        """Write the lines kept in memory, in order, as far as they go; True once none is
        left. Closes the file then if ``close`` was asked for."""
        fd = self._fd
        if fd is None:
            return not self.unwritten
        while self.unwritten:
            try:
                self._append(fd, self.unwritten[0])
            except OSError as exc:
                self.problem = _problem(exc)
                return False
            self.unwritten.pop(0)
        self.problem = ""
        if self._closing:
            self._closing = False
            self.close()
        return True

    def header(self, header: Header) -> None:
        """Write the header line."""
        self._write(header_entry(header))

    def decision(self, entry: DecisionEntry) -> None:
        """Write a decision line."""
        self._write_line(decision_line(entry))

    def incident(self, incident: Incident) -> None:
        """Write an incident line."""
        self._write(incident_entry(incident))

    def outcome(self, outcome: MatchOutcome, ended_at: str) -> None:
        """Write the outcome line (``close`` makes the record durable)."""
        self._write(outcome_entry(outcome, ended_at))

    def __enter__(self) -> RecordWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Flush to disk and close (idempotent); with lines kept in memory, no more lines
        are taken and the file stays open until ``flush`` has written them.

        Inside a running event loop the fsync runs on a worker thread: a slow disk must not
        stall every other match. The lines are already in the file when this returns; the
        fsync only guards them against a machine (not a process) crash.
        """
        if self.unwritten:
            self._closing = True
            return
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            _sync_and_close(fd, self.path)
            return
        loop.run_in_executor(None, _sync_and_close, fd, self.path)


def being_written(path: Path) -> bool:
    """Whether a process still has ``path`` open as a ``RecordWriter`` (its match is being
    played), as its lock says; False when that cannot be told."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)  # lets go of the lock taken, if any
    return False


def _problem(exc: OSError) -> str:
    """What an OSError says, without the path (the caller names the record)."""
    return exc.strerror or str(exc)


def _sync_and_close(fd: int, path: Path) -> None:
    try:
        os.fsync(fd)
    except OSError as exc:  # the lines were written; only their durability is in doubt
        log.warning("could not fsync the record %s: %s", path, exc)
    finally:
        os.close(fd)
