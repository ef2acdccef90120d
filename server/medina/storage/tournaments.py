"""Tournaments in a database: the schedule, leases on games, results, rating history.

Claiming rests on the database: one ``UPDATE ... WHERE id = (SELECT ... FOR UPDATE SKIP
LOCKED)`` statement (SQLite runs every write alone, so the same statement is atomic there),
and a result is stored only by the holder of the game's current lease, in the same
transaction that marks the game done, so no game is ever counted twice. Times in leases are
the database's clock, so machines with skewed clocks share one tournament safely."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    ColumnElement,
    and_,
    func,
    insert,
    literal,
    select,
    text,
    update,
)

from .database import Database, StoreError, database_url, owner_is_dead_here, worker_id
from .schema import bots, games, incidents, seat_results, tournaments

__all__ = [
    "Claim",
    "NewGame",
    "SeatRow",
    "StoreError",
    "TournamentChanged",
    "TournamentRow",
    "TournamentStore",
    "database_url",
    "owner_is_dead_here",
    "worker_id",
]


@dataclass(frozen=True, slots=True)
class NewGame:
    """A scheduled game to store."""

    number: int
    block: int
    ruleset: str
    players: int
    seed: int
    rotation: int
    seats: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Claim:
    """A game leased to one worker: only this claim (owner and attempt) can store its result."""

    game_id: int
    tournament_id: int
    tournament: str
    number: int
    block: int
    ruleset: str
    players: int
    seed: int
    seats: tuple[str, ...]
    owner: str
    attempt: int


@dataclass(frozen=True, slots=True)
class SeatRow:
    """One seat's result, as stored (``finish``) and as read back (``GameRow.seats``)."""

    seat: int
    bot: str
    total: int
    rank: int
    termination: str
    strikes: int
    detail: str


@dataclass(frozen=True, slots=True)
class GameRow:
    """A finished game with its seats in seat order (``results``). ``number`` is the
    database's, counted from 0; ``ending`` is ``complete`` or ``abandoned``. A game is done
    only through ``finish``, which stores its match, record and worker with it."""

    number: int
    block: int
    ruleset: str
    players: int
    seed: int
    ending: str
    match_id: str
    record_path: str
    played_by: str
    attempts: int
    seats: tuple[SeatRow, ...]


@dataclass(frozen=True, slots=True)
class ScheduledGame:
    """A game of the schedule in any status (``schedule``): ``pending``, ``running`` (leased
    to ``lease_owner`` until ``lease_expires``), ``done`` or ``cancelled``."""

    id: int
    tournament_id: int
    number: int
    block: int
    ruleset: str
    players: int
    seed: int
    rotation: int
    seats: tuple[str, ...]
    status: str
    lease_owner: str | None
    lease_expires: float | None
    attempts: int
    match_id: str | None
    record_path: str | None
    ending: str | None
    played_by: str | None
    started_at: float | None
    finished_at: float | None


@dataclass(frozen=True, slots=True)
class IncidentRow:
    """A note on a game's attempt (``incidents``): an interruption, a lease taken over."""

    number: int
    at: float
    worker: str
    what: str


@dataclass(frozen=True, slots=True)
class TournamentRow:
    """A tournament as stored."""

    id: int
    name: str
    digest: str
    config: str
    status: str
    stop_block: int | None
    created_at: float


class TournamentChanged(StoreError):
    """A tournament of that name was started from a different file: ``config`` is the one it
    was started from (``what_differs`` says what differs, the advice what to do)."""

    def __init__(
        self, name: str, where: str, config: str, what_differs: str = "", advice: str = ""
    ) -> None:
        differs = f" (this one differs in {what_differs})" if what_differs else ""
        advice = advice or "give this one another name, or another database"
        super().__init__(
            f"tournament {name!r} in {where} was started from a different file{differs}; {advice}"
        )
        self.name, self.where, self.config = name, where, config


