"""The records the viewer lists and replays: a directory of match records, read on demand.

A record is replayed through the engine (``records.replay``), so the board at step N is the
engine's state after N decisions. Supplies are shown in full only for a record with an
outcome line (the match is over); a record without one may belong to a match still being
played, and is shown as a spectator sees it.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import re
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from medina.records import catalog
from medina.records.catalog import StoredMatch, StoredState
from medina.records.errors import RecordError
from medina.records.reader import Record, read_record
from medina.records.replay import ReplayError, replay, start_state
from medina.records.show import move_text
from medina.v1 import record_pb2

from .builds import Builds
from .live import result_json
from .story import Story
from .view import JSON, board_view

#: What a record id may look like (its file is ``ID.jsonl`` in the directory).
RECORD_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")

#: Bytes of replays kept encoded in memory, each as it was asked for (gzipped, a few tens of
#: kilobytes a game, or plain, a few hundred): a viewer's visitors mostly ask for the same
#: recent games, and each one not kept costs a replay through the engine.
REPLAY_CACHE_BYTES = 32 << 20
#: States a record keeps once it has them: its outcome line is written, it never changes.
_SETTLED = frozenset({StoredState.FINISHED, StoredState.ABORTED, StoredState.ABANDONED})
#: Seconds a directory listing is used again while no file was added or removed.
LISTING_FRESH_S = 1.0
#: Records kept inspected (header and result) in memory; beyond them only their states.
INSPECTED_CACHE = 512


@dataclass(frozen=True)
class Slice:
    """A page of a records directory."""

    matches: list[StoredMatch]
    #: Records in all (those of the asked states), when known.
    total: int | None
    #: Whether records follow this page.
    more: bool


class UnknownRecordError(LookupError):
    """No record by that id (or an id that cannot name a record)."""


@dataclass(frozen=True)
class _Key:
    mtime_ns: int
    size: int


class RecordShelf:
    """The records of one directory, inspected and replayed with small caches."""

    def __init__(self, directory: Path, single: Path | None = None) -> None:
        self.directory = directory
        #: A shelf of one record file (``web --records FILE``): only that file is listed.
        self.single = single
        self.single_id = record_id_of(single) if single is not None else ""
        #: The newest inspections asked for (bounded: a header and result each).
        self._inspected: OrderedDict[Path, tuple[_Key, StoredMatch]] = OrderedDict()
        #: Every record's state once a state filter looked at it (a few bytes each).
        self._states: dict[Path, tuple[_Key, StoredState]] = {}
        #: The last directory listing: the directory's time, when it was made, the files.
        self._listing: tuple[int, float, list[tuple[float, str]]] | None = None
        self._encoded: OrderedDict[tuple[Path, _Key, bool], bytes] = OrderedDict()
        self._encoded_bytes = 0
        #: The replays being built for this shelf (``replay_bytes``), in the viewer's child.
        self.builds = Builds()

    def has(self, record_id: str) -> bool:
        """Whether the directory holds record ``record_id``."""
        try:
            self.path_of(record_id)
        except UnknownRecordError:
            return False
        return True

    @classmethod
    def at(cls, where: Path) -> RecordShelf:
        """The records of directory ``where``, or the one record file ``where`` is."""
        return cls(where.parent, single=where) if where.is_file() else cls(where)

    def id_of(self, path: Path) -> str:
        """The record id of one of this shelf's files."""
        return self.single_id if path == self.single else path.stem

    def path_of(self, record_id: str) -> Path:
        """The file of record ``record_id``; raises UnknownRecordError."""
        if not RECORD_ID.match(record_id) or ".." in record_id:
            raise UnknownRecordError(f"{record_id!r} is not a record id")
        if self.single is not None:
            if record_id != self.single_id or not self.single.is_file():
                raise UnknownRecordError(f"no record {record_id!r} here")
            return self.single
        path = self.directory / f"{record_id}.jsonl"
        if not path.is_file():
            raise UnknownRecordError(f"no record {record_id!r} in the records directory")
        return path

    def public(self, text: str) -> str:
        """``text`` (an error or a note about a record) without the records directory's
        path: visitors learn a record's file name, never where the server keeps it."""
        for where in {str(self.directory), str(self.directory.resolve())}:
            text = text.replace(where + os.sep, "").replace(where, "the records directory")
        return text

    def stored(self, record_id: str) -> StoredMatch | None:
        """What record ``record_id`` holds (how its match ended), None when there is no
        such record (read again only when the file changed)."""
        try:
            path = self.path_of(record_id)
        except UnknownRecordError:
            return None
        return self._read(path)

    def newest(self) -> list[Path]:
        """Every record file, newest first (by modification time, then id), from the
        directory listing alone: nothing is read (and what is cached of files that are
        gone is forgotten)."""
        return [self._file(stem) for _mtime, stem in self._dated()]

    def _dated(self) -> list[tuple[float, str]]:
        """(file time, file stem) of every record file, newest first: one ``os.scandir``
        and a stat per file (the order is by file time), no ``Path`` built per file; the
        last listing again while the directory is unchanged (no file added or removed) and
        younger than ``LISTING_FRESH_S`` (a stat per record is 20 ms over 1,600 records, and
        the list's page asks for it every 3 s per open tab)."""
        try:
            changed = os.stat(self.directory).st_mtime_ns if self.single is None else 0
        except OSError:
            changed = -1
        now = time.monotonic()
        kept = self._listing
        if kept is not None and kept[0] == changed and now - kept[1] < LISTING_FRESH_S:
            return kept[2]
        dated = self._list_files()
        self._listing = (changed, now, dated)
        return dated

    def _list_files(self) -> list[tuple[float, str]]:
        dated: list[tuple[float, str]] = []
        if self.single is not None:
            with contextlib.suppress(OSError):
                dated.append((self.single.stat().st_mtime, self.single.stem))
        else:
            try:
                with os.scandir(self.directory) as entries:
                    for entry in entries:
                        name = entry.name
                        if name.endswith(".jsonl") and not name.startswith("."):
                            try:
                                dated.append((entry.stat().st_mtime, name[:-6]))
                            except OSError:
                                continue  # gone between the listing and the stat
            except OSError:
                pass  # no such directory (yet): no records
        dated.sort(reverse=True)
        present = {stem for _mtime, stem in dated}
        for cache in (self._inspected, self._states):
            for gone in [path for path in cache if path.stem not in present]:
                del cache[gone]
        return dated

    def _file(self, stem: str) -> Path:
        return self.single if self.single is not None else self.directory / f"{stem}.jsonl"

    def page(
        self,
        skip: int,
        count: int,
        states: frozenset[str] = frozenset(),
        exclude: frozenset[str] = frozenset(),
    ) -> Slice:
        """``count`` records, newest first, after the first ``skip``, leaving out the ids in
        ``exclude`` and, when ``states`` is given, the records in other states.

        Only the records shown are read (and those a state filter has to look at), so a
        page of a large directory costs its own records, not the directory's."""
        stems = [stem for _mtime, stem in self._dated() if stem not in exclude]
        if not states:
            shown = [
                m
                for stem in stems[skip : skip + count]
                if (m := self._read(self._file(stem))) is not None
            ]
            return Slice(shown, len(stems), skip + count < len(stems))
        found: list[StoredMatch] = []
        matched = 0
        for stem in stems:
            path = self._file(stem)
            state = self._state(path)
            if state is None or state.value not in states:
                continue
            matched += 1
            if matched <= skip:
                continue
            if len(found) == count:
                return Slice(found, None, True)
            stored = self._read(path)
            if stored is not None:
                found.append(stored)
        return Slice(found, matched, False)

    def _state(self, path: Path) -> StoredState | None:
        """How a record's match ended, from the end of its file when its outcome says
        (``catalog.peek_state``), else from reading it; kept until the file changes. A record
        with its outcome line never changes: its state is taken from what is kept without a
        stat (a state filter over 1,600 records stat'ed each, 45 ms a page)."""
        cached = self._states.get(path)
        if cached is not None and cached[1] in _SETTLED:
            return cached[1]
        try:
            stat = path.stat()
            key = _Key(stat.st_mtime_ns, stat.st_size)
            cached = self._states.get(path)
            if cached is not None and cached[0] == key:
                return cached[1]
            state = catalog.peek_state(path)
        except OSError:
            return None
        if state is None:
            stored = self._read(path)
            if stored is None:
                return None
            state = stored.state
        self._states[path] = (key, state)
        return state

    def _read(self, path: Path) -> StoredMatch | None:
        """What one record holds, read again only when its file changed (a settled one
        never does: no stat)."""
        kept = self._inspected.get(path)
        if kept is not None and kept[1].state in _SETTLED:
            self._inspected.move_to_end(path)
            return kept[1]
        try:
            stat = path.stat()
            key = _Key(stat.st_mtime_ns, stat.st_size)
            cached = self._inspected.get(path)
            if cached is None or cached[0] != key:
                cached = (key, catalog.inspect(path))
                self._inspected[path] = cached
                while len(self._inspected) > INSPECTED_CACHE:
                    self._inspected.popitem(last=False)
            self._inspected.move_to_end(path)
        except OSError:
            return None
        return cached[1]

    def list(self) -> list[StoredMatch]:
        """Every record, newest first (unchanged files are not read again)."""
        return [m for p in self.newest() if (m := self._read(p)) is not None]

    def version(self, record_id: str) -> str:
        """What tells one content of record ``record_id`` from another: its file's time and
        size (a record only grows, and a finished one never changes); raises
        UnknownRecordError."""
        return _version_of(self.path_of(record_id).stat())

    async def replay_bytes(self, record_id: str, compressed: bool) -> tuple[str, bytes]:
        """``replay`` as JSON bytes, gzipped when ``compressed`` (a whole game's replay is
        hundreds of kilobytes of repetitive JSON, a few per cent of that gzipped), and the
        ``version`` of the record they were made from. Built in the viewer's child process
        (``builds``), never on this process's interpreter: the referee may share it; raises
        ``builds.BuildUnavailableError`` when it cannot be built now (try again later)."""
        path = self.path_of(record_id)
        stat = path.stat()
        key = (path, _Key(stat.st_mtime_ns, stat.st_size), compressed)
        cached = self._encoded.get(key)
        if cached is None:
            try:
                cached = await self.builds.run(key, replay_body, path, record_id, compressed)
            except UnknownRecordError as exc:
                raise UnknownRecordError(self.public(str(exc))) from None
            if key not in self._encoded:  # requests that shared one build store it once
                self._encoded[key] = cached
                self._encoded_bytes += len(cached)
            while self._encoded_bytes > REPLAY_CACHE_BYTES:
                self._encoded_bytes -= len(self._encoded.popitem(last=False)[1])
        else:
            self._encoded.move_to_end(key)
        return _version_of(stat), cached

    def close(self) -> None:
        """Stop building replays (the viewer stops): the requests waiting for one get
        ``builds.BuildCancelledError`` at once, and so do later ones."""
        self.builds.stop()

    def replay(self, record_id: str) -> JSON:
        """Every step of a record: the moves and the board after each number of decisions
        (built here; the replay page's bytes come from ``replay_bytes``)."""
        try:
            return replay_file(self.path_of(record_id), record_id)
        except UnknownRecordError as exc:
            raise UnknownRecordError(self.public(str(exc))) from None


