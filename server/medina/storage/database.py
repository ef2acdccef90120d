"""One database (SQLAlchemy Core): SQLite by default, PostgreSQL for several machines.

Opening it creates or migrates the schema (storage/schema.py); the tournament and ladder
stores are built on it. Times in leases are the database's clock (``Database._now``), so
machines with skewed clocks share one database safely."""

from __future__ import annotations

import contextlib
import fcntl
import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    Engine,
    create_engine,
    event,
    func,
    insert,
    text,
)
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DatabaseError, NoSuchModuleError

from . import schema


class StoreError(Exception):
    """The database cannot be used as asked; the message says why."""


def one_line(text: str) -> str:
    """A driver's message on one line (libpq's goes on with a tab-indented hint)."""
    return "; ".join(part.strip() for part in text.splitlines() if part.strip())


def database_url(value: str) -> str:
    """An SQLAlchemy URL from ``--db``: ``postgresql://...`` (psycopg 3), ``sqlite:///path``
    or a plain file path (SQLite)."""
    if "://" not in value:
        return f"sqlite:///{Path(value).resolve()}"
    if value.startswith(("postgresql://", "postgres://")):
        return "postgresql+psycopg://" + value.split("://", 1)[1]
    return value


def worker_id() -> str:
    """This process's identity in leases: host, pid and the process's start tick (so a reused
    pid is not taken for a live runner)."""
    return f"{socket.gethostname()}:{os.getpid()}:{_start_tick(os.getpid())}"


def _start_tick(pid: int) -> str:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return "?"
    return stat.rsplit(")", 1)[1].split()[19]


def owner_is_dead_here(owner: str) -> bool:
    """True when ``owner`` (a ``worker_id``) was a process of this host that no longer runs."""
    host, _, rest = owner.partition(":")
    pid_text, _, tick = rest.partition(":")
    if host != socket.gethostname() or not pid_text.isdigit():
        return False
    return _start_tick(int(pid_text)) != tick


class Database:
    """A database, its schema created or migrated on open."""

    def __init__(self, url: str) -> None:
        self.url = database_url(url)
        try:
            parsed = make_url(self.url)
        except ArgumentError:
            raise StoreError(
                f"{url!r} is not a database URL (postgresql://... or a file)"
            ) from None
        self.dialect = parsed.get_backend_name()
        if self.dialect not in ("sqlite", "postgresql"):
            raise StoreError(f"{url!r}: only SQLite and PostgreSQL are supported")
        if self.dialect == "sqlite" and parsed.database:
            try:
                Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(
                    f"cannot open the database {parsed.database}: {exc.strerror} ({exc.filename})"
                ) from None
        try:
            self.engine: Engine = create_engine(
                self.url,
                pool_pre_ping=True,
                **({"connect_args": {"timeout": 60}} if self.dialect == "sqlite" else {}),
            )
        except (ArgumentError, NoSuchModuleError) as exc:
            raise StoreError(f"cannot use {url!r}: {exc}") from None
        if self.dialect == "sqlite":
            event.listen(self.engine, "connect", _sqlite_pragmas)
        self.migrate()

    # -- schema ------------------------------------------------------------------------

    def migrate(self) -> int:
        """Bring the schema to the latest version; the version it is at."""
        with self._sqlite_lock():
            return self._migrate()

    @contextlib.contextmanager
    def _sqlite_lock(self) -> Iterator[None]:
        # SQLite's DDL does not queue behind another process's migration: a lock file does.
        database = make_url(self.url).database
        if self.dialect != "sqlite" or not database or database == ":memory:":
            yield
            return
        try:
            f = open(f"{database}.lock", "a")  # noqa: SIM115 (closed by the with below)
        except OSError as exc:
            raise StoreError(
                f"cannot open the database {database}: {exc.strerror} ({exc.filename})"
            ) from None
        with f:
            fcntl.flock(f, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)

    def _migrate(self) -> int:
        try:
            with self.engine.begin() as conn:
                if self.dialect == "postgresql":  # one migrator at a time
                    conn.execute(text("SELECT pg_advisory_xact_lock(7415002)"))
                version = schema.current_version(conn)
                if version > schema.LATEST:
                    raise StoreError(
                        f"the database is at schema version {version}, newer than this "
                        f"medina-arena knows ({schema.LATEST}); upgrade medina-arena"
                    )
                if version == 0:
                    schema.schema_version.create(conn, checkfirst=True)
                for n in range(version + 1, schema.LATEST + 1):
                    schema.MIGRATIONS[n - 1](conn)
                    conn.execute(
                        insert(schema.schema_version).values(version=n, applied_at=time.time())
                    )
                return schema.LATEST
        except DatabaseError as exc:  # unreachable, unwritable, or not a database at all
            raise StoreError(
                f"cannot open the database {self.safe_url}: {one_line(str(exc.orig))}"
            ) from None

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[Connection]:
        """A connection whose reads all see one state of the database, whatever commits
        meanwhile: one read transaction (SQLite in WAL mode keeps its snapshot from the first
        read to the end; PostgreSQL's REPEATABLE READ does the same). Separate reads of a
        database being written saw two states: a check comparing them reported differences
        that were only the results stored between them."""
        with self.engine.connect() as conn:
            if self.dialect == "postgresql":
                conn.execution_options(isolation_level="REPEATABLE READ")
            with conn.begin():
                if self.dialect == "sqlite":
                    # The driver opens no transaction before a SELECT: each read would be
                    # its own, on the state of its moment.
                    conn.exec_driver_sql("BEGIN")
                yield conn

    @property
    def safe_url(self) -> str:
        """The URL without its password."""
        return make_url(self.url).render_as_string(hide_password=True)

    def _now(self) -> ColumnElement[Any]:
        """The database's clock, in seconds since the epoch."""
        if self.dialect == "postgresql":
            return func.extract("epoch", func.clock_timestamp())
        return (func.julianday("now") - 2440587.5) * 86400.0


def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    # WAL: readers (standings, the web) never block the runner's writes.
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA busy_timeout=60000")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.close()
