"""A copy of a live SQLite database (a ladder's or a tournament's) taken while it is written:
SQLite's online backup (one consistent snapshot, the write-ahead log included), checked, and
written whole or not at all. A PostgreSQL database is pg_dump's to copy.

A plain ``cp`` of a database in WAL mode can copy the main file without the transactions
still in its ``-wal`` file, or a page half-written: a torn copy."""

from __future__ import annotations

import contextlib
import errno
import os
import sqlite3
import stat
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Literal

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from . import schema
from .database import StoreError, database_url

__all__ = [
    "Backup",
    "BackupExists",
    "Kind",
    "Pruned",
    "backup_sqlite",
    "prune_backups",
    "sqlite_path",
    "stamped",
]

Kind = Literal["ladder", "tournament"]

#: The first bytes of every SQLite database file.
SQLITE_HEADER = b"SQLite format 3\x00"

#: The first schema version with each kind's tables.
FIRST_VERSION: dict[Kind, int] = {"tournament": 1, "ladder": 2}

PG_DUMP_HINT = (
    "back it up with pg_dump, e.g. pg_dump --format=custom --file=BACKUP.dump '{url}' "
    '(docs/operations.md, "Backups")'
)


class BackupExists(StoreError):
    """The backup's path names a file already (replacing it was not asked for)."""


@dataclass(frozen=True)
class Backup:
    """A backup written and checked: its schema version, size and what it holds."""

    path: Path
    version: int
    size: int
    #: What it holds, in words: "4 bots, 6 rating lines, 31 matches (1 in play)".
    holds: str
    #: Matches (ladder) or games (tournaments) in play at the snapshot.
    in_play: int


def sqlite_path(db: str, kind: Kind) -> Path:
    """The SQLite file ``db`` (``--db``: a path or ``sqlite:///path``) names; StoreError
    saying so when it is PostgreSQL (pg_dump's to copy), another kind of URL, or no file."""
    try:
        url = make_url(database_url(db))
    except ArgumentError:
        raise StoreError(f"{db!r} is not a database URL (postgresql://... or a file)") from None
    backend = url.get_backend_name()
    if backend == "postgresql":
        safe = url.set(drivername="postgresql").render_as_string(hide_password=True)
        raise StoreError(f"{safe} is a PostgreSQL database: " + PG_DUMP_HINT.format(url=safe))
    if backend != "sqlite":
        raise StoreError(f"{db!r}: only SQLite and PostgreSQL are supported")
    if not url.database or url.database == ":memory:":
        raise StoreError(f"{db!r} is an in-memory database: there is no file to back up")
    path = Path(url.database)
    if path.is_dir():
        raise StoreError(f"{db} is a directory, not a {kind} database")
    if not path.is_file():
        raise StoreError(f"no {kind} database at {db}")
    return path


def backup_sqlite(source: Path, dest: Path, kind: Kind, *, replace: bool = False) -> Backup:
    """Copy the database ``source`` to ``dest`` while other processes may be writing it.

    The copy is one consistent snapshot (SQLite's backup API reads it in one transaction,
    the write-ahead log included; writers go on meanwhile), made self-contained (rollback
    journal mode: one file, no ``-wal``), checked (``PRAGMA integrity_check``, and that it
    is a ``kind`` database at a schema version this code knows) and only then put at
    ``dest``: a temporary file beside it renamed, so ``dest`` is never half-written.
    ``dest`` is not replaced unless ``replace`` (BackupExists), and never when it is not an
    SQLite file. StoreError naming the problem; nothing is left behind on an error."""
    dest = _check_dest(source, dest, replace)
    with _connect(source, read_only=True) as conn:
        _describe(conn, source, kind)  # before writing anything: the wrong file is named
        tmp = _temporary(dest)
        try:
            _copy(conn, source, tmp, dest)
            with _connect(tmp, read_only=False, name=dest) as copy:
                problems = [str(r[0]) for r in copy.execute("PRAGMA integrity_check")]
                if problems != ["ok"]:
                    raise StoreError(
                        f"the copy of {source} fails SQLite's integrity check "
                        f"({len(problems)} problem(s), the first: {problems[0]}): the database "
                        f"itself is damaged; {dest} was not written"
                    )
                version, holds, in_play = _describe(copy, source, kind)
            os.chmod(tmp, stat.S_IMODE(source.stat().st_mode))  # as readable as the original
            _fsync(tmp)
            _publish(tmp, dest, replace)
        finally:
            _remove(tmp)
    return Backup(dest, version, dest.stat().st_size, holds, in_play)


