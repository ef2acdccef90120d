"""The records a server finds in its directory at start: earlier matches, finished, aborted,
or interrupted by a crash (a record with no outcome line).

Records are never modified here: an interrupted record stays as the crash left it, and is
readable and verifiable up to its last complete entry (``read_record(allow_truncated=True)``).

``scan`` reads every record in full (``replay list``); a server's ``Catalog`` reads only
what it lists, and at start the end of each record (``peek_state``); its memory does not
grow with the records (their entries are indexed in a temporary SQLite database).
"""

from __future__ import annotations

import enum
import json
import logging
import sqlite3
from collections import Counter, OrderedDict
from collections.abc import Iterable, Iterator, Set
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from medina.engine import result
from medina.referee.config import seat_label
from medina.referee.outcome import (
    MatchOutcome,
    SeatOutcome,
    Termination,
    ranks_with_forfeits,
)
from medina.v1 import match_pb2, record_pb2
from medina.wire.settings import outcome_to_proto

from .errors import RecordError
from .reader import Record, parse_record
from .replay import replay_to_end

log = logging.getLogger("medina.records")


class StoredState(enum.Enum):
    """How a stored match ended."""

    FINISHED = "finished"
    ABORTED = "aborted"  # by the organiser, a shutdown, or a seat problem; outcome written
    ABANDONED = "abandoned"  # no seat's bot ever connected; nothing was played
    # No outcome: the server stopped mid-match (a crash), or the match is still being played.
    INTERRUPTED = "interrupted"
    UNREADABLE = "unreadable"  # not a record this server can read

    @property
    def shown(self) -> str:
        """The state's name where people read it (``replay list``, the viewer's pages):
        INTERRUPTED is "unfinished", since the file alone cannot tell a match still being
        played from one whose server stopped. The value stays "interrupted" where programs
        read it (gRPC error details, the viewer's JSON), so they keep working."""
        return "unfinished" if self is StoredState.INTERRUPTED else self.value


#: What a record without an outcome line is: the file alone does not tell a match still
#: being played (by a server writing to this directory) from one whose server stopped.
UNFINISHED = (
    "unfinished: no outcome line yet (still being played, or its server stopped during the match)"
)
#: Said besides of such a record whose last line is incomplete (a crash mid-write, or a
#: reader that came while the line was being written).
CUT_OFF = "its last line was cut off mid-write"


@dataclass(frozen=True)
class StoredMatch:
    """One record found on disk."""

    match_id: str
    path: Path
    state: StoredState
    header: record_pb2.RecordHeader | None
    decisions: int
    result: match_pb2.MatchResult | None
    note: str
    mtime: float

    @property
    def config(self) -> match_pb2.MatchConfig | None:
        """The match configuration from the header, if there is one."""
        return self.header.config if self.header is not None else None


def scan(directory: Path) -> list[StoredMatch]:
    """Every ``*.jsonl`` record in ``directory``, oldest first (by modification time)."""
    if not directory.is_dir():
        return []
    found = []
    for path in directory.glob("*.jsonl"):
        try:
            found.append(inspect(path))
        except OSError as exc:
            log.warning("cannot read record %s: %s", path, exc.strerror)
    found.sort(key=lambda m: (m.mtime, m.match_id))
    return found


