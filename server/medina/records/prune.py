"""Retention for a records directory: which records may go (by age, by the directory's
size) and their deletion, with their bot logs, never touching a record still in use."""

from __future__ import annotations

import math
import os
import re
import stat
from collections.abc import Iterator, Set
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from . import catalog
from .catalog import StoredState

#: A record's bot logs beside it: ``MATCH.seatN.log``, and what a bot wrote to its log
#: directory, moved beside it as ``MATCH.seatN.NAME.log`` or ``MATCH.seatN.NAME.1.log``
#: (``sandbox.keep_logs``; a stdio bridge's ``bot-NAME-PID.log``), sandboxed or not.
_SEAT_LOG = re.compile(r"^(?P<match>.+)\.seat\d+(?:\.[^/]+)?\.log$")
_DAY_S = 86_400
#: Why a record a tournament names is kept.
NAMED = "a tournament's stored result names it"


@dataclass(frozen=True)
class Policy:
    """What goes: records older than ``older_than_s`` seconds (0: any age), and records
    beyond the newest ``max_bytes`` (0: all of them); None: that bound is not set. A record
    goes when either bound that is set says so."""

    older_than_s: float | None
    max_bytes: int | None

    def __post_init__(self) -> None:
        if self.older_than_s is None and self.max_bytes is None:
            raise ValueError("a retention policy needs an age, a size, or both")
        if self.older_than_s is not None and not (
            math.isfinite(self.older_than_s) and self.older_than_s >= 0
        ):
            raise ValueError(f"older than {self.older_than_s} s: must be 0 or more")
        if self.max_bytes is not None and self.max_bytes < 0:
            raise ValueError(f"max size {self.max_bytes} bytes: must be 0 or more")

    @classmethod
    def of(cls, older_than_days: float | None, max_mb: float | None) -> Policy:
        """From the command's units: days and MB (10^6 bytes)."""
        return cls(
            None if older_than_days is None else older_than_days * _DAY_S,
            None if max_mb is None else int(max_mb * 1_000_000),
        )


@dataclass(frozen=True)
class Stored:
    """One record of the directory with its bot logs (names within the directory)."""

    name: str
    logs: tuple[str, ...]
    mtime: float
    size: int
    #: Record and logs, in bytes.
    total: int

    @property
    def match_id(self) -> str:
        return self.name.removesuffix(".jsonl")


@dataclass(frozen=True)
class Doomed:
    """A record that goes, and why (``older than N days``, ``beyond the newest M MB``)."""

    record: Stored
    why: str


@dataclass(frozen=True)
class Plan:
    """What a prune would do: the records to delete (oldest first), the records kept because
    they are protected (name -> why), the unreadable ones (name -> what is wrong, kept too),
    and the records kept because the policy keeps them."""

    directory: Path
    doomed: list[Doomed]
    protected: dict[str, str]
    unreadable: dict[str, str]
    kept: int
    #: Names beside the records that are not regular files (symlinks...): left alone.
    skipped: list[str]

    @property
    def freed(self) -> int:
        return sum(d.record.total for d in self.doomed)


@dataclass(frozen=True)
class Done:
    """What a prune did: records and bot logs deleted, bytes freed, and what could not be
    deleted (name -> why)."""

    records: int
    logs: int
    freed: int
    failed: dict[str, str]


