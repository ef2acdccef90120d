"""The database tables (SQLAlchemy Core) and their versioned migrations.

Each migration is a step from version N-1 to N, applied in order in one transaction and
recorded in ``schema_version``; a database newer than this code is refused rather than
guessed at. docs/tournaments.md describes the tables."""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Connection,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    select,
)

metadata = MetaData()

schema_version = Table(
    "schema_version",
    metadata,
    Column("version", Integer, primary_key=True),
    Column("applied_at", Float, nullable=False),
)

tournaments = Table(
    "tournaments",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("name", String(64), nullable=False, unique=True),
    Column("digest", String(32), nullable=False),
    Column("config", Text, nullable=False),
    Column("created_at", Float, nullable=False),
    # running: games are being played; finished: every game is done; separated: stopped
    # early because the standings separated; sprt-h1, sprt-h0: stopped at an SPRT's verdict
    # (``stop_block``: the last block counted).
    Column("status", String(16), nullable=False),
    Column("stop_block", Integer, nullable=True),
    Column("finished_at", Float, nullable=True),
)

bots = Table(
    "bots",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("tournament_id", ForeignKey("tournaments.id"), nullable=False),
    Column("name", String(64), nullable=False),
    Column("command", Text, nullable=False),  # JSON list of arguments
    Column("cwd", Text, nullable=True),
    Column("env", Text, nullable=False),  # JSON object
    UniqueConstraint("tournament_id", "name"),
)

games = Table(
    "games",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("tournament_id", ForeignKey("tournaments.id"), nullable=False),
    Column("number", Integer, nullable=False),
    Column("block", Integer, nullable=False),
    Column("ruleset", String(32), nullable=False),
    Column("players", Integer, nullable=False),
    Column("seed", BigInteger, nullable=False),
    Column("rotation", Integer, nullable=False),
    Column("seats", Text, nullable=False),  # JSON list of bot names by seat
    # pending -> running (leased) -> done; cancelled when the tournament stopped early.
    Column("status", String(16), nullable=False),
    Column("lease_owner", String(64), nullable=True),
    Column("lease_expires", Float, nullable=True),
    Column("attempts", Integer, nullable=False, default=0),
    Column("match_id", String(32), nullable=True),
    Column("record_path", Text, nullable=True),
    Column("ending", String(16), nullable=True),  # complete | abandoned
    Column("played_by", String(64), nullable=True),
    Column("started_at", Float, nullable=True),
    Column("finished_at", Float, nullable=True),
    UniqueConstraint("tournament_id", "number"),
)
Index("games_claim", games.c.tournament_id, games.c.status, games.c.number)

seat_results = Table(
    "seat_results",
    metadata,
    Column("game_id", ForeignKey("games.id"), primary_key=True),
    Column("seat", Integer, primary_key=True),
    Column("bot_id", ForeignKey("bots.id"), nullable=False),
    Column("total", Integer, nullable=False),
    Column("rank", Integer, nullable=False),
    Column("termination", String(16), nullable=False),
    Column("strikes", Integer, nullable=False),
    Column("detail", Text, nullable=False),
)

# Rating snapshots written once per runner invocation by earlier versions; no longer
# written: the rating history is computed per game from the results (tournament/standings).
ratings = Table(
    "ratings",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("tournament_id", ForeignKey("tournaments.id"), nullable=False),
    Column("bot_id", ForeignKey("bots.id"), nullable=False),
    Column("games", Integer, nullable=False),  # games counted when this rating was computed
    Column("mu", Float, nullable=False),
    Column("sigma", Float, nullable=False),
    Column("computed_at", Float, nullable=False),
)

incidents = Table(
    "incidents",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("game_id", ForeignKey("games.id"), nullable=False),
    Column("at", Float, nullable=False),
    Column("worker", String(64), nullable=False),
    Column("what", Text, nullable=False),  # e.g. "interrupted: runner stopped (SIGTERM)"
    Column("flag", Boolean, nullable=False, default=False),
)


def _v1(conn: Connection) -> None:
    for table in (tournaments, bots, games, seat_results, ratings, incidents):
        table.create(conn)  # with its indexes


#: Migration N takes the schema from version N-1 to N. Append, never edit.
MIGRATIONS: tuple[Callable[[Connection], None], ...] = (_v1,)
LATEST = len(MIGRATIONS)


def current_version(conn: Connection) -> int:
    """The schema version of the database (0: empty)."""
    if not conn.dialect.has_table(conn, "schema_version"):
        return 0
    found = conn.execute(select(schema_version.c.version).order_by(schema_version.c.version.desc()))
    row = found.first()
    return int(row[0]) if row else 0