#: A backup written into a directory is named for its database and the UTC second it was
#: taken, ``ladder-20261129T031500Z.db``: the names sort as the times do, and rotation
#: (``prune_backups``) knows its own files by them.
STAMP = "%Y%m%dT%H%M%SZ"


def _stem_and_suffix(source: Path) -> tuple[str, str]:
    return source.stem, source.suffix or ".db"


def stamped(directory: Path, source: Path, at: datetime) -> Path:
    """The path of a backup of ``source`` taken at ``at`` (UTC) in ``directory``."""
    stem, suffix = _stem_and_suffix(source)
    return directory / f"{stem}-{at.strftime(STAMP)}{suffix}"


@dataclass(frozen=True)
class Pruned:
    """What ``prune_backups`` deleted, and what it could not (with why), oldest first."""

    deleted: list[Path] = field(default_factory=list)
    failed: list[tuple[Path, str]] = field(default_factory=list)


def prune_backups(directory: Path, source: Path, kind: Kind, keep: int) -> Pruned:
    """Delete the oldest backups of ``source`` in ``directory`` so that the newest ``keep``
    remain. Only files named as ``stamped`` names them count, and only regular files that
    open as a ``kind`` database: anything else there (other databases' backups, notes, a
    link, a file of that name that is not such a backup) is never touched nor counted."""
    if keep < 1:
        raise ValueError(f"keep must be at least 1, got {keep}")
    ours = [
        Path(entry.path)
        for entry in os.scandir(directory)
        if _is_stamped(entry.name, source)
        and entry.is_file(follow_symlinks=False)
        and _is_backup(Path(entry.path), kind)
    ]
    ours.sort(key=lambda p: p.name)
    pruned = Pruned()
    for old in ours[: max(0, len(ours) - keep)]:
        try:
            old.unlink()
        except OSError as exc:
            pruned.failed.append((old, exc.strerror or str(exc)))
        else:
            pruned.deleted.append(old)
    return pruned


def _is_stamped(name: str, source: Path) -> bool:
    """Whether ``name`` is one ``stamped`` gives a backup of ``source`` (read by ``STAMP``)."""
    stem, suffix = _stem_and_suffix(source)
    head, tail = f"{stem}-", suffix
    if not (name.startswith(head) and name.endswith(tail)):
        return False
    stamp = name[len(head) : len(name) - len(tail)]
    try:
        # strptime takes unpadded fields too: only a stamp written back the same is ours
        return datetime.strptime(stamp, STAMP).strftime(STAMP) == stamp
    except ValueError:
        return False


def _is_backup(path: Path, kind: Kind) -> bool:
    """Whether ``path`` is a ``kind`` database, as a backup is (opened read-only)."""
    try:
        with open(path, "rb") as f:
            if f.read(len(SQLITE_HEADER)) != SQLITE_HEADER:
                return False  # not opened by SQLite at all: cheaper, and nothing to lock
        with _connect(path, read_only=True) as conn:
            _describe(conn, path, kind)
    except (OSError, StoreError):
        return False
    return True


def _check_dest(source: Path, dest: Path, replace: bool) -> Path:
    if dest.is_dir():
        raise StoreError(f"{dest} is a directory: name the backup file in it")
    if not dest.parent.is_dir():
        raise StoreError(f"no directory {dest.parent} to write the backup {dest.name} in")
    real = Path(os.path.realpath(dest))  # a link is followed: the file it names is written
    live = Path(os.path.realpath(source))
    if real == live or (dest.exists() and os.path.samefile(dest, source)):
        raise StoreError(f"{dest} is the database itself: name another file for the backup")
    if real in {Path(f"{live}{s}") for s in ("-wal", "-shm", "-journal", ".lock")}:
        raise StoreError(f"{dest} is one of the database's own files: name another file")
    if not dest.exists():
        return real
    if not replace:
        raise BackupExists(f"{dest} exists")
    if not stat.S_ISREG(real.stat().st_mode):
        raise StoreError(f"{dest} is not a regular file: not replacing it with a backup")
    with open(real, "rb") as f:
        head = f.read(len(SQLITE_HEADER))
    if head and head != SQLITE_HEADER:
        raise StoreError(f"{dest} is not an SQLite database: not replacing it with a backup")
    return real


@contextlib.contextmanager
def _connect(
    path: Path, *, read_only: bool, name: Path | None = None
) -> Iterator[sqlite3.Connection]:
    """A connection that never creates ``path``; read-only never writes it either. Errors
    name ``name`` (the backup, for its temporary file)."""
    uri = f"{path.resolve().as_uri()}?mode={'ro' if read_only else 'rw'}"
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=60, isolation_level=None)
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open {name or path}: {exc}") from None
    try:
        yield conn
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"{name or path}: {exc}") from None
    finally:
        conn.close()


