"""A ladder server's heart: the connected bots (sessions), the matchmaking loop, and each
match from its creation on the arena to its rated result.

The ladder drives its arena as any organiser does, through ``MatchService`` and
``SpectatorService`` over gRPC (the arena may be in this process or elsewhere), and tells
each bot, on its lobby stream, where to open the match's ordinary Play stream. Database
calls run in a thread: the arena may share this event loop, and its clocks must not wait
for a disk.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import math
import random
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

import grpc
from sqlalchemy.exc import OperationalError

from medina.boundary.bucket import TokenBucket
from medina.boundary.terminal import NAME_LIMIT, name_fault, printable
from medina.referee.config import LIMIT_MS, MatchSettings, TimeControl
from medina.referee.outcome import MatchOutcome
from medina.rpc.common.auth import bearer_metadata
from medina.rpc.common.status import Reason, Refusal
from medina.rpc.organiser import create_match
from medina.storage.database import one_line
from medina.storage.ladder import AccountRow, LadderStore, RatedSeat, StoredSeat
from medina.tournament.standings import FAULTS, SeatResult, counted_ranks
from medina.v1 import admin_pb2, admin_pb2_grpc, ladder_pb2, match_pb2
from medina.wire import convert
from medina.wire import ladder as wire_ladder
from medina.wire import matches as wire_matches

from . import accounts, ratings
from .arena_refusals import ArenaRefusals
from .matchmaker import Candidate, MatchPlan, Offer, accepts, due_offers, plan
from .missed import MissedEnds
from .outage import STORAGE_RETRY_MS, Backoff, Outage, StorageDown
from .session import Session

__all__ = ["Ladder", "LadderConfig", "Refusal"]

log = logging.getLogger("medina.ladder")

#: The longest wait between matchmaking rounds while matches fail in the arena.
ARENA_RETRY_MAX_S = 30.0

#: How much of ``LobbyHello.client`` the log shows.
CLIENT_SHOWN = 100

T = TypeVar("T")


@dataclass(frozen=True)
class LadderConfig:
    """How a ladder forms matches and treats bots (docs/ladder.md)."""

    offers: tuple[Offer, ...] = (
        Offer("medina-v2", 2, 1000, 1.0),
        Offer("medina-v2", 4, 1000, 1.0),
    )
    #: Chance that a match's opponents are drawn at random rather than nearest in rating.
    exploration: float = 0.2
    #: Whether one owner's bots may meet.
    same_owner: bool = False
    #: Matches at once per bot (a bot may ask for fewer).
    max_matches_per_bot: int = 2
    #: Matches at once per owner (None: no cap).
    max_matches_per_owner: int | None = None
    #: A version with this many faults among its last ``suspend_window`` matches is
    #: suspended (0: never).
    suspend_after: int = 3
    suspend_window: int = 10
    heartbeat_interval_s: float = 10.0
    heartbeat_timeout_s: float = 30.0
    #: Server and presence leases: a server silent this long loses its unfinished matches.
    lease_s: float = 30.0
    #: Seconds between matchmaking rounds.
    tick_s: float = 0.25
    #: Seconds an idle bot waits for the offer that is due before others will do (those
    #: not ahead of their share, ``matchmaker.due_offers``).
    patience_s: float = 3.0
    #: Seconds bots of one match, freed by its end, wait for others to be matched with
    #: before they meet again (``matchmaker.plan``'s ``rematch_after_s``): four ticks.
    rematch_after_s: float = 1.0
    #: Seconds a lobby stream has to send its LobbyHello.
    hello_timeout_s: float = 10.0
    #: Lobby streams one bot may open a minute on this server (as many at once): more are
    #: refused ``JOINING_TOO_OFTEN`` until the pace allows (``JoinPace``).
    joins_per_minute: int = 12
    #: Seconds a matched bot has to open its seat's Play stream, else it forfeits as a
    #: no-show (a fault) and the others play on. Shorter than the arena's 30 s: a ladder bot
    #: is a live process told of its match over its lobby stream, so it joins within a
    #: second; every second more is a second its opponents wait, three times over before
    #: a bot that never comes is suspended. Long enough for a lobby stream that broke just
    #: then: it is told of the match again when it reconnects (the SDK's first retry is
    #: after 0.5 s).
    connect_timeout_s: float = 10.0
    seed: int | None = None

    def __post_init__(self) -> None:
        if not self.offers:
            raise ValueError("a ladder needs at least one kind of match to offer")
        if not 0.0 <= self.exploration <= 1.0:
            raise ValueError(f"exploration {self.exploration} is not within 0..1")
        if self.max_matches_per_bot < 1:
            raise ValueError("max_matches_per_bot must be at least 1")
        if self.max_matches_per_owner is not None and self.max_matches_per_owner < 1:
            raise ValueError("max_matches_per_owner must be at least 1 (or absent: no cap)")
        if self.suspend_after < 0 or self.suspend_window < 1:
            raise ValueError("suspend_after must be >= 0 and suspend_window >= 1")
        if not 0 < self.heartbeat_interval_s < self.heartbeat_timeout_s:
            raise ValueError("the heartbeat interval must be positive and below its timeout")
        if self.joins_per_minute < 1:
            raise ValueError("joins_per_minute must be at least 1")
        if not (self.lease_s > 0 and self.hello_timeout_s > 0 and self.tick_s > 0):
            raise ValueError("lease_s, hello_timeout_s and tick_s must be positive")
        # As the arena's match settings take it: whole milliseconds, 1 to LIMIT_MS.
        if not (0 < self.connect_timeout_s <= LIMIT_MS / 1000 and self.connect_timeout_ms >= 1):
            raise ValueError(
                f"the connect timeout must be 0.001..{LIMIT_MS // 1000} s, got "
                f"{self.connect_timeout_s}"
            )

    @property
    def connect_timeout_ms(self) -> int:
        """``connect_timeout_s`` as the arena's match settings take it."""
        return round(self.connect_timeout_s * 1000)


def suspended_refusal(bot: str, version: str, why: str) -> Refusal:
    """The refusal of a suspended version of ``bot``."""
    return Refusal(
        grpc.StatusCode.PERMISSION_DENIED,
        Reason.BOT_SUSPENDED,
        f"bot {bot!r} version {version!r} is suspended: {why}",
        version=version,
    )