def replay_file(path: Path, record_id: str) -> JSON:
    """The replay page's data for the record file ``path``; UnknownRecordError when it
    cannot be read."""
    try:
        record = read_record(path, allow_truncated=True)
    except RecordError as exc:
        raise UnknownRecordError(f"record {record_id!r} cannot be read: {exc}") from None
    return replay_json(record_id, record)


def replay_body(path: Path, record_id: str, compressed: bool) -> bytes:
    """``replay_file`` as the replay page is sent it: compact JSON, gzipped when
    ``compressed`` (run in the viewer's child process)."""
    body = json.dumps(replay_file(path, record_id), separators=(",", ":")).encode()
    return gzip.compress(body, 6) if compressed else body


def _version_of(stat: os.stat_result) -> str:
    return f"{stat.st_mtime_ns:x}-{stat.st_size:x}"


def record_id_of(path: Path) -> str:
    """The id a record file is shown under: its name without ``.jsonl``, any character a
    record id may not hold replaced by ``-``."""
    stem = path.name.removesuffix(".jsonl")
    cleaned = re.sub(r"[^A-Za-z0-9._-]", "-", stem).replace("..", "-").lstrip("._-")
    return cleaned[:128] or "record"


def seat_names(header: record_pb2.RecordHeader, players: int) -> list[str]:
    """Seat labels from a record header (``records.catalog.seat_labels``): the organiser's
    seat names when given, else the bots' own names."""
    return catalog.seat_labels(header.config, header.seats, players)


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
        "story": [],
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
        # A string, as protobuf's JSON mapping writes 64-bit integers: a browser reads a JSON
        # number as a double, and a seed above 2**53 came out another seed.
        seed=str(settings.seed),
        names=names,
        opening=len(settings.opening),
    )
    times = {d.index: (d.time_ms, int(d.source)) for _n, d in record.decisions}
    story = Story(state)
    frames = [board_view(state, names=names, full=ended, start=story.base)]
    points = [story.point(state)]
    moves = []
    try:
        for step in replay(record):
            time_ms, source = times.get(step.index, (0, 0))
            moves.append(
                {
                    "index": step.index,
                    "seat": step.seat,
                    "text": move_text(step),
                    "time_ms": time_ms,
                    "source": record_pb2.DecisionSource.Name(source)  # type: ignore[arg-type]
                    .removeprefix("DECISION_SOURCE_")
                    .lower(),
                }
            )
            frames.append(board_view(step.after, names=names, full=ended, start=story.base))
            points.append(story.step(step.before, step.after))
    except ReplayError as exc:
        out["error"] = str(exc)
    out["moves"] = moves
    out["frames"] = frames
    out["story"] = points
    return out
