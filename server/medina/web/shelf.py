"""The records the viewer lists and replays: a directory of match records, read on demand.

A record is replayed through the engine (``records.replay``), so the board at step N is the
engine's state after N decisions. Supplies are shown in full only for a record with an
outcome line (the match is over); a record without one may belong to a match still being
played, and is shown as a spectator sees it.
"""

from __future__ import annotations

import gzip
import json
import re
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from medina.records import catalog
from medina.records.catalog import StoredMatch
from medina.records.errors import RecordError
from medina.records.reader import Record, read_record
from medina.records.replay import ReplayError, describe, replay, start_state
from medina.v1 import record_pb2

from .live import result_json
from .view import JSON, board_view

#: What a record id may look like (its file is ``ID.jsonl`` in the directory).
RECORD_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")

#: Replays kept decoded in memory.
REPLAY_CACHE = 8


class UnknownRecordError(LookupError):
    """No record by that id (or an id that cannot name a record)."""


@dataclass(frozen=True)
class _Key:
    mtime_ns: int
    size: int


class RecordShelf:
    """The records of one directory, inspected and replayed with small caches."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._inspected: dict[Path, tuple[_Key, StoredMatch]] = {}
        self._replays: OrderedDict[tuple[Path, _Key], JSON] = OrderedDict()
        self._encoded: OrderedDict[tuple[Path, _Key, bool], bytes] = OrderedDict()

    def has(self, record_id: str) -> bool:
        """Whether the directory holds record ``record_id``."""
        try:
            self.path_of(record_id)
        except UnknownRecordError:
            return False
        return True

    def path_of(self, record_id: str) -> Path:
        """The file of record ``record_id``; raises UnknownRecordError."""
        if not RECORD_ID.match(record_id) or ".." in record_id:
            raise UnknownRecordError(f"{record_id!r} is not a record id")
        path = self.directory / f"{record_id}.jsonl"
        if not path.is_file():
            raise UnknownRecordError(f"no record {record_id!r} in {self.directory}")
        return path

    def list(self) -> list[StoredMatch]:
        """Every record, newest first (unchanged files are not read again)."""
        if not self.directory.is_dir():
            return []
        found: list[StoredMatch] = []
        seen: set[Path] = set()
        for path in self.directory.glob("*.jsonl"):
            try:
                stat = path.stat()
                key = _Key(stat.st_mtime_ns, stat.st_size)
                cached = self._inspected.get(path)
                if cached is None or cached[0] != key:
                    cached = (key, catalog.inspect(path))
                    self._inspected[path] = cached
            except OSError:
                continue  # gone between the listing and the read
            seen.add(path)
            found.append(cached[1])
        for gone in set(self._inspected) - seen:
            del self._inspected[gone]
        found.sort(key=lambda m: (m.mtime, m.match_id), reverse=True)
        return found

    def replay_bytes(self, record_id: str, compressed: bool) -> bytes:
        """``replay`` as JSON bytes, gzipped when ``compressed`` (a whole game's replay is
        hundreds of kilobytes of repetitive JSON, a few per cent of that gzipped)."""
        path = self.path_of(record_id)
        stat = path.stat()
        key = (path, _Key(stat.st_mtime_ns, stat.st_size), compressed)
        cached = self._encoded.get(key)
        if cached is None:
            body = json.dumps(self.replay(record_id), separators=(",", ":")).encode()
            cached = gzip.compress(body, 6) if compressed else body
            self._encoded[key] = cached
            while len(self._encoded) > REPLAY_CACHE:
                self._encoded.popitem(last=False)
        return cached

    def replay(self, record_id: str) -> JSON:
        """Every step of a record: the moves and the board after each number of decisions."""
        path = self.path_of(record_id)
        stat = path.stat()
        key = (path, _Key(stat.st_mtime_ns, stat.st_size))
        cached = self._replays.get(key)
        if cached is not None:
            self._replays.move_to_end(key)
            return cached
        try:
            record = read_record(path, allow_truncated=True)
        except RecordError as exc:
            raise UnknownRecordError(f"record {record_id!r} cannot be read: {exc}") from None
        data = replay_json(record_id, record)
        self._replays[key] = data
        while len(self._replays) > REPLAY_CACHE:
            self._replays.popitem(last=False)
        return data


def seat_names(header: record_pb2.RecordHeader, players: int) -> list[str]:
    """Seat labels from a record header (``records.catalog.seat_labels``): the organiser's
    seat names when given, else the bots' own names."""
    return catalog.seat_labels(header, players)


def replay_json(record_id: str, record: Record) -> JSON:
    """The replay page's data for one parsed record."""
    ended = record.outcome is not None
    out: JSON = {
        "record": record_id,
        "match_id": record.header.match_id,
        "complete": ended,
        "truncated": record.truncated,
        "full": ended,
        "moves": [],
        "frames": [],
        "result": result_json(record.outcome.result) if record.outcome is not None else None,
        "error": None,
    }
    try:
        settings, state = start_state(record)
    except ReplayError as exc:
        out["error"] = str(exc)
        return out
    names = seat_names(record.header, settings.players)
    out.update(
        ruleset=settings.ruleset,
        players=settings.players,
        seed=settings.seed,
        names=names,
        opening=len(settings.opening),
    )
    times = {d.index: (d.time_ms, int(d.source)) for _n, d in record.decisions}
    frames = [board_view(state, names=names, full=ended)]
    moves = []
    try:
        for step in replay(record):
            time_ms, source = times.get(step.index, (0, 0))
            moves.append(
                {
                    "index": step.index,
                    "seat": step.seat,
                    "text": describe(step.before, step.action),
                    "time_ms": time_ms,
                    "source": record_pb2.DecisionSource.Name(source)  # type: ignore[arg-type]
                    .removeprefix("DECISION_SOURCE_")
                    .lower(),
                }
            )
            frames.append(board_view(step.after, names=names, full=ended))
    except ReplayError as exc:
        out["error"] = str(exc)
    out["moves"] = moves
    out["frames"] = frames
    return out