@contextmanager
def _opened(directory: Path) -> Iterator[int]:
    """The directory as a file descriptor: every name is looked at and deleted relative to
    it, so a directory renamed or replaced meanwhile is never reached through a path."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        yield fd
    finally:
        os.close(fd)


def _regular(fd: int, name: str) -> os.stat_result | None:
    """The entry's own status (a symlink is not followed), or None if it is not a regular
    file or is gone."""
    try:
        st = os.stat(name, dir_fd=fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    return st if stat.S_ISREG(st.st_mode) else None


def plan(directory: Path, policy: Policy, now: float, keep: Set[str] = frozenset()) -> Plan:
    """What pruning ``directory`` under ``policy`` at time ``now`` would delete. Only the
    directory's own ``*.jsonl`` files are records (no subdirectory is looked into, no
    symlink followed). Never chosen: a record without an outcome line (``catalog.UNFINISHED``),
    an unreadable one, or one whose file name is in ``keep``."""
    records: list[Stored] = []
    protected: dict[str, str] = {}
    unreadable: dict[str, str] = {}
    skipped: list[str] = []
    with _opened(directory) as fd:
        names = os.listdir(fd)
        logs: dict[str, list[str]] = {}
        for name in names:
            m = _SEAT_LOG.match(name)
            if m is not None:
                logs.setdefault(m["match"], []).append(name)
        for name in sorted(n for n in names if n.endswith(".jsonl")):
            st = _regular(fd, name)
            if st is None:
                if os.path.lexists(directory / name):
                    skipped.append(name)
                continue
            mine = tuple(sorted(n for n in logs.get(name[:-6], []) if _regular(fd, n)))
            size = st.st_size + sum(_size(fd, n) for n in mine)
            records.append(Stored(name, mine, st.st_mtime, st.st_size, size))
    records.sort(key=lambda r: (r.mtime, r.name), reverse=True)  # newest first
    doomed: list[Doomed] = []
    kept = 0
    used = 0
    for r in records:
        used += r.total  # every record takes room, the protected ones too
        why = _why(r, policy, now, used)
        if why is None:
            kept += 1
            continue
        guard = _guard(directory / r.name, keep)
        if guard is None:
            doomed.append(Doomed(r, why))
        elif guard.startswith("unreadable"):
            unreadable[r.name] = guard
        else:
            protected[r.name] = guard
    doomed.reverse()
    return Plan(directory, doomed, protected, unreadable, kept, skipped)


def _size(fd: int, name: str) -> int:
    st = _regular(fd, name)
    return 0 if st is None else st.st_size


def _why(r: Stored, policy: Policy, now: float, used: int) -> str | None:
    """Why the policy lets ``r`` go (``used``: bytes of it and every newer record)."""
    if policy.older_than_s == 0:
        return "any age (older than 0 days)"
    if policy.older_than_s is not None and now - r.mtime > policy.older_than_s:
        return f"{(now - r.mtime) / _DAY_S:.1f} days old"
    if policy.max_bytes is not None and used > policy.max_bytes:
        return f"beyond the newest {policy.max_bytes / 1_000_000:g} MB"
    return None


def _guard(path: Path, keep: Set[str]) -> str | None:
    """Why a record must stay ("unreadable: ..." when it cannot be read), or None."""
    if path.name in keep:
        return NAMED
    try:
        state = catalog.peek_state(path)
        if state is None:
            state = catalog.inspect(path).state
    except OSError as exc:
        return f"unreadable: {exc.strerror or exc}"
    if state is StoredState.INTERRUPTED:
        return catalog.UNFINISHED
    if state is StoredState.UNREADABLE:
        return "unreadable: not a record this version can read"
    return None


def execute(p: Plan) -> Done:
    """Delete what ``p`` chose: each record, then its bot logs. A record whose file changed
    since it was planned (another size or time) is left and named in ``failed``."""
    records = logs = freed = 0
    failed: dict[str, str] = {}
    with _opened(p.directory) as fd:
        for d in p.doomed:
            r = d.record
            st = _regular(fd, r.name)
            if st is None:
                continue  # gone meanwhile: nothing to do
            if (st.st_size, st.st_mtime) != (r.size, r.mtime):
                failed[r.name] = "changed since it was looked at: left"
                continue
            try:
                os.unlink(r.name, dir_fd=fd)
            except OSError as exc:
                failed[r.name] = exc.strerror or str(exc)
                continue
            records += 1
            freed += st.st_size
            for name in r.logs:
                log_st = _regular(fd, name)
                if log_st is None:
                    continue
                try:
                    os.unlink(name, dir_fd=fd)
                except OSError as exc:
                    failed[name] = exc.strerror or str(exc)
                    continue
                logs += 1
                freed += log_st.st_size
    return Done(records, logs, freed, failed)