def _describe(conn: sqlite3.Connection, source: Path, kind: Kind) -> tuple[int, str, int]:
    """The schema version, contents in words and matches in play of a ``kind`` database;
    StoreError when it is not one."""
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"{source} is not an SQLite database ({exc})") from None
    if "schema_version" not in tables:
        raise StoreError(
            f"{source} is an SQLite database but not a medina-arena one (no schema_version)"
        )
    row = conn.execute("SELECT max(version) FROM schema_version").fetchone()
    version = int(row[0] or 0)
    if version > schema.LATEST:
        raise StoreError(
            f"{source} is at schema version {version}, newer than this medina-arena knows "
            f"({schema.LATEST}): back it up with the medina-arena that uses it"
        )
    if version < FIRST_VERSION[kind]:
        raise StoreError(f"{source} is not a {kind} database (schema version {version})")
    named = sorted(r[0] for r in conn.execute("SELECT name FROM tournaments"))
    accounts = _count(conn, "ladder_bots") if version >= FIRST_VERSION["ladder"] else 0
    if kind == "ladder":
        if named and not accounts:
            raise StoreError(
                f"{source} holds tournaments ({', '.join(named)}), not a ladder: "
                "`medina-arena tournament backup` copies it"
            )
        matches = _count(conn, "ladder_matches")
        in_play = _count(conn, "ladder_matches", "status IN ('starting', 'running')")
        lines = _count(conn, "ladder_lines")
        holds = (
            f"{_n(accounts, 'bot')}, {_n(lines, 'rating line')}, {_n(matches, 'match', 'es')} "
            f"({in_play} in play)"
        )
        return version, holds, in_play
    if accounts and not named:
        raise StoreError(
            f"{source} holds a ladder ({_n(accounts, 'bot')}), not a tournament: "
            "`medina-arena ladder backup` copies it"
        )
    games = _count(conn, "games")
    done = _count(conn, "games", "status = 'done'")
    in_play = _count(conn, "games", "status = 'running'")
    holds = (
        f"{_n(len(named), 'tournament')} ({', '.join(named) or 'none'}), {done} of "
        f"{_n(games, 'game')} done ({in_play} in play)"
    )
    return version, holds, in_play


def _n(count: int, word: str, plural: str = "s") -> str:
    return f"{count} {word}{'' if count == 1 else plural}"


def _count(conn: sqlite3.Connection, table: str, where: str = "1") -> int:
    return int(conn.execute(f"SELECT count(*) FROM {table} WHERE {where}").fetchone()[0])


def _temporary(dest: Path) -> Path:
    try:
        fd, name = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".part")
    except OSError as exc:
        raise StoreError(f"cannot write in {dest.parent}: {exc.strerror}") from None
    os.close(fd)
    return Path(name)


def _copy(conn: sqlite3.Connection, source: Path, tmp: Path, dest: Path) -> None:
    """The whole database in one step: one read transaction, so one snapshot (a backup in
    steps starts again whenever another process writes, and might never end)."""
    with _connect(tmp, read_only=False, name=dest) as copy:
        try:
            conn.backup(copy)
            copy.execute("PRAGMA journal_mode=DELETE")  # one self-contained file
        except sqlite3.Error as exc:
            raise StoreError(f"cannot back up {source} to {dest}: {exc}") from None


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _publish(tmp: Path, dest: Path, replace: bool) -> None:
    """``tmp`` renamed to ``dest``; without ``replace``, never over a file that appeared
    meanwhile (a hard link fails if ``dest`` exists)."""
    try:
        if replace:
            os.replace(tmp, dest)
        else:
            try:
                os.link(tmp, dest)
            except FileExistsError:
                raise BackupExists(f"{dest} exists") from None
            except OSError as exc:
                if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.EXDEV):
                    raise
                if dest.exists():  # a file system without hard links
                    raise BackupExists(f"{dest} exists") from None
                os.replace(tmp, dest)
        dirfd = os.open(dest.parent, os.O_RDONLY)
        try:
            os.fsync(dirfd)
        finally:
            os.close(dirfd)
    except OSError as exc:
        raise StoreError(f"cannot write {dest}: {exc.strerror}") from None


def _remove(tmp: Path) -> None:
    for leftover in (tmp, *(Path(f"{tmp}{s}") for s in ("-journal", "-wal", "-shm"))):
        leftover.unlink(missing_ok=True)