class JoinPace:
    """How often one bot may open a lobby stream: ``per_minute`` at once, then one every
    ``60 / per_minute`` s. A bot saying hello and leaving in a loop cost a presence write
    each time, and every match formed around it was stored and then forgotten, its
    opponents' time spent for nothing; a bot that reconnects with backoff never meets it."""

    #: Buckets kept before the rested ones are dropped.
    KEPT = 1024

    def __init__(self, per_minute: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.per_minute = per_minute
        self.clock = clock
        self._buckets: dict[int, TokenBucket] = {}

    def admit(self, account: AccountRow) -> None:
        """Count one lobby stream of ``account``; Refusal (RESOURCE_EXHAUSTED,
        ``JOINING_TOO_OFTEN``, with ``retry_after_ms``) when it is over the pace."""
        now = self.clock()
        bucket = self._buckets.get(account.id)
        if bucket is None:
            if len(self._buckets) >= self.KEPT:
                self._buckets = {k: b for k, b in self._buckets.items() if not b.rested(now)}
            bucket = self._buckets[account.id] = TokenBucket(
                self.per_minute / 60, self.per_minute, self.clock, now
            )
        if bucket.take(now):
            return
        wait_ms = math.ceil((1.0 - bucket.tokens) / bucket.rate * 1000)
        raise Refusal(
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            Reason.JOINING_TOO_OFTEN,
            f"bot {account.name!r} opened {self.per_minute} lobby streams within a minute, "
            f"the most this ladder takes; connect again in {wait_ms / 1000:.1f} s",
            retry_after_ms=wait_ms,
            limit=self.per_minute,
        )


#: The most versions (each a row of the public standings) one bot account may rate: a key
#: holder naming a new version at every connection made a thousand rows in 92 s, and the
#: standings page then took two seconds on the loop that referees the ladder's matches.
MAX_VERSIONS = 100


@dataclass(eq=False)
class _Running:
    """A match this server runs: the arena's id, each seat's bot and token."""

    mid: int
    plan: MatchPlan
    arena_match_id: str = ""
    tokens: tuple[str, ...] = ()
    address: str = ""
    config: match_pb2.MatchConfig | None = None
    task: asyncio.Task[None] | None = None
    #: Why the match is called off unrated (a bot in it was revoked); None: it plays on.
    voided: str | None = None
    #: The arena's record of the match, once asked for ("": not known).
    record_path: str = ""


@dataclass(eq=False)
class _Held:
    """A match's end the database could not take: its result (``outcome``) or, when
    ``aborted`` is set, its abort with that detail. Kept in memory, oldest first, and
    stored in that order once the database can be written again."""

    running: _Running
    outcome: MatchOutcome | None = None
    record_path: str = ""
    aborted: str | None = None

    def describe(self) -> str:
        """The match and its end, for the log of a result never stored."""
        seats = ", ".join(b.name for b in self.running.plan.seats)
        where = f"arena match {self.running.arena_match_id or '-'}"
        if self.aborted is not None or self.outcome is None:
            return f"{where} ({seats}), aborted: {self.aborted}"
        scores = ", ".join(
            f"{self.running.plan.seats[s.seat].name} {s.total} rank {s.rank} "
            f"{s.termination.name.lower()}"
            for s in self.outcome.seats
        )
        return f"{where}, record {self.record_path or '-'}: {scores}"


class Ladder:
    """One ladder server: sessions, matchmaking, matches, results."""

    def __init__(
        self,
        store: LadderStore,
        config: LadderConfig,
        server_id: str,
        arena: grpc.aio.Channel,
        arena_address: str,
        *,
        organiser_token: str | None = None,
        local_arena_address: str | None = None,
        endpoints: bool = True,
    ) -> None:
        self.store = store
        self.config = config
        self.server_id = server_id
        self.arena = arena
        self.arena_address = arena_address
        #: Where the sessions of the loopback lobby play (None: at ``arena_address``).
        self.local_arena_address = local_arena_address
        #: Whether bots are told the endpoint of the arena's process holding a match (``serve
        #: --workers``) rather than ``arena_address``; not when the operator named the
        #: address bots reach (``--arena-public``): an endpoint is the worker's ``--host``,
        #: which behind NAT or a proxy, or under a certificate for a name, is not it.
        self.endpoints = endpoints
        self.metadata: tuple[tuple[str, str], ...] = bearer_metadata(organiser_token)
        self.sessions: dict[int, Session] = {}
        #: Bots whose lobby stream is being opened (between the check that none is open and
        #: its registration, which awaits the database): a second stream is refused then too.
        self._opening: set[int] = set()
        #: Bots with a lobby stream waiting for its LobbyHello: a key opens one stream at a
        #: time from its check on, so it cannot hold thousands waiting (``awaiting_hello``).
        self._awaiting_hello: set[int] = set()
        #: The newest presence claim's stamp (each claim's is distinct and later).
        self._presence_stamp = 0.0
        self.joins = JoinPace(config.joins_per_minute)
        self.running: dict[int, _Running] = {}
        #: Match ends told to no lobby stream, for their bots' next one.
        self.missed = MissedEnds()
        self.rng = random.Random(config.seed)
        self.wake = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        #: Matches being ended in the arena (a revoked bot's), held until done.
        self._background: set[asyncio.Task[None]] = set()
        self._stopping = False
        #: Matches formed (stored and sent to the arena), results stored (rated or not),
        #: results rated, and matches that ended unrated (called off, or not complete in
        #: the arena), since the start: the ladder's /metrics.
        self.formed = 0
        self.finished = 0
        self.rated = 0
        self.aborted = 0
        #: The arena's refusals of this ladder's CreateMatch calls.
        self.refusals = ArenaRefusals()
        #: Matches formed per offer, for the mix.
        self.offered: dict[Offer, int] = {}
        #: Whether the database fails now (it holds the matchmaker's backoff).
        self.outage = Outage()
        #: The matchmaker's wait while matches fail in the arena (refused, unreachable):
        #: without it, every failure freed its bots for another match at once, each stored
        #: aborted and logged, hundreds a minute.
        self.arena_backoff = Backoff(ARENA_RETRY_MAX_S)
        #: Ends of matches the database could not take, oldest first (``_Held``).
        self.held: list[_Held] = []
        #: One storer of the held at a time (the matchmaker, ``stop``, a test's round).
        self._storing = asyncio.Lock()

    # -- the database ------------------------------------------------------------------

    def _storage_works(self, stored: int = 0) -> None:
        """A write succeeded (``stored``: the held match ends just stored): an outage, if
        any, is over once nothing is held. A write that fits on a disk almost full while
        results are still held does not end it: storing them does."""
        if not self.held:
            self.outage.over(stored)

    async def _write(self, what: str, call: Callable[..., T], *args: object, **kw: object) -> T:
        """``call`` (a database write) in a thread; StorageDown when the database fails."""
        try:
            done = await asyncio.to_thread(call, *args, **kw)
        except OperationalError as exc:
            raise self.outage.failed(what, exc) from exc
        self._storage_works()
        return done

    async def _read(self, what: str, call: Callable[..., T], *args: object) -> T:
        """``call`` (a database read) in a thread; StorageDown when the database fails (a
        read that works says nothing of writes: a full disk still reads)."""
        try:
            return await asyncio.to_thread(call, *args)
        except OperationalError as exc:
            raise self.outage.failed(what, exc) from exc

    def _hold(self, held: _Held, exc: StorageDown | None) -> None:
        self.held.append(held)
        what = "its abort" if held.aborted is not None else "its result"
        why = "the database cannot be written" if exc is None else f"the database failed ({exc})"
        log.warning(
            "ladder match %d: %s is held in memory (%s), to be stored in order once it can "
            "be (%d held)",
            held.running.mid,
            what,
            why,
            len(self.held),
        )

    async def store_held(self) -> int:
        """Store the held match ends, oldest first, each rated (or aborted) once; how many
        were stored. StorageDown when the database still fails (the rest stay held)."""
        async with self._storing:
            return await self._store_held()

    async def _store_held(self) -> int:
        stored = 0
        while self.held:
            held = self.held[0]
            if held.aborted is not None or held.outcome is None:
                await self._write(
                    "storing a held abort",
                    self.store.abort,
                    held.running.mid,
                    self.server_id,
                    held.aborted or "",
                    held.running.record_path or None,
                )
                self.held.pop(0)
            else:
                try:
                    if await self._record(held.running, held.outcome, held.record_path):
                        log.info("ladder match %d: its held result is stored", held.running.mid)
                except StorageDown:
                    raise
                except Exception as exc:  # not the database's state: never retried
                    log.exception("ladder match %d: storing its result failed", held.running.mid)
                    self.aborted += 1
                    self.held[0] = _Held(
                        held.running, aborted=f"its result could not be stored: {exc}"
                    )
                    continue
                self.held.pop(0)
                self._finish_leavers(held.running)
            stored += 1
        if stored:
            self._storage_works(stored)
        return stored

    # -- life --------------------------------------------------------------------------

    async def start(self) -> None:
        """Announce this server, abort what an earlier life of it left, start the loops."""
        await asyncio.to_thread(
            self.store.register_server, self.server_id, self.arena_address, self.config.lease_s
        )
        orphans = await asyncio.to_thread(self.store.abort_orphans, self.server_id)
        if orphans:
            # At WARNING, the default level: a restart after a crash says what it cost.
            log.warning(
                "%d ladder match(es) of this server's earlier run (%s) were aborted, not "
                "rated: it stopped during them",
                len(orphans),
                self.server_id,
            )
        self._tasks = [
            asyncio.create_task(self._matchmaking(), name="ladder-matchmaking"),
            asyncio.create_task(self._leases(), name="ladder-leases"),
            asyncio.create_task(self._revocations(), name="ladder-revocations"),
        ]

    def stop_matching(self) -> None:
        """Form no more matches (a ladder stopping: those in play go on until ``stop``)."""
        self._stopping = True

    async def stop(self) -> None:
        """Form no more matches, abort those in play (not rated), end every lobby stream."""
        self.stop_matching()
        for task in self._tasks:
            task.cancel()
        for running in list(self.running.values()):
            if running.task is not None:
                running.task.cancel()
        tasks = [r.task for r in self.running.values() if r.task is not None]
        await asyncio.gather(*self._tasks, *tasks, *self._background, return_exceptions=True)
        if self.held:
            with contextlib.suppress(StorageDown):
                await self.store_held()
        for held in self.held:
            # Its row stays unfinished: the next start of a ladder on this database marks
            # it aborted, unrated ("its ladder server stopped before the end").
            log.error(
                "ladder match %d: never stored, the database still fails (%s): %s; the next "
                "ladder start records it aborted, not rated",
                held.running.mid,
                self.outage.problem,
                held.describe(),
            )
        for session in list(self.sessions.values()):
            session.finish(
                Refusal(
                    grpc.StatusCode.UNAVAILABLE,
                    Reason.SHUTTING_DOWN,
                    "the ladder stops; reconnect with backoff",
                    server=self.server_id,
                )
            )

    # -- sessions ----------------------------------------------------------------------

    async def authenticate(self, key: str) -> AccountRow:
        """The account whose key this is; Refusal otherwise."""
        try:
            key_id, secret = accounts.parse_key(key)
        except accounts.BadKeyError as exc:
            raise Refusal(
                grpc.StatusCode.UNAUTHENTICATED,
                Reason.BOT_KEY_INVALID,
                f"the lobby needs 'authorization: Bearer <bot key>' metadata: {exc}",
                cause="absent" if not key.strip() else "malformed",
            ) from None
        found = await asyncio.to_thread(self.store.key_row, key_id)
        if found is None or not accounts.verify(secret, found[1], found[2]):
            raise Refusal(
                grpc.StatusCode.UNAUTHENTICATED,
                Reason.BOT_KEY_INVALID,
                "not a bot key of this ladder (a rotated key stops working)",
                cause="unknown",
            )
        account = found[0]
        if account.revoked:
            raise Refusal(
                grpc.StatusCode.UNAUTHENTICATED,
                Reason.BOT_REVOKED,
                f"bot {account.name!r}: its key was revoked",
                bot=account.name,
            )
        return account

    @contextlib.contextmanager
    def awaiting_hello(self, account: AccountRow) -> Iterator[None]:
        """Hold the bot's place while its new lobby stream waits for its LobbyHello: another
        stream with its key is refused at once (BOT_CONNECTED_ELSEWHERE), as it is while a
        stream of the bot is open. Before, each stream with a valid key waited for its
        LobbyHello alone: one key held 6,400 streams waiting (150 MB of the ladder's
        memory) for the hello timeout, over and over."""
        busy = (self.sessions, self._opening, self._awaiting_hello)
        if any(account.id in held for held in busy):
            raise Refusal(
                grpc.StatusCode.ALREADY_EXISTS,
                Reason.BOT_CONNECTED_ELSEWHERE,
                f"bot {account.name!r} has a lobby stream on this server (open, or waiting "
                "for its LobbyHello)",
                server=self.server_id,
            )
        self._awaiting_hello.add(account.id)
        try:
            yield
        finally:
            self._awaiting_hello.discard(account.id)

    def check_hello(self, hello: ladder_pb2.LobbyHello) -> int:
        """The match cap for a valid LobbyHello; Refusal naming the field otherwise."""

        def bad(message: str, name: str, **metadata: object) -> Refusal:
            return Refusal(
                grpc.StatusCode.INVALID_ARGUMENT,
                Reason.LOBBY_HELLO_INVALID,
                message,
                field=name,
                **metadata,
            )

        if hello.protocol_version != 1:
            raise bad(
                f"LobbyHello.protocol_version {hello.protocol_version}: this ladder speaks 1",
                "protocol_version",
                supported=1,
            )
        # The version names a row of the standings, a web page and a CSV cell: a newline or
        # a NUL in it broke each (the page's link led nowhere, the CSV row split in two).
        if (fault := name_fault("LobbyHello.bot_version", hello.bot_version)) is not None:
            too_long = len(hello.bot_version) > NAME_LIMIT
            raise bad(fault, "bot_version", **({"limit": NAME_LIMIT} if too_long else {}))
        offered = {o.ruleset for o in self.config.offers}
        unknown = [r for r in hello.rulesets if r not in offered]
        if unknown and len(unknown) == len(hello.rulesets):
            raise bad(
                f"LobbyHello.rulesets {list(hello.rulesets)}: this ladder offers {sorted(offered)}",
                "rulesets",
            )
        if any(not 2 <= p <= 4 for p in hello.players):
            raise bad(
                f"LobbyHello.players {list(hello.players)}: player counts are 2..4", "players"
            )
        if (
            hello.HasField("min_decision_ms")
            and hello.HasField("max_decision_ms")
            and hello.min_decision_ms > hello.max_decision_ms
        ):
            raise bad("LobbyHello.min_decision_ms is above max_decision_ms", "min_decision_ms")
        if hello.HasField("max_matches") and hello.max_matches == 0:
            raise bad(
                "LobbyHello.max_matches is 0: a bot that wants no match sends Leave", "max_matches"
            )
        # A bot that accepts none of the matches offered was welcomed and never matched,
        # without a word (players [3] on a ladder of 2 and 4 players, say).
        wants = _candidate_of(hello)
        offers = [o for o in self.config.offers if o.weight > 0]
        if not any(accepts(wants, o) for o in offers):
            said = _constraints_said(hello)
            listed = ", ".join(f"{o.ruleset}:{o.players}:{o.decision_ms}" for o in offers)
            raise bad(
                f"LobbyHello accepts none of the matches this ladder offers ({listed}, as "
                f"ruleset:players:decision_ms): its {' and '.join(said)} rule out every one",
                ",".join(said),
            )
        wanted = hello.max_matches if hello.HasField("max_matches") else 1
        return min(wanted, self.config.max_matches_per_bot)

    async def open_session(
        self,
        account: AccountRow,
        hello: ladder_pb2.LobbyHello,
        key_id: str = "",
        *,
        local: bool = False,
    ) -> Session:
        """Register a bot's lobby stream (its presence in the database first); ``key_id``:
        the public id of the key it was opened with; ``local``: opened on the loopback
        lobby."""
        cap = self.check_hello(hello)
        if hello.bot_version not in account.versions and len(account.versions) >= MAX_VERSIONS:
            raise Refusal(
                grpc.StatusCode.INVALID_ARGUMENT,
                Reason.LOBBY_HELLO_INVALID,
                f"LobbyHello.bot_version {hello.bot_version[:40]!r}: bot {account.name!r} has "
                f"{len(account.versions)} versions already, the most a bot may have; connect "
                "as one of them (the organiser can add the bot under a new name)",
                field="bot_version",
                limit=MAX_VERSIONS,
            )
        suspended = account.suspended.get(hello.bot_version)
        if suspended is not None:
            raise suspended_refusal(account.name, hello.bot_version, suspended)
        # Checked and reserved with no await between: two streams opened together both
        # passed the check while the first awaited the database, and both were welcomed.
        if account.id in self.sessions or account.id in self._opening:
            raise Refusal(
                grpc.StatusCode.ALREADY_EXISTS,
                Reason.BOT_CONNECTED_ELSEWHERE,
                f"bot {account.name!r} has a live lobby stream on this server",
                server=self.server_id,
            )
        self.joins.admit(account)  # a stream refused above is no join, and costs no write
        self._opening.add(account.id)
        # The claim's own stamp: the release of this stream removes this claim only.
        self._presence_stamp = max(time.time(), self._presence_stamp + 1e-6)
        connected_at = self._presence_stamp
        try:
            holder = await self._write(
                "a bot joining the lobby",
                self.store.claim_presence,
                account.id,
                self.server_id,
                self.config.lease_s,
                connected_at,
            )
            if holder is not None:
                raise Refusal(
                    grpc.StatusCode.ALREADY_EXISTS,
                    Reason.BOT_CONNECTED_ELSEWHERE,
                    f"bot {account.name!r} has a live lobby stream on another ladder server",
                    server=holder,
                )
            line = await self._write(
                "a bot joining the lobby",
                self.store.line,
                account.id,
                hello.bot_version,
                ratings.INITIAL.mu,
                ratings.INITIAL.sigma,
            )
        except StorageDown as exc:
            raise Refusal(
                grpc.StatusCode.UNAVAILABLE,
                Reason.LADDER_UNAVAILABLE,
                f"the ladder cannot take bots now: its database cannot be written ({exc}); "
                "connect again later",
                retry_after_ms=STORAGE_RETRY_MS,
            ) from None
        finally:
            self._opening.discard(account.id)
        session = Session(
            account, line, hello, cap, key_id=key_id, local=local, connected_at=connected_at
        )
        self.sessions[account.id] = session
        session.send(
            wire_ladder.welcome(
                account.name,
                hello.bot_version,
                int(self.config.heartbeat_interval_s * 1000),
                int(self.config.heartbeat_timeout_s * 1000),
                cap,
                _rating(line.mu, line.sigma, line.games),
            )
        )
        # A bot that reconnects while its matches go on is told of them again: its seat
        # token opens its seat whenever no stream holds it.
        for running in self.running.values():
            for seat, bot in enumerate(running.plan.seats):
                if bot.bot_id == account.id and running.config is not None:
                    session.playing.add(running.mid)
                    session.send(self._assigned(running, seat, session))
        # Then the ends of matches that finished while it was away.
        for ended in self.missed.take(account.id, time.monotonic()):
            session.send(ended)
        # What a bot says of itself is shown escaped: a log line is never written by a bot.
        log.info(
            "bot %s (%s) joined the lobby%s",
            account.name,
            printable(hello.bot_version) or "-",
            f", client {printable(hello.client[:CLIENT_SHOWN])}" if hello.client else "",
        )
        self.wake.set()
        return session

    def _assigned(self, running: _Running, seat: int, session: Session) -> ladder_pb2.LobbyResponse:
        """The MatchAssigned of ``seat`` for ``session``: at the arena address bots are
        told, or, for a session of the loopback lobby, at the arena's loopback address."""
        assert running.config is not None
        address = running.address
        if session.local and self.local_arena_address is not None:
            address = self.local_arena_address
        return wire_ladder.assigned(
            running.arena_match_id, seat, running.tokens[seat], address, running.config
        )

    async def close_session(self, session: Session) -> None:
        """The bot's lobby stream ended: it is no longer matched."""
        session.closed = True
        # What was queued for it and never written: a match end among it is told again
        # on its next stream.
        unsent: list[ladder_pb2.LobbyResponse] = []
        while not session.out.empty():
            message = session.out.get_nowait()
            if message is not None:
                unsent.append(message)
        self.missed.keep(session.bot_id, unsent, time.monotonic())
        if self.sessions.get(session.bot_id) is session:
            del self.sessions[session.bot_id]
            # A presence not released lapses with this server's lease (a reconnection here
            # takes it back at once).
            with contextlib.suppress(StorageDown):
                await self._write(
                    "a bot leaving the lobby",
                    self.store.release_presence,
                    session.bot_id,
                    self.server_id,
                    session.connected_at,
                )
        log.info("bot %s left the lobby: %s", session.account.name, session.why_ended())

    def leave(self, session: Session) -> None:
        """The bot asked to stop being matched; its stream ends after its last match."""
        session.leaving = session.said_leave = True
        if not session.playing:
            session.finish()

    def echo(self, session: Session, sequence: int) -> bool:
        """The bot echoed a heartbeat: True for an awaited echo (of a heartbeat sent and not
        echoed yet, the newest or an older one: a bot slower than the interval but within
        the timeout is alive, and the echo answers every heartbeat before it too); a
        repeated or invented sequence is unsolicited."""
        if not session.echoed < sequence <= session.heartbeats_sent:
            return False
        session.echoed = sequence
        for answered in [s for s in session.unechoed if s <= sequence]:
            del session.unechoed[answered]
        return True

    def revoke_local(self, bot_id: int) -> None:
        """End a revoked bot's lobby stream at once, and call off its matches in play here
        unrated: a bot the organiser threw out neither forfeits (moving its opponents'
        ratings) nor finishes them."""
        session = self.sessions.get(bot_id)
        if session is not None:
            session.finish(
                Refusal(
                    grpc.StatusCode.UNAUTHENTICATED,
                    Reason.BOT_REVOKED,
                    f"bot {session.account.name!r}: its key was revoked",
                    bot=session.account.name,
                )
            )
        for running in list(self.running.values()):
            revoked = [b.name for b in running.plan.seats if b.bot_id == bot_id]
            if revoked and running.voided is None:
                running.voided = f"bot {revoked[0]!r} was revoked during the match"
                if running.arena_match_id:  # else _play sees it once the arena has it
                    task = asyncio.create_task(self._stop_in_arena(running, running.voided))
                    self._background.add(task)
                    task.add_done_callback(self._background.discard)

    def rotated_local(self, bot_id: int, key_id: str) -> None:
        """End a bot's lobby stream opened with a key other than ``key_id`` (its key was
        rotated: whoever held the old one keeps nothing, and the new key gets in)."""
        session = self.sessions.get(bot_id)
        if session is not None and session.key_id and session.key_id != key_id:
            session.finish(
                Refusal(
                    grpc.StatusCode.UNAUTHENTICATED,
                    Reason.BOT_KEY_INVALID,
                    f"bot {session.account.name!r}: the key this stream was opened with was "
                    "replaced (rotated); connect with the new key",
                    bot=session.account.name,
                    cause="rotated",
                )
            )

    def _follow_keys(self, keys: Mapping[int, tuple[str, bool]]) -> bool:
        """Act on the bots' keys as the database has them (``store.keys``): a revoked bot's
        stream and matches end, a stream opened with a rotated key ends. Whether any did."""
        changed = False
        for bot_id, (key_id, revoked) in keys.items():
            session = self.sessions.get(bot_id)
            if revoked:
                self.revoke_local(bot_id)
                changed = True
            elif session is not None and session.key_id and session.key_id != key_id:
                self.rotated_local(bot_id, key_id)
                changed = True
        return changed

    # -- loops -------------------------------------------------------------------------

    async def _leases(self) -> None:
        """Renew this server's lease and its bots' presence; abort dead servers' matches;
        end the streams of bots revoked from elsewhere."""
        every = self.config.lease_s / 3
        while True:
            await asyncio.sleep(every)  # a lease's renewal period, not a synchronisation
            try:
                ids = list(self.sessions)
                # Seen: the versions connected here, and those playing here whose lobby
                # stream ended (last_seen was the hello's time, minutes before the end).
                seen = {s.line.id for s in self.sessions.values()}
                seen |= {b.line_id for r in self.running.values() for b in r.plan.seats}
                await self._write(
                    "renewing leases",
                    self.store.renew,
                    self.server_id,
                    ids,
                    self.config.lease_s,
                    sorted(seen),
                )
                orphans = await self._write("aborting orphaned matches", self.store.abort_orphans)
                if orphans:
                    log.warning(
                        "%d ladder match(es) of a ladder server whose lease lapsed were "
                        "aborted, not rated",
                        len(orphans),
                    )
            except StorageDown:
                pass  # counted, and logged when it began
            except Exception:
                log.exception("ladder: renewing leases failed; trying again")

    async def _revocations(self) -> None:
        """End, within a second, the lobby streams of bots revoked or whose key was rotated
        from elsewhere (the command line, another server), and the matches here of bots
        revoked."""
        while True:
            await asyncio.sleep(1.0)  # a polling period, not a synchronisation
            try:
                playing = {b.bot_id for r in self.running.values() for b in r.plan.seats}
                ids = list(set(self.sessions) | playing)
                self._follow_keys(await self._read("checking revocations", self.store.keys, ids))
            except StorageDown:
                pass  # counted, and logged when it began
            except Exception:
                log.exception("ladder: checking revocations failed; trying again")

    async def _matchmaking(self) -> None:
        while True:
            if self.outage.problem is not None or self.held:
                # Backing off while the database fails (a bot joining or a match ending
                # does not hurry it): a retry period, not a synchronisation.
                await asyncio.sleep(self.outage.backoff.wait_s or self.config.tick_s)
            elif self.arena_backoff.wait_s:
                # Backing off while the arena fails to play matches (the same).
                await asyncio.sleep(self.arena_backoff.wait_s)
            else:
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(self.config.tick_s):
                        await self.wake.wait()
            self.wake.clear()
            try:
                await self.round()
            except StorageDown:
                self.outage.back_off(self.config.tick_s)
            except Exception:
                log.exception("ladder: matchmaking failed; trying again")

    async def round(self) -> list[int]:
        """The held match ends stored first (ratings move in the order matches ended, and
        the matchmaker sees them), then one matchmaking round; the ids of the matches
        started. StorageDown when the database fails (no match is formed then)."""
        await self.store_held()
        return await self.form_matches()

    async def form_matches(self) -> list[int]:
        """One matchmaking round: start every match that can start now; their ids."""
        if self._stopping:
            return []
        connected = [s for s in self.sessions.values() if not s.closed and not s.leaving]
        idle = [s for s in connected if len(s.playing) < s.cap]
        if len(idle) < 2:
            return []
        lines = [s.line.id for s in idle]
        seats = await self._read("matchmaking", self.store.seat_counts, lines)
        candidates = [_candidate(s, seats.get(s.line.id, {})) for s in idle]
        playing = [_candidate(s, {}) for s in connected if len(s.playing) >= s.cap]
        busy: dict[str, int] = {}
        for running in self.running.values():
            for owner in {b.owner for b in running.plan.seats}:
                busy[owner] = busy.get(owner, 0) + 1
        plans = plan(
            candidates,
            self._due(idle),
            self.rng,
            exploration=self.config.exploration,
            same_owner=self.config.same_owner,
            owner_busy=busy,
            max_per_owner=self.config.max_matches_per_owner,
            busy=playing,
            now=time.monotonic(),
            rematch_after_s=self.config.rematch_after_s,
        )
        started: list[int] = []
        for p in plans:
            # A bot revoked (or its key rotated) from elsewhere in the second before the poll
            # sees it is not matched: its stream ends now instead.
            keys = await self._read("matchmaking", self.store.keys, [b.bot_id for b in p.seats])
            if self._stopping:
                break  # the ladder began stopping during this round
            if self._follow_keys(keys):
                continue
            self.offered[p.offer] = self.offered.get(p.offer, 0) + 1
            line_ids = [b.line_id for b in p.seats]
            seed = self.rng.randrange(2**63)
            mid = await self._write(
                "storing a new match",
                self.store.new_match,
                self.server_id,
                p.offer.ruleset,
                p.offer.players,
                p.offer.decision_ms,
                seed,
                line_ids,
            )
            # A bot may have left (or its stream ended) while the match was being stored:
            # it would be charged a no-show for a match formed after it said goodbye.
            gone = [
                b.name
                for b in p.seats
                if (s := self.sessions.get(b.bot_id)) is None or s.closed or s.leaving
            ]
            if gone:
                await self._discard(_Running(mid, p), f"{', '.join(gone)} left as it formed")
                continue
            if self._stopping:  # began while the match was being stored: it never starts
                await self._discard(_Running(mid, p), "the ladder began stopping as it formed")
                break
            running = _Running(mid, p)
            self.running[mid] = running
            for b in p.seats:
                session = self.sessions.get(b.bot_id)
                if session is not None:
                    session.playing.add(mid)
                    session.idle_since = time.monotonic()  # its wait for a free slot restarts
            running.task = asyncio.create_task(self._play(running, seed), name=f"ladder-{mid}")
            self.formed += 1
            started.append(mid)
        return started

    def _due(self, idle: Sequence[Session]) -> tuple[Offer, ...]:
        """The offers to form now (``matchmaker.due_offers``)."""
        now = time.monotonic()
        connected = [_candidate(s, {}) for s in self.sessions.values() if not s.leaving]
        accepting = {o: sum(1 for c in connected if accepts(c, o)) for o in self.config.offers}
        waited = max((now - s.idle_since for s in idle), default=0.0)
        return due_offers(
            self.config.offers, self.offered, accepting, waited, self.config.patience_s
        )

    # -- one match ---------------------------------------------------------------------

    async def _play(self, running: _Running, seed: int) -> None:
        try:
            await self._play_and_store(running, seed)
        finally:
            self._free(running)

    async def _play_and_store(self, running: _Running, seed: int) -> None:
        mid, p = running.mid, running.plan
        settings = MatchSettings(
            ruleset=p.offer.ruleset,
            players=p.offer.players,
            seed=seed,
            time=TimeControl(decision_ms=p.offer.decision_ms),
            seat_names=tuple(b.name for b in p.seats),
            connect_timeout_ms=self.config.connect_timeout_ms,
        )
        matches = admin_pb2_grpc.MatchServiceStub(self.arena)
        outcome: MatchOutcome | None = None
        record_path = ""
        try:
            created = await self._create(
                mid,
                matches,
                wire_matches.create_request(settings, f"ladder-{self.server_id}-{mid}"),
            )
            running.arena_match_id = created.match_id
            running.tokens = tuple(t.token for t in created.tokens)
            endpoint = self.endpoints and created.HasField("endpoint")
            running.address = created.endpoint if endpoint else self.arena_address
            running.config = created.config
            if not await self._write(
                "starting a match", self.store.started, mid, self.server_id, created.match_id
            ):
                raise RuntimeError("the match was aborted as another server's orphan")
            if running.voided is None:
                watch = admin_pb2_grpc.SpectatorServiceStub(self.arena).Watch(
                    wire_matches.watch_request(created.match_id), metadata=self.metadata
                )
                for seat, bot in enumerate(p.seats):
                    session = self.sessions.get(bot.bot_id)
                    if session is not None:
                        session.send(self._assigned(running, seat, session))
                async for message in watch:
                    self.arena_backoff.succeeded()  # the arena plays this match
                    if message.HasField("result"):
                        outcome = convert.outcome_from_proto(message.result)
            if running.voided is None:
                summary = await matches.GetMatch(
                    wire_matches.get_request(created.match_id), metadata=self.metadata, timeout=30
                )
                record_path = running.record_path = summary.match.record_path
        except asyncio.CancelledError:
            await self._abort(running, "the ladder server stopped")
            raise
        except Exception as exc:
            problem = _problem(exc)
            if isinstance(exc, StorageDown):  # the database's outage holds the matchmaker
                log.warning("ladder match %d: %s", mid, problem)
            else:
                self.arena_backoff.failed(self.config.tick_s)
                log.warning(
                    "ladder match %d: %s (the next match is formed in %g s at the earliest)",
                    mid,
                    problem,
                    self.arena_backoff.wait_s,
                )
            await self._abort(running, f"the match could not be played: {problem}")
            return
        finally:
            self._release(running)
        if running.voided is not None:
            # The arena's result (aborted, the board where it stopped) is told as the Play
            # stream's MatchEnded told it: unrated.
            await self._abort(running, running.voided, outcome)
            return
        if outcome is None:
            await self._abort(running, "the arena's spectator stream ended without a result")
            return
        if self.held:  # results are stored in the order their matches ended
            self._hold(_Held(running, outcome, record_path), None)
            return
        try:
            await self._record(running, outcome, record_path)
        except StorageDown as exc:
            # Stored, in order, once the database can be written (store_held); its bots are
            # told its end then. A leaving bot's stream waits for it (or for the ladder's
            # stop).
            self._hold(_Held(running, outcome, record_path), exc)
            return
        except Exception as exc:  # not the database's state: the match is not rated
            log.exception("ladder match %d: storing its result failed", mid)
            await self._store_abort(running, f"its result could not be stored: {exc}")
        self._finish_leavers(running)  # if the end was not told (not ours, or failed)

    async def _create(
        self,
        mid: int,
        matches: admin_pb2_grpc.MatchServiceAsyncStub,
        request: admin_pb2.CreateMatchRequest,
    ) -> admin_pb2.CreateMatchResponse:
        """CreateMatch for ladder match ``mid``, the arena's refusals waited out (counted
        and logged by ``refusals``)."""
        accepted = False
        try:
            created = await create_match(
                matches,
                request,
                metadata=self.metadata,
                on_refused=functools.partial(self.refusals.refused, mid),
            )
            accepted = True
            return created
        finally:
            self.refusals.settled(mid, accepted)

    async def _stop_in_arena(self, running: _Running, detail: str) -> None:
        """End the match in the arena (its bots' streams end; one that ended already is
        left as it is)."""
        if running.arena_match_id:
            with contextlib.suppress(grpc.aio.AioRpcError):
                await admin_pb2_grpc.MatchServiceStub(self.arena).AbortMatch(
                    wire_matches.abort_request(running.arena_match_id, detail),
                    metadata=self.metadata,
                    timeout=10,
                )

    async def _abort(
        self, running: _Running, detail: str, outcome: MatchOutcome | None = None
    ) -> None:
        await self._stop_in_arena(running, detail)
        await self._find_record(running)
        await asyncio.shield(self._store_abort(running, detail))
        self._tell_end(running, outcome, rated=False, after={})

    async def _find_record(self, running: _Running) -> None:
        """Ask the arena for the record of a match called off, so that ``ladder export``
        links it as it does a finished one's (none when the arena cannot say)."""
        if running.arena_match_id and not running.record_path:
            with contextlib.suppress(grpc.aio.AioRpcError):
                summary = await admin_pb2_grpc.MatchServiceStub(self.arena).GetMatch(
                    wire_matches.get_request(running.arena_match_id),
                    metadata=self.metadata,
                    timeout=10,
                )
                running.record_path = summary.match.record_path

    async def _discard(self, running: _Running, why: str) -> None:
        """Forget a match stored but never started: no bot played it, so none is charged an
        aborted match (a bot that left at each hello, as a match formed, made every other
        bot's aborted count grow). Stored as aborted when the database fails meanwhile."""
        try:
            await self._write(
                "forgetting a match that never started",
                self.store.discard,
                running.mid,
                self.server_id,
            )
        except StorageDown as exc:
            self._hold(_Held(running, aborted=why), exc)
            return
        log.debug("ladder: match %d not started: %s", running.mid, why)

    async def _store_abort(self, running: _Running, detail: str) -> None:
        """Mark the match aborted (never rated); held when the database fails."""
        self.aborted += 1
        try:
            await self._write(
                "storing an aborted match",
                self.store.abort,
                running.mid,
                self.server_id,
                detail,
                running.record_path or None,
            )
        except StorageDown as exc:
            self._hold(_Held(running, aborted=detail), exc)

    def _release(self, running: _Running) -> None:
        """The match is over in the arena: a bot that reconnects is no longer told of it."""
        self.running.pop(running.mid, None)

    def _free(self, running: _Running) -> None:
        """Its bots may be matched again: only once its result is stored (or it is called
        off), so that a bot this result suspends is never matched meanwhile (a no-show's
        opponent waited another connect deadline for it, or the new match was aborted)."""
        ids = frozenset(b.bot_id for b in running.plan.seats)
        for bot in running.plan.seats:
            session = self.sessions.get(bot.bot_id)
            if session is None:
                continue
            session.playing.discard(running.mid)
            session.idle_since = time.monotonic()
            session.last_match = ids - {bot.bot_id}
        self.wake.set()

    def _finish_leavers(self, running: _Running) -> None:
        """End the lobby streams of bots that asked to leave and have no other match in
        play: only once they were told this match's end (ended before, a leaving bot's last
        LadderMatchEnded was lost though its match was rated)."""
        for bot in running.plan.seats:
            session = self.sessions.get(bot.bot_id)
            if session is not None and session.leaving and not session.playing - {running.mid}:
                session.finish()

    async def _record(self, running: _Running, outcome: MatchOutcome, record_path: str) -> bool:
        """Store (and rate) a match's result and tell its bots; whether this server stored
        it. StorageDown when the database fails (nothing was stored)."""
        p = running.plan
        results = [
            SeatResult(p.seats[s.seat].name, s.seat, s.total, s.rank, s.termination.name.lower())
            for s in outcome.seats
        ]
        counted = counted_ranks(results)
        seats = [
            StoredSeat(s.seat, s.total, rank, r.termination, s.strikes, s.detail)
            for s, r, rank in zip(outcome.seats, results, counted, strict=True)
        ]
        ending = "complete" if outcome.complete else "abandoned" if outcome.abandoned else "aborted"
        rated = await self._write(
            "storing a match result",
            self.store.finish,
            running.mid,
            self.server_id,
            seats,
            ending,
            record_path,
            _rater,
            suspend_after=self.config.suspend_after,
            window=self.config.suspend_window,
            faults=frozenset(FAULTS),
        )
        if rated is None:
            log.warning("ladder match %d: not this server's to store any more", running.mid)
            return False
        self.finished += 1
        if ending == "complete":
            self.rated += 1
        else:
            self.aborted += 1
        after = {r.seat: r for r in rated}
        self._tell_end(running, outcome, rated=ending == "complete", after=after)
        # A bot suspended by this result is no longer matched: its stream ends.
        for bot in p.seats:
            session = self.sessions.get(bot.bot_id)
            if session is None:
                continue
            account = await asyncio.to_thread(self.store.account, bot.name)
            suspended = account.suspended.get(session.line.version)
            if suspended is not None:
                session.finish(suspended_refusal(bot.name, session.line.version, suspended))
        return True

    def _tell_end(
        self,
        running: _Running,
        outcome: MatchOutcome | None,
        *,
        rated: bool,
        after: dict[int, RatedSeat],
    ) -> None:
        for seat, bot in enumerate(running.plan.seats):
            new = after.get(seat)
            now = _rating(new.mu, new.sigma, new.games) if new is not None else None
            ended = wire_ladder.ended(running.arena_match_id, outcome, rated, now)
            session = self.sessions.get(bot.bot_id)
            if session is None or session.closed:
                # Its lobby stream is down: told when it connects again.
                self.missed.keep(bot.bot_id, [ended], time.monotonic())
                continue
            if new is not None and session.line.id == new.line_id:
                # The matchmaker's view of the version's rating.
                session.line = replace(session.line, mu=new.mu, sigma=new.sigma, games=new.games)
            session.send(ended)
        self._finish_leavers(running)


def _rater(
    before: Sequence[tuple[float, float]], ranks: Sequence[int]
) -> list[tuple[float, float]]:
    after = ratings.rate([ratings.Rating(mu, sigma) for mu, sigma in before], ranks)
    return [(r.mu, r.sigma) for r in after]


def _rating(mu: float, sigma: float, games: int) -> ladder_pb2.LadderRating:
    return wire_ladder.rating(mu, sigma, ratings.ordinal(mu, sigma), games)


def _candidate(session: Session, seats: Mapping[int, tuple[int, ...]]) -> Candidate:
    return replace(
        _candidate_of(session.hello),
        bot_id=session.bot_id,
        name=session.account.name,
        owner=session.account.owner,
        line_id=session.line.id,
        ordinal=ratings.ordinal(session.line.mu, session.line.sigma),
        free=session.cap - len(session.playing),
        idle_since=session.idle_since,
        last_match=session.last_match,
        seat_counts=seats,
    )


def _candidate_of(hello: ladder_pb2.LobbyHello) -> Candidate:
    """What a LobbyHello accepts, as a candidate of nobody (for ``accepts``)."""
    return Candidate(
        bot_id=0,
        name="",
        owner="",
        line_id=0,
        ordinal=0.0,
        free=1,
        idle_since=0.0,
        rulesets=frozenset(hello.rulesets),
        players=frozenset(hello.players),
        min_decision_ms=hello.min_decision_ms if hello.HasField("min_decision_ms") else None,
        max_decision_ms=hello.max_decision_ms if hello.HasField("max_decision_ms") else None,
    )


def _constraints_said(hello: ladder_pb2.LobbyHello) -> list[str]:
    """The LobbyHello fields that narrow the matches a bot accepts, as it set them."""
    said = [name for name in ("rulesets", "players") if getattr(hello, name)]
    return said + [n for n in ("min_decision_ms", "max_decision_ms") if hello.HasField(n)]


def _problem(exc: Exception) -> str:
    """An error in one line: an RPC's status and details (its str spans lines, with gRPC's
    debug string), else the message."""
    if isinstance(exc, grpc.aio.AioRpcError):
        return f"{exc.code().name}: {exc.details() or 'no details'}"
    return one_line(str(exc)) or exc.__class__.__name__