def inspect(path: Path) -> StoredMatch:
    """What one record holds. A finished record is judged from its first and last lines; an
    interrupted one is replayed to score the board where it stopped."""
    stat = path.stat()
    match_id = path.stem
    data = path.read_bytes()
    head = data[: data.find(b"\n") + 1] if b"\n" in data else data
    if not head.strip():
        return StoredMatch(
            match_id,
            path,
            StoredState.INTERRUPTED,
            None,
            0,
            None,
            # Written at the match's start: an empty record's match may be waiting for its bots.
            f"{UNFINISHED}; the record is empty (no header: the match has not started, or "
            "never did)",
            stat.st_mtime,
        )
    last = _last_complete_line(data)
    if last is not None and b'"outcome"' in last:
        try:
            record = parse_record((head + last).decode("utf-8"), str(path))
        except (RecordError, UnicodeDecodeError):
            pass  # judge it the slow way below
        else:
            outcome = record.outcome
            if outcome is not None:
                complete = outcome.result.ending == match_pb2.MATCH_ENDING_COMPLETE
                return StoredMatch(
                    match_id,
                    path,
                    _ended_state(outcome.result),
                    record.header,
                    # Each entry is one JSON object with one key: counting needs no parsing.
                    data.count(b'\n{"decision"'),
                    outcome.result,
                    "" if complete else _abort_reason(outcome.result),
                    stat.st_mtime,
                )
    return _inspect_slowly(path, match_id, stat.st_mtime)


def _inspect_slowly(path: Path, match_id: str, mtime: float) -> StoredMatch:
    try:
        text = path.read_bytes().decode("utf-8")
        record = parse_record(text, str(path), allow_truncated=True)
    except (RecordError, UnicodeDecodeError) as exc:
        return StoredMatch(
            match_id, path, StoredState.UNREADABLE, None, 0, None, f"unreadable: {exc}", mtime
        )
    if record.outcome is not None:  # an outcome that is not the last line: parse said so
        return StoredMatch(
            match_id,
            path,
            _ended_state(record.outcome.result),
            record.header,
            len(record.decisions),
            record.outcome.result,
            "",
            mtime,
        )
    decisions, res, problem = _score_where_it_stopped(record)
    note = (
        f"{UNFINISHED}; the record is readable up to its last complete entry "
        f"({decisions} decisions)"
    )
    if record.truncated:
        note += f"; {CUT_OFF}"
    if problem:
        note += f"; replay stopped: {problem}"
    return StoredMatch(
        match_id, path, StoredState.INTERRUPTED, record.header, decisions, res, note, mtime
    )


class SeatOfRecord(Protocol):
    """A seat as a record's header (``RecordSeat``) or a match summary (``SeatStatus``)
    lists it."""

    @property
    def seat(self) -> int: ...

    @property
    def bot_name(self) -> str: ...


def seat_labels(
    config: match_pb2.MatchConfig, seats: Iterable[SeatOfRecord], players: int
) -> list[str]:
    """Seat labels as the referee names seats in results (``referee.config.seat_label``):
    the organiser's name for the seat from ``config`` when the match was given one (a
    tournament's bot name), else the name the bot gave when it connected (``seats``, from a
    record's header or a match summary), else ``seat N``."""
    configured = [c.name for c in config.seats[:players]]
    configured += [""] * (players - len(configured))
    bots = [""] * players
    for s in seats:
        if 0 <= s.seat < players:
            bots[s.seat] = s.bot_name
    return [seat_label(i, configured[i], bots[i]) for i in range(players)]


def _score_where_it_stopped(record: Record) -> tuple[int, match_pb2.MatchResult | None, str]:
    """Replay the decisions; the board's scores at the last one, every seat ABORTED."""
    state, count, error = replay_to_end(record)
    if error is not None or state is None:
        return count, None, str(error)
    players = state.rules.players
    engine = result(state)
    forfeits = record.forfeits
    ranks = ranks_with_forfeits(engine.totals, tuple(s in forfeits for s in range(players)))
    names = dict(enumerate(seat_labels(record.header.config, record.header.seats, players)))
    outcome = MatchOutcome(
        seats=tuple(
            SeatOutcome(
                seat=seat,
                name=names.get(seat) or f"seat {seat}",
                total=engine.totals[seat],
                rank=ranks[seat],
                breakdown=engine.breakdowns[seat],
                termination=Termination.ABORTED,
                detail=UNFINISHED,
                strikes=0,
            )
            for seat in range(players)
        ),
        complete=False,
    )
    return count, outcome_to_proto(outcome), ""