class TournamentStore(Database):
    """The tournament tables of one database (created or migrated on open)."""

    # -- tournaments -------------------------------------------------------------------

    def ensure_tournament(
        self,
        name: str,
        digest: str,
        config: str,
        bot_specs: Sequence[tuple[str, Sequence[str], str | None, Sequence[tuple[str, str]]]],
        schedule: Iterable[NewGame],
    ) -> tuple[TournamentRow, bool]:
        """The tournament ``name``, created with its bots and schedule when new (True) or
        found as stored (False). StoreError when it was started from a different file."""
        with self.engine.begin() as conn:
            if self.dialect == "postgresql":
                conn.execute(text("SELECT pg_advisory_xact_lock(7415003)"))
            found = self._tournament(conn, name)
            if found is not None:
                if found.digest != digest:
                    raise TournamentChanged(name, self.safe_url, found.config)
                return found, False
            tid = conn.execute(
                insert(tournaments)
                .values(
                    name=name,
                    digest=digest,
                    config=config,
                    created_at=time.time(),
                    status="running",
                )
                .returning(tournaments.c.id)
            ).scalar_one()
            conn.execute(
                insert(bots),
                [
                    {
                        "tournament_id": tid,
                        "name": n,
                        "command": json.dumps(list(cmd)),
                        "cwd": cwd,
                        "env": json.dumps(dict(env)),
                    }
                    for n, cmd, cwd, env in bot_specs
                ],
            )
            rows = [
                {
                    "tournament_id": tid,
                    "number": g.number,
                    "block": g.block,
                    "ruleset": g.ruleset,
                    "players": g.players,
                    "seed": g.seed,
                    "rotation": g.rotation,
                    "seats": json.dumps(list(g.seats)),
                    "status": "pending",
                    "attempts": 0,
                }
                for g in schedule
            ]
            for i in range(0, len(rows), 1000):
                conn.execute(insert(games), rows[i : i + 1000])
            created = self._tournament(conn, name)
            assert created is not None
            return created, True

    def _tournament(self, conn: Any, name: str) -> TournamentRow | None:
        row = conn.execute(select(tournaments).where(tournaments.c.name == name)).first()
        return None if row is None else _trow(row)

    def tournament(self, name: str | None = None) -> TournamentRow:
        """A tournament by name, or the only/newest one when ``name`` is None."""
        with self.engine.connect() as conn:
            if name is not None:
                found = self._tournament(conn, name)
                if found is None:
                    known = ", ".join(t.name for t in self.tournaments()) or "none"
                    raise StoreError(f"no tournament {name!r} in {self.safe_url} (known: {known})")
                return found
            row = conn.execute(
                select(tournaments).order_by(tournaments.c.created_at.desc()).limit(1)
            ).first()
            if row is None:
                raise StoreError(f"no tournament in {self.safe_url}")
            return _trow(row)

    def tournaments(self) -> list[TournamentRow]:
        """Every tournament, oldest first."""
        with self.engine.connect() as conn:
            return [_trow(r) for r in conn.execute(select(tournaments).order_by(tournaments.c.id))]

    def bot_names(self, tid: int) -> list[str]:
        """The tournament's bots in file order."""
        with self.engine.connect() as conn:
            return [
                r[0]
                for r in conn.execute(
                    select(bots.c.name).where(bots.c.tournament_id == tid).order_by(bots.c.id)
                )
            ]

    # -- leases ------------------------------------------------------------------------

    def reclaim_dead_local(self, tid: int | None = None) -> int:
        """Give back games leased by processes of this host that are gone (a runner killed
        with SIGKILL): they are replayed from scratch at once rather than after the lease."""
        with self.engine.begin() as conn:
            q = select(games.c.id, games.c.lease_owner).where(games.c.status == "running")
            if tid is not None:
                q = q.where(games.c.tournament_id == tid)
            dead = [(gid, owner) for gid, owner in conn.execute(q) if owner_is_dead_here(owner)]
            for gid, owner in dead:
                conn.execute(
                    update(games)
                    .where(and_(games.c.id == gid, games.c.lease_owner == owner))
                    .values(status="pending", lease_owner=None, lease_expires=None)
                )
                conn.execute(
                    insert(incidents).values(
                        game_id=gid,
                        at=time.time(),
                        worker=owner,
                        what="interrupted: its runner is gone; replayed from scratch",
                        flag=False,
                    )
                )
            return len(dead)

    def reclaim_expired(self, tid: int | None = None) -> int:
        """Give back the games whose lease ran out (their worker died on another machine,
        was paused, or lost the database), each with an incident naming that worker; how
        many. Only one caller takes each game back: the update is conditional on the lease
        it saw (owner and attempt)."""
        with self.engine.begin() as conn:
            q = select(games.c.id, games.c.lease_owner, games.c.attempts).where(
                games.c.status == "running", games.c.lease_expires <= self._now()
            )
            if tid is not None:
                q = q.where(games.c.tournament_id == tid)
            taken = 0
            for gid, owner, attempts in conn.execute(q).all():
                done = conn.execute(
                    update(games)
                    .where(
                        games.c.id == gid,
                        games.c.status == "running",
                        games.c.lease_owner == owner,
                        games.c.attempts == attempts,
                        games.c.lease_expires <= self._now(),
                    )
                    .values(status="pending", lease_owner=None, lease_expires=None)
                )
                if done.rowcount != 1:
                    continue
                taken += 1
                conn.execute(
                    insert(incidents).values(
                        game_id=gid,
                        at=time.time(),
                        worker=owner,
                        what="interrupted: its worker's lease ran out (the worker died, was "
                        "paused or lost the database); replayed from scratch",
                        flag=False,
                    )
                )
            return taken

    def claim(self, owner: str, lease_s: float, tid: int | None = None) -> Claim | None:
        """Lease the next game to play, in game order; None when there is none. Games whose
        lease ran out are given back first (``reclaim_expired``, with an incident each).
        ``tid`` None: any running tournament."""
        self.reclaim_expired(tid)
        now = self._now()
        active = select(tournaments.c.id).where(tournaments.c.status == "running")
        if tid is not None:
            active = active.where(tournaments.c.id == tid)
        pick = (
            select(games.c.id)
            .where(
                games.c.tournament_id.in_(active),
                games.c.status == "pending",
            )
            .order_by(games.c.tournament_id, games.c.number)
            .limit(1)
        )
        if self.dialect == "postgresql":
            pick = pick.with_for_update(skip_locked=True)
        stmt = (
            update(games)
            .where(games.c.id == pick.scalar_subquery())
            .values(
                status="running",
                lease_owner=owner,
                lease_expires=now + literal(float(lease_s)),
                attempts=games.c.attempts + 1,
                started_at=now,
            )
            .returning(
                games.c.id,
                games.c.tournament_id,
                games.c.number,
                games.c.block,
                games.c.ruleset,
                games.c.players,
                games.c.seed,
                games.c.seats,
                games.c.attempts,
            )
        )
        with self.engine.begin() as conn:
            row = conn.execute(stmt).first()
            if row is None:
                return None
            name = conn.execute(
                select(tournaments.c.name).where(tournaments.c.id == row.tournament_id)
            ).scalar_one()
        return Claim(
            game_id=row.id,
            tournament_id=row.tournament_id,
            tournament=name,
            number=row.number,
            block=row.block,
            ruleset=row.ruleset,
            players=row.players,
            seed=row.seed,
            seats=tuple(json.loads(row.seats)),
            owner=owner,
            attempt=row.attempts,
        )

    def _held(self, claim: Claim) -> ColumnElement[bool]:
        return and_(
            games.c.id == claim.game_id,
            games.c.status == "running",
            games.c.lease_owner == claim.owner,
            games.c.attempts == claim.attempt,
        )

    def renew(self, claim: Claim, lease_s: float) -> bool:
        """Extend the lease; False when it was lost (another worker has the game now)."""
        with self.engine.begin() as conn:
            done = conn.execute(
                update(games)
                .where(self._held(claim))
                .values(lease_expires=self._now() + literal(float(lease_s)))
            )
            return done.rowcount == 1

    def release(self, claim: Claim, why: str) -> bool:
        """Give an unfinished game back (it will be replayed from scratch)."""
        with self.engine.begin() as conn:
            done = conn.execute(
                update(games)
                .where(self._held(claim))
                .values(status="pending", lease_owner=None, lease_expires=None)
            )
            if done.rowcount == 1:
                conn.execute(
                    insert(incidents).values(
                        game_id=claim.game_id,
                        at=time.time(),
                        worker=claim.owner,
                        what=why,
                        flag=False,
                    )
                )
            return done.rowcount == 1

    def finish(
        self,
        claim: Claim,
        *,
        match_id: str,
        record_path: str,
        ending: str,
        seats: Sequence[SeatRow],
    ) -> bool:
        """Store a game's result, if ``claim`` still holds its lease (False otherwise, and
        nothing is stored)."""
        with self.engine.begin() as conn:
            done = conn.execute(
                update(games)
                .where(self._held(claim))
                .values(
                    status="done",
                    match_id=match_id,
                    record_path=record_path,
                    ending=ending,
                    played_by=claim.owner,
                    finished_at=self._now(),
                    lease_expires=None,
                )
            )
            if done.rowcount != 1:
                return False
            ids = dict(
                conn.execute(
                    select(bots.c.name, bots.c.id).where(
                        bots.c.tournament_id == claim.tournament_id
                    )
                ).all()
            )
            conn.execute(
                insert(seat_results),
                [
                    {
                        "game_id": claim.game_id,
                        "seat": s.seat,
                        "bot_id": ids[s.bot],
                        "total": s.total,
                        "rank": s.rank,
                        "termination": s.termination,
                        "strikes": s.strikes,
                        "detail": s.detail,
                    }
                    for s in seats
                ],
            )
            return True

    # -- reading -----------------------------------------------------------------------

    def counts(self, tid: int) -> dict[str, int]:
        """Games by status."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(games.c.status, func.count())
                .where(games.c.tournament_id == tid)
                .group_by(games.c.status)
            ).all()
        return {str(s): int(n) for s, n in rows}

    def block_sizes(self, tid: int) -> dict[int, int]:
        """Games per block."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(games.c.block, func.count())
                .where(games.c.tournament_id == tid)
                .group_by(games.c.block)
            ).all()
        return {int(b): int(n) for b, n in rows}

    def results(self, tid: int) -> list[GameRow]:
        """Every finished game with its seats, in game order."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(
                    games.c.id,
                    games.c.number,
                    games.c.block,
                    games.c.ruleset,
                    games.c.players,
                    games.c.seed,
                    games.c.ending,
                    games.c.match_id,
                    games.c.record_path,
                    games.c.played_by,
                    games.c.attempts,
                    seat_results.c.seat,
                    bots.c.name,
                    seat_results.c.total,
                    seat_results.c.rank,
                    seat_results.c.termination,
                    seat_results.c.strikes,
                    seat_results.c.detail,
                )
                .join(seat_results, seat_results.c.game_id == games.c.id)
                .join(bots, bots.c.id == seat_results.c.bot_id)
                .where(games.c.tournament_id == tid, games.c.status == "done")
                .order_by(games.c.number, seat_results.c.seat)
            ).all()
        by_number: dict[int, list[Any]] = {}
        for r in rows:
            by_number.setdefault(r.number, []).append(r)
        return [
            GameRow(
                number=g.number,
                block=g.block,
                ruleset=g.ruleset,
                players=g.players,
                seed=g.seed,
                ending=g.ending,
                match_id=g.match_id,
                record_path=g.record_path,
                played_by=g.played_by,
                attempts=g.attempts,
                seats=tuple(
                    SeatRow(
                        seat=r.seat,
                        bot=r.name,
                        total=r.total,
                        rank=r.rank,
                        termination=r.termination,
                        strikes=r.strikes,
                        detail=r.detail,
                    )
                    for r in seats
                ),
            )
            for seats in by_number.values()
            for g in seats[:1]
        ]

    def schedule(self, tid: int) -> list[ScheduledGame]:
        """Every game of the tournament with its status, in game order."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(games).where(games.c.tournament_id == tid).order_by(games.c.number)
            ).all()
        return [
            ScheduledGame(**(dict(r._mapping) | {"seats": tuple(json.loads(r.seats))}))
            for r in rows
        ]

    def stop_early(self, tid: int, block: int, status: str = "separated") -> bool:
        """The tournament is decided after ``block`` (the standings separated; an SPRT's
        verdict, ``status`` ``sprt-h1`` or ``sprt-h0``): later games are cancelled (games of
        later blocks already played are kept but not counted). True for the caller that made
        the stop."""
        with self.engine.begin() as conn:
            done = conn.execute(
                update(tournaments)
                .where(tournaments.c.id == tid, tournaments.c.status == "running")
                .values(status=status, stop_block=block, finished_at=time.time())
            )
            if done.rowcount != 1:
                return False
            conn.execute(
                update(games)
                .where(
                    games.c.tournament_id == tid,
                    games.c.block > block,
                    games.c.status == "pending",
                )
                .values(status="cancelled")
            )
            return True

    def finish_if_done(self, tid: int) -> bool:
        """Mark the tournament finished when no game is left to play; True when it is over."""
        with self.engine.begin() as conn:
            left = conn.execute(
                select(func.count())
                .select_from(games)
                .where(games.c.tournament_id == tid, games.c.status.in_(("pending", "running")))
            ).scalar_one()
            if left:
                return False
            conn.execute(
                update(tournaments)
                .where(tournaments.c.id == tid, tournaments.c.status == "running")
                .values(status="finished", finished_at=time.time())
            )
            return True

    def incidents(self, tid: int) -> list[IncidentRow]:
        """Interrupted attempts and other notes, oldest first."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(games.c.number, incidents.c.at, incidents.c.worker, incidents.c.what)
                .join(games, games.c.id == incidents.c.game_id)
                .where(games.c.tournament_id == tid)
                .order_by(incidents.c.id)
            ).all()
        return [IncidentRow(r.number, r.at, r.worker, r.what) for r in rows]

    def close(self) -> None:
        """Release the connection pool."""
        self.engine.dispose()


def _trow(row: Any) -> TournamentRow:
    return TournamentRow(
        id=row.id,
        name=row.name,
        digest=row.digest,
        config=row.config,
        status=row.status,
        stop_block=row.stop_block,
        created_at=row.created_at,
    )
