"""The ladder in a database: bot accounts and keys, rating lines, which server each bot is
connected to, the matches and their results.

Several ladder servers share one database (PostgreSQL). A bot's lobby stream is on one
server at a time (``ladder_presence``, leased). A match belongs to the server that formed
it; its result is stored once, by that server, in the transaction that updates the ratings
(serialised by one advisory lock, so ``rated_seq`` is the order ratings moved in). A server
that stops renewing its lease loses its unfinished matches: whichever server notices marks
them aborted, and they are never rated. The module knows nothing of games or sockets:
ratings arrive computed (``ladder.ratings``)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    Select,
    and_,
    bindparam,
    delete,
    func,
    insert,
    literal,
    or_,
    select,
    text,
    update,
)

from .database import Database, StoreError
from .schema import (
    ladder_bots,
    ladder_lines,
    ladder_matches,
    ladder_presence,
    ladder_seats,
    ladder_servers,
)

__all__ = [
    "AccountRow",
    "BotRevokedError",
    "LadderStore",
    "LineRow",
    "MatchRow",
    "RatedSeat",
    "StoreError",
    "StoredSeat",
    "Voided",
]

#: pg_advisory_xact_lock key serialising rating updates.
RATING_LOCK = 7415010


@dataclass(frozen=True, slots=True)
class AccountRow:
    """A bot account (never its key)."""

    id: int
    name: str
    owner: str
    created_at: float
    revoked: bool
    versions: tuple[str, ...]
    #: Its suspended versions, each with why.
    suspended: Mapping[str, str]

    @property
    def inactive(self) -> str:
        """Empty, or why the bot may not play: revoked, or its newest version suspended (an
        older version's suspension leaves the bot free to play as another)."""
        if self.revoked:
            return "revoked"
        newest = self.versions[-1] if self.versions else None
        if newest is not None and newest in self.suspended:
            return f"suspended: {self.suspended[newest]}"
        return ""


class BotRevokedError(StoreError):
    """The bot's key was revoked for good."""


@dataclass(frozen=True, slots=True)
class LineRow:
    """A rating line: one version of one bot."""

    id: int
    bot_id: int
    bot: str
    owner: str
    version: str
    mu: float
    sigma: float
    games: int
    rank_sum: int
    aborted: int
    faults: dict[str, int]
    #: When the version was last connected or playing (Unix seconds): its hello, its lease
    #: renewals while connected or playing (every ``lease_s / 3``), its matches' ends.
    last_seen: float
    inactive: str

    @property
    def mean_rank(self) -> float:
        """Mean counted rank over rated games (0 when none)."""
        return self.rank_sum / self.games if self.games else 0.0


@dataclass(frozen=True, slots=True)
class StoredSeat:
    """One seat's result as the ladder stores it: the arena's outcome
    (``referee.outcome.SeatOutcome``) reduced to what a rating and the standings need, with
    the rank the rating counts."""

    seat: int
    total: int
    rank: int
    termination: str
    strikes: int
    detail: str


@dataclass(frozen=True, slots=True)
class RatedSeat:
    """A seat's rating line and its rating after a stored result."""

    seat: int
    line_id: int
    mu: float
    sigma: float
    games: int


@dataclass(frozen=True, slots=True)
class MatchRow:
    """A ladder match as stored."""

    id: int
    server: str
    ruleset: str
    players: int
    decision_ms: int
    seed: int
    status: str
    arena_match_id: str | None
    record_path: str | None
    ending: str | None
    created_at: float
    finished_at: float | None
    rated_seq: int | None
    #: Why it was aborted (empty otherwise).
    detail: str
    #: (seat, bot, version, total, rank, termination, mu after) by seat.
    seats: tuple[tuple[int, str, str, int | None, int | None, str | None, float | None], ...]


#: How ratings move: the lines' (mu, sigma) in seat order and the counted ranks -> after.
Rater = Callable[[Sequence[tuple[float, float]], Sequence[int]], list[tuple[float, float]]]

#: Rated results in rating order (``rated_results()``) -> each seat's (mu, sigma) after each
#: (``ladder.recompute.replay``), every line from the initial rating.
Replayer = Callable[[Sequence[tuple[int, list[tuple[int, int]]]]], list[list[tuple[float, float]]]]


@dataclass(frozen=True, slots=True)
class Voided:
    """What ``void`` did: the matches it voided, and every line whose rating it changed as
    (bot, version, (mu, sigma, games) before, after), by bot and version."""

    matches: int
    changed: tuple[tuple[str, str, tuple[float, float, int], tuple[float, float, int]], ...]


class LadderStore(Database):
    """The ladder tables of one database."""

    # -- accounts ----------------------------------------------------------------------

    def add_bot(self, name: str, owner: str, key_id: str, salt: str, digest: str) -> None:
        """Create an account; StoreError if the name is taken."""
        with self.engine.begin() as conn:
            if conn.execute(select(ladder_bots.c.id).where(ladder_bots.c.name == name)).first():
                raise StoreError(f"a bot named {name!r} exists already")
            conn.execute(
                insert(ladder_bots).values(
                    name=name,
                    owner=owner,
                    key_id=key_id,
                    key_salt=salt,
                    key_hash=digest,
                    created_at=time.time(),
                )
            )

    def set_key(self, name: str, key_id: str, salt: str, digest: str) -> None:
        """Replace a bot's key (the old one stops working at once); BotRevokedError for a
        revoked bot (revoked for good: a new key would open nothing)."""
        with self.engine.begin() as conn:
            done = conn.execute(
                update(ladder_bots)
                .where(ladder_bots.c.name == name, ladder_bots.c.revoked_at.is_(None))
                .values(key_id=key_id, key_salt=salt, key_hash=digest)
            )
            if done.rowcount != 1:
                exists = conn.execute(
                    select(ladder_bots.c.id).where(ladder_bots.c.name == name)
                ).first()
                if exists is None:
                    raise StoreError(f"no bot named {name!r}")
                raise BotRevokedError(
                    f"bot {name!r} is revoked, for good: a new key would open nothing "
                    "(add the bot again under another name)"
                )

    def revoke(self, name: str) -> None:
        """Revoke a bot's key for good (its account and results stay)."""
        with self.engine.begin() as conn:
            done = conn.execute(
                update(ladder_bots)
                .where(ladder_bots.c.name == name)
                .values(revoked_at=func.coalesce(ladder_bots.c.revoked_at, time.time()))
            )
            if done.rowcount != 1:
                raise StoreError(f"no bot named {name!r}")

    def key_row(self, key_id: str) -> tuple[AccountRow, str, str] | None:
        """The account a key id names, with its salt and digest."""
        with self.engine.connect() as conn:
            row = conn.execute(select(ladder_bots).where(ladder_bots.c.key_id == key_id)).first()
            if row is None:
                return None
            return self._account(conn, row), row.key_salt, row.key_hash

    def account(self, name: str) -> AccountRow:
        """An account by name."""
        with self.engine.connect() as conn:
            row = conn.execute(select(ladder_bots).where(ladder_bots.c.name == name)).first()
            if row is None:
                raise StoreError(f"no bot named {name!r}")
            return self._account(conn, row)

    def accounts(self) -> list[AccountRow]:
        """Every account, by name."""
        with self.engine.connect() as conn:
            rows = conn.execute(select(ladder_bots).order_by(ladder_bots.c.name)).all()
            return [self._account(conn, r) for r in rows]

    def keys(self, bot_ids: Sequence[int]) -> dict[int, tuple[str, bool]]:
        """Of ``bot_ids``, each bot's key id now and whether it is revoked."""
        if not bot_ids:
            return {}
        with self.engine.connect() as conn:
            q = select(
                ladder_bots.c.id, ladder_bots.c.key_id, ladder_bots.c.revoked_at.is_not(None)
            ).where(ladder_bots.c.id.in_(list(bot_ids)))
            return {int(r[0]): (str(r[1]), bool(r[2])) for r in conn.execute(q)}

    def _account(self, conn: Connection, row: Any) -> AccountRow:
        versions = conn.execute(
            select(ladder_lines.c.version, ladder_lines.c.suspended_reason)
            .where(ladder_lines.c.bot_id == row.id)
            .order_by(ladder_lines.c.id)
        ).all()
        return AccountRow(
            id=row.id,
            name=row.name,
            owner=row.owner,
            created_at=row.created_at,
            revoked=row.revoked_at is not None,
            versions=tuple(v[0] for v in versions),
            suspended={v[0]: v[1] for v in versions if v[1] is not None},
        )

    def unsuspend(self, name: str, version: str) -> bool:
        """Lift the suspension of one version of a bot (its rating line goes on, and the
        faults before count no more towards another); False when that version was not
        suspended; BotRevokedError, nothing changed, when the bot is revoked (a lifted
        suspension would let nothing play, and said so)."""
        with self.engine.begin() as conn:
            bot = conn.execute(
                select(ladder_bots.c.id, ladder_bots.c.revoked_at).where(ladder_bots.c.name == name)
            ).first()
            if bot is None:
                raise StoreError(f"no bot named {name!r}")
            found = conn.execute(
                select(ladder_lines.c.suspended_reason).where(
                    ladder_lines.c.bot_id == bot[0], ladder_lines.c.version == version
                )
            ).first()
            if found is None:
                raise StoreError(f"bot {name!r} has no version {version!r}")
            if bot[1] is not None:
                raise BotRevokedError(
                    f"bot {name!r} is revoked, for good: unsuspend lifts a version's "
                    "suspension, not a revoke (add the bot again under another name)"
                )
            if found[0] is None:
                return False
            conn.execute(
                update(ladder_lines)
                .where(ladder_lines.c.bot_id == bot[0], ladder_lines.c.version == version)
                .values(suspended_reason=None, unsuspended_at=time.time())
            )
            return True

    # -- rating lines --------------------------------------------------------------------

    def line(self, bot_id: int, version: str, mu: float, sigma: float) -> LineRow:
        """The bot's rating line for ``version``, started at (mu, sigma) when new."""
        now = time.time()
        with self.engine.begin() as conn:
            found = conn.execute(
                select(ladder_lines.c.id).where(
                    ladder_lines.c.bot_id == bot_id, ladder_lines.c.version == version
                )
            ).first()
            if found is None and self.dialect == "postgresql":
                # Two servers seeing a new version at once: one inserts, one finds.
                conn.execute(text("SELECT pg_advisory_xact_lock(7415011)"))
                found = conn.execute(
                    select(ladder_lines.c.id).where(
                        ladder_lines.c.bot_id == bot_id, ladder_lines.c.version == version
                    )
                ).first()
            if found is None:
                conn.execute(
                    insert(ladder_lines).values(
                        bot_id=bot_id,
                        version=version,
                        first_seen=now,
                        last_seen=now,
                        mu=mu,
                        sigma=sigma,
                        games=0,
                        rank_sum=0,
                        aborted=0,
                        faults="{}",
                    )
                )
            else:
                conn.execute(
                    update(ladder_lines).where(ladder_lines.c.id == found[0]).values(last_seen=now)
                )
        lines = self.lines(bot_id=bot_id, version=version)
        return lines[0]

    def lines(
        self,
        *,
        bot_id: int | None = None,
        version: str | None = None,
        line_ids: Sequence[int] | None = None,
    ) -> list[LineRow]:
        """Rating lines (all, one bot's, or these): those with rated games best ordinal
        first, then those with none (a fresh line's ordinal, 0, is above most played ones':
        a bot could fill the top of the standings with versions it never plays)."""
        where: list[ColumnElement[bool]] = []
        if bot_id is not None:
            where.append(ladder_lines.c.bot_id == bot_id)
        if version is not None:
            where.append(ladder_lines.c.version == version)
        if line_ids is not None:
            where.append(ladder_lines.c.id.in_(list(line_ids)))
        with self.engine.connect() as conn:
            return self._lines(conn, *where)

    def _lines(self, conn: Connection, *where: ColumnElement[bool]) -> list[LineRow]:
        """The lines matching every condition of ``where``, in standings order (``lines``)."""
        q = (
            select(ladder_lines, ladder_bots)
            .join(ladder_bots, ladder_bots.c.id == ladder_lines.c.bot_id)
            .where(*where)
        )
        rows = conn.execute(q).mappings().all()
        out = [
            LineRow(
                id=r["id"],
                bot_id=r["bot_id"],
                bot=r["name"],
                owner=r["owner"],
                version=r["version"],
                mu=r["mu"],
                sigma=r["sigma"],
                games=r["games"],
                rank_sum=r["rank_sum"],
                aborted=r["aborted"],
                faults=json.loads(r["faults"]),
                last_seen=r["last_seen"],
                inactive=(
                    "revoked"
                    if r["revoked_at"] is not None
                    else f"suspended: {r[ladder_lines.c.suspended_reason]}"
                    if r[ladder_lines.c.suspended_reason] is not None
                    else ""
                ),
            )
            for r in rows
        ]
        out.sort(key=lambda x: (x.games == 0, -(x.mu - 3 * x.sigma), x.bot, x.version))
        return out

    def seat_counts(self, line_ids: Sequence[int]) -> dict[int, dict[int, tuple[int, ...]]]:
        """Games each line played at each seat (finished or running), by the match's number
        of players: ``{line_id: {players: (at seat 0, at seat 1, ...)}}``; a line or a size
        it never played is absent."""
        if not line_ids:
            return {}
        counts: dict[int, dict[int, list[int]]] = {}
        with self.engine.connect() as conn:
            q = (
                select(
                    ladder_seats.c.line_id,
                    ladder_matches.c.players,
                    ladder_seats.c.seat,
                    func.count(),
                )
                .join(ladder_matches, ladder_matches.c.id == ladder_seats.c.match_id)
                .where(ladder_seats.c.line_id.in_(list(line_ids)))
                .group_by(ladder_seats.c.line_id, ladder_matches.c.players, ladder_seats.c.seat)
            )
            for line_id, players, seat, n in conn.execute(q):
                if 0 <= seat < players:
                    by_size = counts.setdefault(int(line_id), {})
                    by_size.setdefault(int(players), [0] * int(players))[seat] = int(n)
        return {k: {n: tuple(c) for n, c in v.items()} for k, v in counts.items()}

    # -- servers and presence ------------------------------------------------------------

    def register_server(self, server: str, address: str, lease_s: float) -> None:
        """Announce this server (or renew its lease)."""
        with self.engine.begin() as conn:
            expires = self._now() + literal(float(lease_s))
            done = conn.execute(
                update(ladder_servers)
                .where(ladder_servers.c.id == server)
                .values(lease_expires=expires, address=address)
            )
            if done.rowcount == 0:
                conn.execute(
                    insert(ladder_servers).values(
                        id=server, address=address, started_at=time.time(), lease_expires=expires
                    )
                )

    def renew(
        self, server: str, bot_ids: Sequence[int], lease_s: float, line_ids: Sequence[int] = ()
    ) -> None:
        """Renew the server's lease and its bots' presence; ``line_ids`` (the versions
        connected or playing here) were seen now (``LineRow.last_seen``)."""
        with self.engine.begin() as conn:
            if line_ids:
                conn.execute(
                    update(ladder_lines)
                    .where(ladder_lines.c.id.in_(list(line_ids)))
                    .values(last_seen=time.time())
                )
            expires = self._now() + literal(float(lease_s))
            conn.execute(
                update(ladder_servers)
                .where(ladder_servers.c.id == server)
                .values(lease_expires=expires)
            )
            if bot_ids:
                conn.execute(
                    update(ladder_presence)
                    .where(
                        ladder_presence.c.server == server,
                        ladder_presence.c.bot_id.in_(list(bot_ids)),
                    )
                    .values(lease_expires=expires)
                )

    def claim_presence(
        self, bot_id: int, server: str, lease_s: float, connected_at: float | None = None
    ) -> str | None:
        """Record that ``bot_id`` is connected to ``server`` since ``connected_at`` (now when
        None; the stamp ``release_presence`` names the claim by); None when done, else the
        server it is connected to now (a live lease elsewhere)."""
        since = time.time() if connected_at is None else connected_at
        with self.engine.begin() as conn:
            expires = self._now() + literal(float(lease_s))
            taken = conn.execute(
                update(ladder_presence)
                .where(
                    ladder_presence.c.bot_id == bot_id,
                    or_(
                        ladder_presence.c.lease_expires <= self._now(),
                        ladder_presence.c.server == server,
                    ),
                )
                .values(server=server, connected_at=since, lease_expires=expires)
            )
            if taken.rowcount == 1:
                return None
            holder = conn.execute(
                select(ladder_presence.c.server).where(ladder_presence.c.bot_id == bot_id)
            ).first()
            if holder is not None:
                return str(holder[0])
            conn.execute(
                insert(ladder_presence).values(
                    bot_id=bot_id, server=server, connected_at=since, lease_expires=expires
                )
            )
            return None

    def release_presence(self, bot_id: int, server: str, connected_at: float | None = None) -> None:
        """The bot's lobby stream on ``server`` ended: the claim made at ``connected_at``
        (any claim when None). A stream that ends as the bot's next one is welcomed may have
        its release run after the next one's claim: it must not take that claim away (3 of
        200 quick reconnections left a connected bot with no presence, free to be welcomed
        by another server too)."""
        where = [ladder_presence.c.bot_id == bot_id, ladder_presence.c.server == server]
        if connected_at is not None:
            where.append(ladder_presence.c.connected_at == connected_at)
        with self.engine.begin() as conn:
            conn.execute(delete(ladder_presence).where(*where))

    def abort_orphans(self, server: str | None = None) -> list[int]:
        """Mark aborted the unfinished matches of servers whose lease has expired (and of
        ``server`` itself, at its start: they are from an earlier life); their ids."""
        with self.engine.begin() as conn:
            dead = select(ladder_servers.c.id).where(ladder_servers.c.lease_expires <= self._now())
            cond: ColumnElement[bool] = ladder_matches.c.server.in_(dead)
            if server is not None:
                cond = or_(cond, ladder_matches.c.server == server)
            ids = [
                int(r[0])
                for r in conn.execute(
                    select(ladder_matches.c.id).where(
                        ladder_matches.c.status.in_(("starting", "running")), cond
                    )
                )
            ]
            for mid in ids:
                self._abort(conn, mid, "its ladder server stopped before the end")
            conn.execute(delete(ladder_presence).where(ladder_presence.c.server.in_(dead)))
            return ids

    # -- matches -------------------------------------------------------------------------

    def new_match(
        self,
        server: str,
        ruleset: str,
        players: int,
        decision_ms: int,
        seed: int,
        line_ids: Sequence[int],
    ) -> int:
        """Store a match this server is starting; its id."""
        with self.engine.begin() as conn:
            mid = int(
                conn.execute(
                    insert(ladder_matches)
                    .values(
                        server=server,
                        ruleset=ruleset,
                        players=players,
                        decision_ms=decision_ms,
                        seed=seed,
                        status="starting",
                        created_at=time.time(),
                    )
                    .returning(ladder_matches.c.id)
                ).scalar_one()
            )
            conn.execute(
                insert(ladder_seats),
                [{"match_id": mid, "seat": s, "line_id": lid} for s, lid in enumerate(line_ids)],
            )
            return mid

    def started(self, match_id: int, server: str, arena_match_id: str) -> bool:
        """The arena created the match; False if it is no longer this server's to run."""
        with self.engine.begin() as conn:
            done = conn.execute(
                update(ladder_matches)
                .where(
                    ladder_matches.c.id == match_id,
                    ladder_matches.c.server == server,
                    ladder_matches.c.status == "starting",
                )
                .values(status="running", arena_match_id=arena_match_id)
            )
            return done.rowcount == 1

    def discard(self, match_id: int, server: str) -> bool:
        """Forget a match this server stored but never started (a bot left while it was
        being stored): it never reached the arena, so it is no one's aborted match. False
        if it is not this server's, or no longer only stored."""
        with self.engine.begin() as conn:
            mine = conn.execute(
                select(ladder_matches.c.id).where(
                    ladder_matches.c.id == match_id,
                    ladder_matches.c.server == server,
                    ladder_matches.c.status == "starting",
                    ladder_matches.c.arena_match_id.is_(None),
                )
            ).first()
            if mine is None:
                return False
            conn.execute(delete(ladder_seats).where(ladder_seats.c.match_id == match_id))
            conn.execute(delete(ladder_matches).where(ladder_matches.c.id == match_id))
            return True

    def abort(
        self, match_id: int, server: str, detail: str, record_path: str | None = None
    ) -> bool:
        """Mark this server's match aborted (not rated), with its record when the arena had
        made one; False if it was not unfinished."""
        with self.engine.begin() as conn:
            mine = conn.execute(
                select(ladder_matches.c.id).where(
                    ladder_matches.c.id == match_id,
                    ladder_matches.c.server == server,
                    ladder_matches.c.status.in_(("starting", "running")),
                )
            ).first()
            if mine is None:
                return False
            self._abort(conn, match_id, detail, record_path)
            return True

    def _abort(
        self, conn: Connection, match_id: int, detail: str, record_path: str | None = None
    ) -> None:
        done = conn.execute(
            update(ladder_matches)
            .where(
                ladder_matches.c.id == match_id,
                ladder_matches.c.status.in_(("starting", "running")),
            )
            .values(
                status="aborted",
                ending="aborted",
                detail=detail,
                finished_at=time.time(),
                record_path=record_path,
            )
        )
        if done.rowcount == 1:
            lines = select(ladder_seats.c.line_id).where(ladder_seats.c.match_id == match_id)
            conn.execute(
                update(ladder_lines)
                .where(ladder_lines.c.id.in_(lines))
                .values(aborted=ladder_lines.c.aborted + 1)
            )

    def finish(
        self,
        match_id: int,
        server: str,
        seats: Sequence[StoredSeat],
        ending: str,
        record_path: str,
        rater: Rater,
        *,
        suspend_after: int,
        window: int,
        faults: frozenset[str],
    ) -> list[RatedSeat] | None:
        """Store a match's result and, when it is ``complete``, rate it: once. None when the
        match is not this server's unfinished match (stored already, or aborted as orphaned).

        A seat whose version has ``suspend_after`` or more faults among its last ``window``
        matches suspends that version (until the organiser lifts it)."""
        with self.engine.begin() as conn:
            if self.dialect == "postgresql":
                conn.execute(text(f"SELECT pg_advisory_xact_lock({RATING_LOCK})"))
            # A write first: on SQLite it takes the database's write lock before anything is
            # read, so two results never read the same ratings or the same last rated_seq.
            mine = conn.execute(
                update(ladder_matches)
                .where(
                    ladder_matches.c.id == match_id,
                    ladder_matches.c.server == server,
                    ladder_matches.c.status == "running",
                )
                .values(status="running")
            )
            if mine.rowcount != 1:
                return None
            seat_lines = {
                int(s): int(lid)
                for s, lid in conn.execute(
                    select(ladder_seats.c.seat, ladder_seats.c.line_id).where(
                        ladder_seats.c.match_id == match_id
                    )
                )
            }
            order = sorted(seats, key=lambda s: s.seat)
            line_ids = [seat_lines[s.seat] for s in order]
            current = {
                r.id: r
                for r in conn.execute(
                    select(ladder_lines).where(ladder_lines.c.id.in_(line_ids))
                ).all()
            }
            rated = ending == "complete"
            after: list[tuple[float, float]] = [
                (current[lid].mu, current[lid].sigma) for lid in line_ids
            ]
            seq: int | None = None
            if rated:
                after = rater(after, [s.rank for s in order])
                seq = (
                    int(conn.execute(select(func.max(ladder_matches.c.rated_seq))).scalar() or 0)
                    + 1
                )
            conn.execute(
                update(ladder_matches)
                .where(ladder_matches.c.id == match_id)
                .values(
                    status="finished",
                    ending=ending,
                    record_path=record_path,
                    finished_at=time.time(),
                    rated_seq=seq,
                )
            )
            out: list[RatedSeat] = []
            for s, lid, (mu, sigma) in zip(order, line_ids, after, strict=True):
                conn.execute(
                    update(ladder_seats)
                    .where(ladder_seats.c.match_id == match_id, ladder_seats.c.seat == s.seat)
                    .values(
                        total=s.total,
                        rank=s.rank,
                        termination=s.termination,
                        strikes=s.strikes,
                        detail=s.detail,
                        mu_after=mu if rated else None,
                        sigma_after=sigma if rated else None,
                    )
                )
                line = current[lid]
                counts: dict[str, int] = json.loads(line.faults)
                if s.termination in faults:
                    counts[s.termination] = counts.get(s.termination, 0) + 1
                values: dict[str, Any] = {
                    "faults": json.dumps(counts, sort_keys=True),
                    "last_seen": time.time(),
                }
                games = line.games
                if rated:
                    games += 1
                    values |= {"mu": mu, "sigma": sigma, "games": games}
                    values["rank_sum"] = line.rank_sum + s.rank
                else:
                    values["aborted"] = line.aborted + 1
                conn.execute(update(ladder_lines).where(ladder_lines.c.id == lid).values(values))
                out.append(RatedSeat(s.seat, lid, mu, sigma, games))
                if s.termination in faults and suspend_after > 0:
                    self._maybe_suspend(conn, line, suspend_after, window, faults)
            return out

    def _maybe_suspend(
        self, conn: Connection, line: Any, suspend_after: int, window: int, faults: frozenset[str]
    ) -> None:
        # A voided match was played: its faults happened, and count.
        counted = [
            ladder_seats.c.line_id == line.id,
            ladder_matches.c.status.in_(("finished", "voided")),
        ]
        if line.unsuspended_at is not None:
            # A lifted suspension starts the count afresh: with the faults before it still
            # counted, the next fault suspended the version again.
            counted.append(ladder_matches.c.finished_at > line.unsuspended_at)
        recent = conn.execute(
            select(ladder_seats.c.termination)
            .join(ladder_matches, ladder_matches.c.id == ladder_seats.c.match_id)
            .where(*counted)
            .order_by(ladder_matches.c.finished_at.desc(), ladder_matches.c.id.desc())
            .limit(window)
        ).all()
        charged = [t for (t,) in recent if t in faults]
        n = len(charged)
        if n >= suspend_after:
            conn.execute(
                update(ladder_lines)
                .where(ladder_lines.c.id == line.id)
                .values(
                    suspended_reason=(
                        f"{n} faults in the last {len(recent)} matches of version "
                        f"{line.version!r}: {_faults_named(charged)}; connect a new version"
                    )
                )
            )

    def void(
        self,
        name: str,
        version: str | None,
        reason: str,
        replay: Replayer,
        initial: tuple[float, float],
    ) -> Voided:
        """Void every rated match a bot played (as ``version``, or as any version when
        None): each is kept, ``voided`` with ``detail`` "voided: REASON", and no longer
        rated; then every line's rating (and each rated seat's rating after) is replayed
        from ``initial`` over the rated matches left, in their rated order. One transaction,
        serialised with ``finish`` (the same lock), so a result stored meanwhile is rated
        after it, from the replayed ratings. StoreError for an unknown bot or version."""
        with self.engine.begin() as conn:
            if self.dialect == "postgresql":
                conn.execute(text(f"SELECT pg_advisory_xact_lock({RATING_LOCK})"))
            # A write first, as in finish: SQLite's write lock before anything is read.
            named = conn.execute(
                update(ladder_bots)
                .where(ladder_bots.c.name == name)
                .values(name=ladder_bots.c.name)
            )
            if named.rowcount != 1:
                raise StoreError(f"no bot named {name!r}")
            bot_id = select(ladder_bots.c.id).where(ladder_bots.c.name == name).scalar_subquery()
            q = select(ladder_lines.c.id).where(ladder_lines.c.bot_id == bot_id)
            if version is not None:
                q = q.where(ladder_lines.c.version == version)
            line_ids = [int(r[0]) for r in conn.execute(q)]
            if version is not None and not line_ids:
                raise StoreError(f"bot {name!r} has no version {version!r}")
            voided = [
                int(r[0])
                for r in conn.execute(
                    select(ladder_matches.c.id)
                    .where(
                        ladder_matches.c.rated_seq.is_not(None),
                        ladder_matches.c.id.in_(
                            select(ladder_seats.c.match_id).where(
                                ladder_seats.c.line_id.in_(line_ids)
                            )
                        ),
                    )
                    .order_by(ladder_matches.c.id)
                )
            ]
            if voided:
                conn.execute(
                    update(ladder_matches)
                    .where(ladder_matches.c.id.in_(voided))
                    .values(status="voided", rated_seq=None, detail=f"voided: {reason}")
                )
                conn.execute(
                    update(ladder_seats)
                    .where(ladder_seats.c.match_id.in_(voided))
                    .values(mu_after=None, sigma_after=None)
                )
            return Voided(len(voided), self._rerate(conn, replay, initial))

    def _rerate(
        self, conn: Connection, replay: Replayer, initial: tuple[float, float]
    ) -> tuple[tuple[str, str, tuple[float, float, int], tuple[float, float, int]], ...]:
        """Replay the rated matches into the seats' ratings after and the lines' ratings;
        the lines whose rating changed."""
        rows = conn.execute(_rated_seats(ladder_seats.c.mu_after, ladder_seats.c.sigma_after)).all()
        results: list[tuple[int, list[tuple[int, int]]]] = []
        seats: list[list[Any]] = []
        for r in rows:
            if not results or results[-1][0] != r.id:
                results.append((int(r.id), []))
                seats.append([])
            results[-1][1].append((int(r.line_id), int(r.rank)))
            seats[-1].append(r)
        state: dict[int, tuple[float, float, int, int]] = {}  # mu, sigma, games, rank sum
        moved: list[dict[str, Any]] = []
        for played, after in zip(seats, replay(results), strict=True):
            for r, (mu, sigma) in zip(played, after, strict=True):
                _, _, games, rank_sum = state.get(r.line_id, (0.0, 0.0, 0, 0))
                state[r.line_id] = (mu, sigma, games + 1, rank_sum + r.rank)
                # Only the seats whose rating moved are written: those rated before the first
                # voided match keep theirs, and a long ladder's rewrite stays short.
                if (r.mu_after, r.sigma_after) != (mu, sigma):
                    moved.append({"m": r.id, "s": r.seat, "mu": mu, "sigma": sigma})
        if moved:
            conn.execute(
                update(ladder_seats)
                .where(
                    ladder_seats.c.match_id == bindparam("m"), ladder_seats.c.seat == bindparam("s")
                )
                .values(mu_after=bindparam("mu"), sigma_after=bindparam("sigma")),
                moved,
            )
        changed = []
        lines = conn.execute(
            select(ladder_lines, ladder_bots.c.name)
            .join(ladder_bots, ladder_bots.c.id == ladder_lines.c.bot_id)
            .order_by(ladder_bots.c.name, ladder_lines.c.version)
        ).all()
        for x in lines:
            mu, sigma, games, rank_sum = state.get(x.id, (*initial, 0, 0))
            if (x.mu, x.sigma, x.games, x.rank_sum) == (mu, sigma, games, rank_sum):
                continue
            conn.execute(
                update(ladder_lines)
                .where(ladder_lines.c.id == x.id)
                .values(mu=mu, sigma=sigma, games=games, rank_sum=rank_sum)
            )
            changed.append((x.name, x.version, (x.mu, x.sigma, x.games), (mu, sigma, games)))
        return tuple(changed)

    def matches(
        self,
        *,
        line_id: int | None = None,
        rated_only: bool = False,
        limit: int | None = None,
        newest_first: bool = False,
    ) -> list[MatchRow]:
        """Matches with their seats (by id, or newest first)."""
        with self.snapshot() as conn:  # the matches and their seats as of one moment
            return self._matches(
                conn,
                line_id=line_id,
                rated_only=rated_only,
                limit=limit,
                newest_first=newest_first,
            )

    def lines_and_matches(self) -> tuple[list[LineRow], list[MatchRow]]:
        """``lines()`` and ``matches()`` read in one snapshot (``ladder export`` of a ladder
        that plays: read apart, the standings could count a match the list lacked)."""
        with self.snapshot() as conn:
            return self._lines(conn), self._matches(conn)

    def _matches(
        self,
        conn: Connection,
        *,
        line_id: int | None = None,
        rated_only: bool = False,
        limit: int | None = None,
        newest_first: bool = False,
    ) -> list[MatchRow]:
        q = select(ladder_matches)
        if line_id is not None:
            q = q.where(
                ladder_matches.c.id.in_(
                    select(ladder_seats.c.match_id).where(ladder_seats.c.line_id == line_id)
                )
            )
        if rated_only:
            q = q.where(ladder_matches.c.rated_seq.is_not(None)).order_by(
                ladder_matches.c.rated_seq
            )
        else:
            q = q.order_by(ladder_matches.c.id.desc() if newest_first else ladder_matches.c.id)
        if limit is not None:
            q = q.limit(limit)
        rows = conn.execute(q).all()
        ids = [r.id for r in rows]
        seats: dict[int, list[Any]] = {i: [] for i in ids}
        if ids:
            sq = (
                select(
                    ladder_seats.c.match_id,
                    ladder_seats.c.seat,
                    ladder_bots.c.name,
                    ladder_lines.c.version,
                    ladder_seats.c.total,
                    ladder_seats.c.rank,
                    ladder_seats.c.termination,
                    ladder_seats.c.mu_after,
                )
                .join(ladder_lines, ladder_lines.c.id == ladder_seats.c.line_id)
                .join(ladder_bots, ladder_bots.c.id == ladder_lines.c.bot_id)
                .where(ladder_seats.c.match_id.in_(ids))
                .order_by(ladder_seats.c.match_id, ladder_seats.c.seat)
            )
            for r in conn.execute(sq):
                seats[r[0]].append(tuple(r[1:]))
        return [
            MatchRow(
                id=r.id,
                server=r.server,
                ruleset=r.ruleset,
                players=r.players,
                decision_ms=r.decision_ms,
                seed=r.seed,
                status=r.status,
                arena_match_id=r.arena_match_id,
                record_path=r.record_path,
                ending=r.ending,
                created_at=r.created_at,
                finished_at=r.finished_at,
                rated_seq=r.rated_seq,
                detail=r.detail or "",
                seats=tuple(seats[r.id]),
            )
            for r in rows
        ]

    def rated_results(self) -> list[tuple[int, list[tuple[int, int]]]]:
        """Every rated match in rating order: (match id, [(line id, counted rank)] by seat)."""
        with self.engine.connect() as conn:
            return self._rated_results(conn)

    def rated_state(self) -> tuple[list[tuple[int, list[tuple[int, int]]]], list[LineRow]]:
        """``rated_results()`` and ``lines()`` read in one snapshot: the lines' ratings are
        those the results led to, even while a ladder stores more (read apart, a result
        stored between the reads looked like a wrong rating)."""
        with self.snapshot() as conn:
            return self._rated_results(conn), self._lines(conn)

    def _rated_results(self, conn: Connection) -> list[tuple[int, list[tuple[int, int]]]]:
        out: list[tuple[int, list[tuple[int, int]]]] = []
        for mid, _seat, lid, rank in conn.execute(_rated_seats()):
            if not out or out[-1][0] != mid:
                out.append((int(mid), []))
            out[-1][1].append((int(lid), int(rank)))
        return out

    def history(self, line_id: int) -> list[tuple[int, float, float, float]]:
        """A line's rating after each of its rated matches: (match id, finished at, mu, sigma)."""
        with self.engine.connect() as conn:
            q = (
                select(
                    ladder_matches.c.id,
                    ladder_matches.c.finished_at,
                    ladder_seats.c.mu_after,
                    ladder_seats.c.sigma_after,
                )
                .join(ladder_seats, ladder_seats.c.match_id == ladder_matches.c.id)
                .where(
                    and_(
                        ladder_seats.c.line_id == line_id,
                        ladder_matches.c.rated_seq.is_not(None),
                    )
                )
                .order_by(ladder_matches.c.rated_seq)
            )
            return [(int(a), float(b), float(c), float(d)) for a, b, c, d in conn.execute(q)]

    def counts(self) -> dict[str, int]:
        """Matches by status."""
        with self.engine.connect() as conn:
            q = select(ladder_matches.c.status, func.count()).group_by(ladder_matches.c.status)
            return {str(s): int(n) for s, n in conn.execute(q)}


#: A fault (a seat's termination), one and several, as a suspension names it.
_FAULT_NAMES = {
    "timeout": ("timeout", "timeouts"),
    "illegal_action": ("illegal action", "illegal actions"),
    "crashed": ("crash", "crashes"),
    "disconnected": ("disconnection", "disconnections"),
    "stalled": ("stall", "stalls"),
    "no_show": ("no-show", "no-shows"),
}


def _faults_named(terminations: Sequence[str]) -> str:
    """``["crashed", "timeout", "crashed"]`` as "2 crashes, 1 timeout": most first."""
    counts: dict[str, int] = {}
    for t in terminations:
        counts[t] = counts.get(t, 0) + 1
    ordered = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return ", ".join(f"{k} {_FAULT_NAMES.get(t, (t, t))[k != 1]}" for t, k in ordered)


def _rated_seats(*extra: ColumnElement[Any]) -> Select[Any]:
    """Every seat of every rated match, in rating order: match id, seat, line id, rank, and
    ``extra`` columns of the seat."""
    return (
        select(
            ladder_matches.c.id,
            ladder_seats.c.seat,
            ladder_seats.c.line_id,
            ladder_seats.c.rank,
            *extra,
        )
        .join(ladder_seats, ladder_seats.c.match_id == ladder_matches.c.id)
        .where(ladder_matches.c.rated_seq.is_not(None))
        .order_by(ladder_matches.c.rated_seq, ladder_seats.c.seat)
    )