def _last_complete_line(data: bytes) -> bytes | None:
    """The last line of ``data`` if it is complete and not the first."""
    if not data.endswith(b"\n"):
        return None
    body = data[:-1]
    cut = body.rfind(b"\n")
    return body[cut + 1 :] + b"\n" if cut >= 0 else None


def _abort_reason(res: match_pb2.MatchResult) -> str:
    details = {s.detail for s in res.seats if s.detail}
    return "aborted" + (f": {'; '.join(sorted(details))}" if details else "")


def _ended_state(result: match_pb2.MatchResult) -> StoredState:
    if result.ending == match_pb2.MATCH_ENDING_COMPLETE:
        return StoredState.FINISHED
    if result.ending == match_pb2.MATCH_ENDING_ABANDONED:
        return StoredState.ABANDONED
    return StoredState.ABORTED


#: How much of a record's end is read to find its outcome line at start.
_TAIL_BYTES = 16_384
_ENDINGS = {
    "MATCH_ENDING_COMPLETE": StoredState.FINISHED,
    "MATCH_ENDING_ABANDONED": StoredState.ABANDONED,
    "MATCH_ENDING_ABORTED": StoredState.ABORTED,
}


def peek_state(path: Path) -> StoredState | None:
    """How a record's match ended, from its last line alone (its outcome's ending), or None
    when that line does not say: no outcome (an interrupted match), a last line longer than
    the tail read, a format-1 record or one that is not JSON. A server starting on a large
    directory reads a few KB of each record this way; the others are inspected in full."""
    with path.open("rb") as f:
        f.seek(0, 2)
        size = f.tell()
        f.seek(max(0, size - _TAIL_BYTES))
        tail = f.read()
    if not tail.endswith(b"\n"):
        return None
    cut = tail.rfind(b"\n", 0, len(tail) - 1)
    last = tail[cut + 1 :]
    if cut < 0 or not last.startswith(b'{"outcome"'):
        return None
    try:
        ending = json.loads(last)["outcome"]["result"]["ending"]
    except (ValueError, KeyError, TypeError):
        return None
    return _ENDINGS.get(ending) if isinstance(ending, str) else None


@dataclass(frozen=True, slots=True)
class Entry:
    """What a ``Catalog`` keeps of one record: enough to order and filter it."""

    match_id: str
    state: StoredState
    mtime: float


#: A state's code in the index, and back.
_STATE_CODE = {state: code for code, state in enumerate(StoredState)}
_CODE_STATE = dict(enumerate(StoredState))
#: The index's page cache: its memory, however many records it holds (SQLite's
#: ``cache_size`` in KiB when negative); the rest stays in its temporary file.
_INDEX_CACHE_KIB = 256
_SCHEMA = (
    "CREATE TABLE entries (id TEXT PRIMARY KEY, mtime REAL NOT NULL, state INTEGER NOT NULL)"
    " WITHOUT ROWID",
    "CREATE INDEX listing ON entries (mtime, id)",
    "CREATE INDEX by_state ON entries (state, mtime, id)",
)


