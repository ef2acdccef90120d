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
    inspect,
    select,
    text,
    update,
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


# -- the ladder (version 2) ---------------------------------------------------------------

ladder_bots = Table(
    "ladder_bots",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("name", String(64), nullable=False, unique=True),
    Column("owner", String(64), nullable=False),
    # The key is "<key_id>.<secret>": the id finds the row, the secret is stored only as
    # sha256(salt + secret) (a 256-bit random secret needs no slow hash).
    Column("key_id", String(16), nullable=False, unique=True),
    Column("key_salt", String(32), nullable=False),
    Column("key_hash", String(64), nullable=False),
    Column("created_at", Float, nullable=False),
    Column("revoked_at", Float, nullable=True),
    # Written by schema version 2 only: a suspension is kept per version since version 3
    # (ladder_lines.suspended_reason); a new version used to lift the whole account's.
    Column("suspended_reason", Text, nullable=True),
    Column("suspended_version", String(128), nullable=True),
)

# One rating line per bot version: a new version starts a new line, earlier lines stay.
ladder_lines = Table(
    "ladder_lines",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("bot_id", ForeignKey("ladder_bots.id"), nullable=False),
    Column("version", String(128), nullable=False),
    Column("first_seen", Float, nullable=False),
    Column("last_seen", Float, nullable=False),
    Column("mu", Float, nullable=False),
    Column("sigma", Float, nullable=False),
    Column("games", Integer, nullable=False),
    Column("rank_sum", Integer, nullable=False),
    Column("aborted", Integer, nullable=False),
    Column("faults", Text, nullable=False),  # JSON object termination -> count
    # Why this version may not play (its faults), until the organiser lifts it; NULL: it may.
    Column("suspended_reason", Text, nullable=True),
    # When the organiser last lifted its suspension: faults before it no longer count.
    Column("unsuspended_at", Float, nullable=True),
    UniqueConstraint("bot_id", "version"),
)

# Every ladder server process, with a lease it renews: the matches of a server whose
# lease has expired are aborted (not rated) by whichever server notices first.
ladder_servers = Table(
    "ladder_servers",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("address", Text, nullable=False),
    Column("started_at", Float, nullable=False),
    Column("lease_expires", Float, nullable=False),
)

# Which server a bot's lobby stream is on: one place at a time.
ladder_presence = Table(
    "ladder_presence",
    metadata,
    Column("bot_id", ForeignKey("ladder_bots.id"), primary_key=True),
    Column("server", String(64), nullable=False),
    Column("connected_at", Float, nullable=False),
    Column("lease_expires", Float, nullable=False),
)

ladder_matches = Table(
    "ladder_matches",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("server", String(64), nullable=False),
    Column("ruleset", String(32), nullable=False),
    Column("players", Integer, nullable=False),
    Column("decision_ms", Integer, nullable=False),
    Column("seed", BigInteger, nullable=False),
    # starting -> running -> finished | aborted; finished -> voided (`bots void`: kept, unrated)
    Column("status", String(16), nullable=False),
    Column("arena_match_id", String(64), nullable=True),
    Column("record_path", Text, nullable=True),
    Column("ending", String(16), nullable=True),  # complete | abandoned | aborted
    Column("detail", Text, nullable=True),
    Column("created_at", Float, nullable=False),
    Column("finished_at", Float, nullable=True),
    # The order ratings were updated in (1, 2, ...): a recomputation replays this order.
    Column("rated_seq", Integer, nullable=True, unique=True),
)
Index("ladder_matches_status", ladder_matches.c.status, ladder_matches.c.server)

ladder_seats = Table(
    "ladder_seats",
    metadata,
    Column("match_id", ForeignKey("ladder_matches.id"), primary_key=True),
    Column("seat", Integer, primary_key=True),
    Column("line_id", ForeignKey("ladder_lines.id"), nullable=False),
    Column("total", Integer, nullable=True),
    Column("rank", Integer, nullable=True),  # the rank the rating counted (forfeits last)
    Column("termination", String(16), nullable=True),
    Column("strikes", Integer, nullable=True),
    Column("detail", Text, nullable=True),
    Column("mu_after", Float, nullable=True),
    Column("sigma_after", Float, nullable=True),
)
Index("ladder_seats_line", ladder_seats.c.line_id)


def _v1(conn: Connection) -> None:
    for table in (tournaments, bots, games, seat_results, ratings, incidents):
        table.create(conn)  # with its indexes


def _v2(conn: Connection) -> None:
    for table in (
        ladder_bots,
        ladder_lines,
        ladder_servers,
        ladder_presence,
        ladder_matches,
        ladder_seats,
    ):
        table.create(conn)


def _v3(conn: Connection) -> None:
    # Version 2 created ladder_lines from this module's metadata, so a database created by
    # this code has the column already; one created by older code gets it now.
    if "suspended_reason" not in {c["name"] for c in inspect(conn).get_columns("ladder_lines")}:
        conn.execute(text("ALTER TABLE ladder_lines ADD COLUMN suspended_reason TEXT"))
    # The account's one suspension moves to the version it named.
    conn.execute(
        update(ladder_lines)
        .values(
            suspended_reason=select(ladder_bots.c.suspended_reason)
            .where(
                ladder_bots.c.id == ladder_lines.c.bot_id,
                ladder_bots.c.suspended_version == ladder_lines.c.version,
            )
            .scalar_subquery()
        )
        .where(ladder_lines.c.suspended_reason.is_(None))
    )
    conn.execute(update(ladder_bots).values(suspended_reason=None, suspended_version=None))


def _v4(conn: Connection) -> None:
    # As in _v3: a database created by this code has the column already.
    if "unsuspended_at" not in {c["name"] for c in inspect(conn).get_columns("ladder_lines")}:
        conn.execute(text("ALTER TABLE ladder_lines ADD COLUMN unsuspended_at FLOAT"))


#: Migration N takes the schema from version N-1 to N. Append, never edit.
MIGRATIONS: tuple[Callable[[Connection], None], ...] = (_v1, _v2, _v3, _v4)
LATEST = len(MIGRATIONS)


def current_version(conn: Connection) -> int:
    """The schema version of the database (0: empty)."""
    if not conn.dialect.has_table(conn, "schema_version"):
        return 0
    found = conn.execute(select(schema_version.c.version).order_by(schema_version.c.version.desc()))
    row = found.first()
    return int(row[0]) if row else 0