class Catalog:
    """The records of one directory that a server lists.

    The entries (id, state, file time) live in a private temporary SQLite database, indexed
    in listing order (file time, then id): memory holds its page cache (256 KiB) and a count
    per state, so a server that has played ten million matches uses what one that has
    played a thousand does, and a page of the newest records costs its own entries
    (``newest``, ``count``), not a sort of the whole directory on the server's event loop.
    The full ``StoredMatch`` (header and result) is read back from the record when a caller
    asks for it, the most recently asked kept in a bounded cache.

    Not thread-safe: one thread uses it (``read`` alone may run on another).
    """

    def __init__(self, directory: Path, cache_size: int = 256) -> None:
        self.directory = directory
        self.cache_size = cache_size
        # "" is SQLite's private temporary database: deleted when the connection closes,
        # kept in memory up to its cache and spilled to a temporary file beyond.
        self._db = sqlite3.connect("", isolation_level=None, check_same_thread=False)
        self._db.execute(f"PRAGMA cache_size = -{_INDEX_CACHE_KIB}")
        self._db.execute("PRAGMA journal_mode = OFF")  # rebuilt from the records at start
        self._db.execute("PRAGMA synchronous = OFF")
        for statement in _SCHEMA:
            self._db.execute(statement)
        self._counts: Counter[StoredState] = Counter()
        self._cache: OrderedDict[str, StoredMatch] = OrderedDict()

    def load(self) -> list[StoredMatch]:
        """Read the directory: an entry for every record, from the end of its file when its
        outcome line says how the match ended (``peek_state``), else from the whole record
        (``inspect``). Returns the records read in full, oldest first: the interrupted and
        unreadable ones, whose notes say what happened. The newest are read into the cache,
        so the first listing finds them."""
        self._db.execute("DELETE FROM entries")
        self._counts = Counter()
        self._cache.clear()
        inspected: list[StoredMatch] = []
        if not self.directory.is_dir():
            return inspected
        found: list[tuple[str, float, int]] = []
        for path in self.directory.glob("*.jsonl"):
            try:
                mtime = path.stat().st_mtime
                state = peek_state(path)
                if state is None:
                    stored = inspect(path)
                    inspected.append(stored)
                    state, mtime = stored.state, stored.mtime
            except OSError as exc:
                log.warning("cannot read record %s: %s", path, exc.strerror)
                continue
            found.append((path.stem, mtime, _STATE_CODE[state]))
            self._counts[state] += 1
        self._db.executemany("INSERT INTO entries VALUES (?, ?, ?)", found)
        for entry in reversed(self.newest(self.cache_size)):
            self.get(entry.match_id)
        inspected.sort(key=lambda m: (m.mtime, m.match_id))
        return inspected

    def add(self, stored: StoredMatch) -> None:
        """A record that is complete now (a match that left memory)."""
        self._put(Entry(stored.match_id, stored.state, stored.mtime))
        self._remember(stored)

    def note(self, match_id: str, state: StoredState, mtime: float) -> None:
        """A record that is complete now, known without reading it (the server that wrote
        it knows how its match ended); its header and result are read when first asked for,
        and a record whose state on disk differs is corrected then (``get``)."""
        self._put(Entry(match_id, state, mtime))

    def entries(self) -> Iterator[Entry]:
        """Every record's entry, oldest first (read from the index as it is iterated)."""
        for match_id, mtime, code in self._db.execute(
            "SELECT id, mtime, state FROM entries ORDER BY mtime, id"
        ):
            yield Entry(match_id, _CODE_STATE[code], mtime)

    def entry(self, match_id: str) -> Entry | None:
        """One record's entry; None if the directory has no record of that match."""
        row = self._db.execute(
            "SELECT mtime, state FROM entries WHERE id = ?", (match_id,)
        ).fetchone()
        return None if row is None else Entry(match_id, _CODE_STATE[row[1]], row[0])

    def count(self, states: Set[StoredState] = frozenset()) -> int:
        """How many records are in ``states`` (empty: all)."""
        if not states:
            return self._counts.total()
        return sum(self._counts[s] for s in states)

    def newest(
        self,
        limit: int,
        before: tuple[float, str] | None = None,
        states: Set[StoredState] = frozenset(),
    ) -> list[Entry]:
        """Up to ``limit`` entries, newest first (by file time, then id), of those ordered
        strictly before ``before`` (None: from the newest) and, when ``states`` is given, in
        those states."""
        if limit <= 0:
            return []
        where: list[str] = []
        args: list[float | str | int] = []
        if before is not None:
            where.append("(mtime, id) < (?, ?)")
            args += before
        # An index walked from its end: a page reads its own entries, never a sort of every
        # record. One state has its own index; several are filtered along the listing.
        index = "listing"
        if len(states) == 1:
            index = "by_state"
            where.append("state = ?")
            args += [_STATE_CODE[s] for s in states]
        elif states:
            where.append(f"state IN ({', '.join('?' * len(states))})")
            args += [_STATE_CODE[s] for s in states]
        rows = self._db.execute(
            f"SELECT id, mtime, state FROM entries INDEXED BY {index}"
            + (f" WHERE {' AND '.join(where)}" if where else "")
            + " ORDER BY mtime DESC, id DESC LIMIT ?",
            (*args, limit),
        )
        return [Entry(match_id, _CODE_STATE[code], mtime) for match_id, mtime, code in rows]

    def __contains__(self, match_id: object) -> bool:
        return isinstance(match_id, str) and self.entry(match_id) is not None

    def __len__(self) -> int:
        return self._counts.total()

    def get(self, match_id: str) -> StoredMatch | None:
        """What one record holds, read back from it (cached); None if there is no such
        record or it can no longer be read (it is then dropped from the catalog)."""
        stored = self._cache.get(match_id)
        if stored is not None:
            if not self._on_disk(match_id):  # deleted under the server (replay prune)
                self.forget([match_id])
                return None
            self._cache.move_to_end(match_id)
            return stored
        if match_id not in self:
            return None
        found = self.read([match_id])
        self.accept(found)
        return found[match_id]

    def gone(self, match_ids: Iterable[str]) -> list[str]:
        """Those of ``match_ids`` whose record file is no longer there (one ``stat`` each)."""
        return [m for m in match_ids if not self._on_disk(m)]

    def forget(self, match_ids: Iterable[str]) -> None:
        """Records deleted from the directory (``replay prune``, an operator): no longer
        listed, counted or cached."""
        for match_id in match_ids:
            self._drop(match_id)
            self._cache.pop(match_id, None)

    def _on_disk(self, match_id: str) -> bool:
        return (self.directory / f"{match_id}.jsonl").is_file()

    def uncached(self, match_ids: Iterable[str]) -> list[str]:
        """Those of ``match_ids`` that are listed and not in the cache: ``get`` would read
        their records."""
        return [m for m in match_ids if m not in self._cache and m in self]

    def read(self, match_ids: Iterable[str]) -> dict[str, StoredMatch | None]:
        """Read records (None: gone or unreadable), changing nothing: safe on a worker
        thread, so a server reads a page's records off its event loop, then ``accept``s
        them on it."""
        found: dict[str, StoredMatch | None] = {}
        for match_id in match_ids:
            path = self.directory / f"{match_id}.jsonl"
            try:
                found[match_id] = inspect(path)
            except OSError as exc:
                log.warning("the record %s went away or cannot be read: %s", path, exc)
                found[match_id] = None
        return found

    def accept(self, found: dict[str, StoredMatch | None]) -> None:
        """Take what ``read`` found: cache it, correct an entry whose record was replaced
        behind the server's back, drop one whose record is gone."""
        for match_id, stored in found.items():
            entry = self.entry(match_id)
            if entry is None:
                continue  # dropped meanwhile
            if stored is None:
                self.forget([match_id])
                continue
            if stored.state is not entry.state:
                self._put(Entry(match_id, stored.state, stored.mtime))
            self._remember(stored)

    def _put(self, entry: Entry) -> None:
        """Add or replace an entry, keeping the counts."""
        self._drop(entry.match_id)
        self._db.execute(
            "INSERT INTO entries VALUES (?, ?, ?)",
            (entry.match_id, entry.mtime, _STATE_CODE[entry.state]),
        )
        self._counts[entry.state] += 1

    def _drop(self, match_id: str) -> None:
        old = self.entry(match_id)
        if old is not None:
            self._db.execute("DELETE FROM entries WHERE id = ?", (match_id,))
            self._counts[old.state] -= 1

    def _remember(self, stored: StoredMatch) -> None:
        self._cache[stored.match_id] = stored
        self._cache.move_to_end(stored.match_id)
        while len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)
