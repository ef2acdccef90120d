"""The matches a server hosts: creation, seat tokens, lookup, shutdown."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
import weakref
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from medina.engine import GameState, get_ruleset
from medina.records import catalog
from medina.records.catalog import StoredMatch, StoredState
from medina.records.errors import RecordError
from medina.records.space import DEFAULT_RESERVE_MB, RecordsSpace
from medina.records.writer import RecordWriter, being_written
from medina.referee.config import MatchSettings
from medina.referee.local import LocalSeat, Policy
from medina.referee.match import Match, MatchPhase
from medina.referee.outcome import MatchOutcome
from medina.referee.record import RecordSink, TeeSink
from medina.referee.seat import Seat, Signal, StartSignal

from ..common.admission import (
    AdmissionLimits,
    Load,
    MatchTiming,
    Turnaround,
    match_files,
    no_room,
)
from ..common.start_queue import StartQueue
from ..common.tokens import new_token, token_key
from .grpc_seat import GrpcSeat

log = logging.getLogger("medina.rpc")


class _MatchRef:
    """A weak reference to a match, for its seats: what they submit once the match has left
    memory goes nowhere (the seat layer has already told the bot the match is over)."""

    def __init__(self) -> None:
        self._ref: weakref.ref[Match] | None = None

    def bind(self, match: Match) -> None:
        self._ref = weakref.ref(match)

    def submit(self, signal: Signal) -> None:
        match = self._ref() if self._ref is not None else None
        if match is not None:
            match.submit(signal)

    def state(self) -> GameState:
        match = self._ref() if self._ref is not None else None
        if match is None:
            raise RuntimeError("the match has left memory")
        return match.state


@dataclass(frozen=True)
class Shutdown:
    """What a shutdown did with the matches it found not yet ended."""

    #: Ended by themselves within the grace.
    ended: int
    #: Aborted ("server shutting down"), their records complete.
    aborted: int


class ArenaClosedError(RuntimeError):
    """The server is shutting down and takes no new matches."""


class RecordsFullError(RecordError):
    """No match is created: its record could not be written (``RecordsSpace.refusal``)."""


#: Seconds between attempts to complete records that could not be written whole.
RECORD_RETRY_S = 5.0


@dataclass
class HostedMatch:
    """A match and its transport-side state."""

    match: Match
    seats: list[GrpcSeat]
    tokens: list[str]
    resume_tokens: list[str]
    record_path: Path
    #: When it was created and started, and its seats' share of the server's turnaround.
    timing: MatchTiming
    task: asyncio.Task[MatchOutcome] | None = None
    #: Seats played in process by a policy (always present; their tokens open nothing).
    local: frozenset[int] = frozenset()
    watchers: int = field(default=0)
    #: Wall-clock creation time: the listing's order, comparable across worker processes.
    created: float = field(default_factory=time.time)

    @property
    def match_id(self) -> str:
        """The match id."""
        return self.match.match_id


#: How a match that ended is listed once only its record remains.
_STORED_STATES = {
    MatchPhase.FINISHED: StoredState.FINISHED,
    MatchPhase.ABORTED: StoredState.ABORTED,
    MatchPhase.ABANDONED: StoredState.ABANDONED,
}

#: Finished matches a server keeps in memory (for late spectators and bots reading the end)
#: before only their record remains; memory stays bounded however many matches are played.
KEEP_FINISHED = 256


class Arena:
    """Every match of one server process."""

    def __init__(
        self,
        records_dir: Path,
        keep_finished: int = KEEP_FINISHED,
        records_reserve_bytes: int = DEFAULT_RESERVE_MB * 1_000_000,
    ) -> None:
        # Absolute: a record's path is stored by whoever asked for the match (a tournament's
        # database, the ladder's) and read from other directories (`tournament show`, web).
        records_dir = records_dir.absolute()
        self.records_dir = records_dir
        self.keep_finished = keep_finished
        self._finished: deque[str] = deque()
        self.matches: dict[str, HostedMatch] = {}
        #: The matches whose task has not ended: what admission weighs at every CreateMatch,
        #: kept apart so that it costs nothing per finished match kept in memory.
        self._live: dict[str, HostedMatch] = {}
        self._by_token: dict[str, tuple[HostedMatch, int]] = {}
        self.accepting = True
        #: From a bot's reply read to its match's next request written, for every match:
        #: what admission control weighs (``admission.refusal``).
        self.turnaround = Turnaround()
        #: Matches known only from their records: earlier server runs' (``load_records``)
        #: and this run's that left memory.
        self.stored = catalog.Catalog(records_dir)
        #: Room for records: new matches refused while short of it, records that could not
        #: be written completed when there is room (every ``RECORD_RETRY_S``).
        self.space = RecordsSpace(records_dir, records_reserve_bytes)
        self._retrying: asyncio.Task[None] | None = None
        #: Listeners of every new match's record entries (metrics): each is called with the
        #: match id and returns a sink that sees the entries after the record has them.
        self.record_taps: list[Callable[[str], RecordSink]] = []
        #: Matches ready to start, waiting for room (``queue_for``); None: every match
        #: starts as soon as its bots are there.
        self.queue: StartQueue | None = None

    def queue_for(self, limits: AdmissionLimits, lag_ms: Callable[[], float]) -> StartQueue:
        """Let matches start only when ``limits`` leave room for them (``admission.no_room``
        with the event loop's lag now), the others waiting in a start queue."""

        def room(clock_ms: int) -> str | None:
            return no_room(limits, self.load(clock_ms), lag_ms())

        self.queue = StartQueue(room, per_second=limits.start_burst)
        return self.queue

    def load(self, clock_ms: int) -> Load:
        """What admission weighs for a match with a ``clock_ms`` decision clock: the matches
        let start and not ended (with no start queue, every match, let start when created),
        the shortest clock among them and it, the turnaround, those still starting, and the
        matches not let start yet (waiting for their bots, or in the queue)."""
        now = time.monotonic()
        let_in = [h for h in self._live.values() if h.timing.released is not None]
        shortest = min((h.match.settings.time.decision_ms for h in let_in), default=clock_ms)
        return Load(
            len(let_in),
            min(shortest, clock_ms),
            self.turnaround.p99_ms(),
            sum(1 for h in let_in if h.timing.starting(now)),
            len(self._live) - len(let_in),
        )

    def files(self) -> int:
        """The most open files this process's matches hold (``admission.match_files``):
        every match whose task has not ended (its record is closed at the end of the task),
        with a connection for each seat not played in process."""
        return sum(
            match_files(h.match.settings.players - len(h.local)) for h in self._live.values()
        )

    def load_records(self) -> list[StoredMatch]:
        """Read the records directory: earlier matches, interrupted ones listed as aborted.
        Returns the records that had to be read in full (interrupted or unreadable)."""
        inspected = self.stored.load()
        unfinished = [m for m in inspected if m.state is StoredState.INTERRUPTED]
        interrupted: list[StoredMatch] = []
        for m in unfinished:
            # A record another live server (a second tournament runner) is writing is no
            # interrupted match.
            if being_written(m.path):
                log.info(
                    "match %s is being played by another server (record %s)", m.match_id, m.path
                )
                continue
            # Nor one whose match ended between the read above and that look at its lock
            # (its writer wrote the outcome, then let go): read again, it is finished.
            with contextlib.suppress(OSError):
                if catalog.peek_state(m.path) is not None:
                    self.stored.add(catalog.inspect(m.path))
                    continue
            interrupted.append(m)
        for m in interrupted:
            log.info("match %s was interrupted (record %s): %s", m.match_id, m.path, m.note)
        if interrupted:
            # One warning, not one per record: every start reads the same old records again.
            log.warning(
                "%d match record(s) in %s were interrupted (a server stopped during the "
                "match): `medina-arena replay list %s` lists them",
                len(interrupted),
                self.records_dir,
                self.records_dir,
            )
        if len(self.stored):
            log.info(
                "%d earlier match record(s) in %s, %d interrupted",
                len(self.stored),
                self.records_dir,
                len(interrupted),
            )
        return inspected

    def create(
        self,
        settings: MatchSettings,
        *,
        local: Mapping[int, Policy] | None = None,
    ) -> HostedMatch:
        """Create and start a match; it waits for its seats to connect.

        ``local`` seats are played in process by a policy and their tokens open nothing.
        """
        if not self.accepting:
            raise ArenaClosedError("the server is shutting down and takes no new matches")
        full = self.space.refusal()
        if full is not None:
            raise RecordsFullError(full)
        match_id = uuid.uuid4().hex[:16]  # a clash with an old record: RecordExistsError
        geometry = get_ruleset(settings.ruleset, settings.players).geometry
        local = dict(local or {})
        if not set(local) <= set(range(settings.players)):
            raise ValueError(f"local seats {sorted(local)} for a {settings.players}-player match")
        writer = RecordWriter(self.records_dir, match_id)
        # Seats reach their match through a weak reference: a strong one would make a cycle
        # (match -> seats -> match), and a finished match would then leave memory only at a
        # full garbage collection, which a busy server runs rarely (RSS grew ~66 KB a match).
        ref = _MatchRef()
        timing = self.turnaround.match()
        seats = [GrpcSeat(seat, geometry, ref.submit, timing) for seat in range(settings.players)]
        players: list[Seat] = list(seats)
        for seat, policy in local.items():
            players[seat] = LocalSeat(seat, policy, ref.submit)
        connected = [seat in local for seat in range(settings.players)]
        sink: RecordSink = writer
        if self.record_taps:
            sink = TeeSink(writer, *(tap(match_id) for tap in self.record_taps))
        queue = self.queue
        ready: Callable[[], None] | None = None
        if queue is None:
            timing.released = timing.created
        else:
            clock_ms = settings.time.decision_ms

            def ready() -> None:
                queue.enter(timing, clock_ms, lambda: ref.submit(StartSignal()))

        match = Match(match_id, settings, players, sink, connected=connected, ready=ready)
        ref.bind(match)
        for player in players:
            if isinstance(player, LocalSeat):
                player.state = ref.state
        hosted = HostedMatch(
            match=match,
            seats=seats,
            tokens=[new_token() for _ in seats],
            resume_tokens=[new_token() for _ in seats],
            record_path=writer.path,
            timing=timing,
            local=frozenset(local),
        )
        for seat, token in enumerate(hosted.tokens):
            if seat not in local:
                self._by_token[token_key(token)] = (hosted, seat)
        self.matches[match_id] = hosted
        self._live[match_id] = hosted
        hosted.task = asyncio.get_running_loop().create_task(self._run(hosted, writer))
        log.info("match %s created: %s, %d players", match_id, settings.ruleset, settings.players)
        return hosted

    async def _run(self, hosted: HostedMatch, writer: RecordWriter) -> MatchOutcome:
        try:
            outcome = await hosted.match.run()
            log.info("match %s ended (%s)", hosted.match_id, hosted.match.phase.name.lower())
            return outcome
        finally:
            self._live.pop(hosted.match_id, None)
            if self.queue is not None:
                self.queue.leave(hosted.timing)
            writer.close()
            if writer.unwritten:
                self._hold(writer)
            for seat in hosted.seats:
                if seat.connection is not None:
                    seat.connection.close()
            self._retire(hosted)

    def _hold(self, writer: RecordWriter) -> None:
        """Keep a record that lacks lines, and complete it once there is room."""
        self.space.keep(writer)
        if self._retrying is None or self._retrying.done():
            self._retrying = asyncio.get_running_loop().create_task(self._retry_records())

    async def _retry_records(self) -> None:
        while not self.space.retry():
            await asyncio.sleep(RECORD_RETRY_S)

    def _retire(self, hosted: HostedMatch) -> None:
        """A match ended: beyond the newest ``keep_finished``, finished matches leave memory
        (their tokens open nothing more) and are known from their records, like an earlier
        run's."""
        self._finished.append(hosted.match_id)
        while len(self._finished) > self.keep_finished:
            old = self._leave(self._finished.popleft())
            if old is None:
                continue
            # The record is not read back here (that is file reading and JSON parsing on
            # the event loop, once a match): this server knows how the match ended.
            try:
                mtime = old.record_path.stat().st_mtime
            except OSError as exc:  # its record went away: nothing is left to show
                log.warning(
                    "match %s left memory; its record cannot be read: %s", old.match_id, exc
                )
                continue
            self.stored.note(old.match_id, _STORED_STATES[old.match.phase], mtime)

    def _leave(self, match_id: str) -> HostedMatch | None:
        """An ended match leaves memory: its seat tokens open nothing more."""
        old = self.matches.pop(match_id, None)
        if old is not None:
            for token in old.tokens:
                self._by_token.pop(token_key(token), None)
        return old

    def forget_pruned(self, hosted: Iterable[HostedMatch]) -> list[str]:
        """Of ``hosted``, the ended matches whose record was deleted under the server
        (``replay prune``, an operator) leave memory now, as one whose record went away does
        when it would leave memory anyway (``_retire``): nothing is left to show of them, and
        an answer must not depend on whether a pruned match was among the newest
        ``keep_finished``. Returns their ids (one ``stat`` per ended match, through
        ``Catalog.gone``, the rule the records known only from their files follow)."""
        ended = [h.match_id for h in hosted if h.match_id not in self._live]
        gone = self.stored.gone(ended)
        for match_id in gone:
            self._finished.remove(match_id)
            self._leave(match_id)
            log.info("match %s left memory: its record was deleted", match_id)
        return gone

    def find_seat(self, token: str) -> tuple[HostedMatch, int] | None:
        """The match and seat a seat token opens (constant-time on the secret)."""
        return self._by_token.get(token_key(token))

    def get(self, match_id: str) -> HostedMatch | None:
        """A match by id; None for an ended one whose record was deleted (``forget_pruned``)."""
        hosted = self.matches.get(match_id)
        if hosted is not None and self.forget_pruned([hosted]):
            return None
        return hosted

    def running(self) -> list[HostedMatch]:
        """Matches not yet ended (waiting for their seats or being played)."""
        return [
            h
            for h in self._live.values()
            if h.match.phase in (MatchPhase.WAITING, MatchPhase.RUNNING)
        ]

    async def shutdown(self, grace_s: float, now: asyncio.Event | None = None) -> Shutdown:
        """Stop taking matches, let running ones end within ``grace_s`` (or until ``now``
        is set: a second signal), abort the rest; how many did which."""
        self.accepting = False
        live = self.running()
        tasks = [h.task for h in live if h.task is not None]
        aborted = 0
        if tasks:
            waiting = asyncio.ensure_future(asyncio.wait(tasks, timeout=grace_s))
            nudged = asyncio.ensure_future(now.wait()) if now is not None else None
            try:
                await asyncio.wait([w for w in (waiting, nudged) if w is not None],
                                   return_when=asyncio.FIRST_COMPLETED)  # fmt: skip
            finally:
                for w in (waiting, nudged):  # the waits, not the matches
                    if w is not None:
                        w.cancel()
            for hosted in self.running():
                aborted += 1
                hosted.match.abort("server shutting down")
            pending = [t for t in tasks if not t.done()]
            if pending:
                await asyncio.wait(pending, timeout=10)
        if self._retrying is not None:
            self._retrying.cancel()
        if not self.space.retry():
            log.error(
                "%d match record(s) lack their last lines (%s): the next start lists them as "
                "interrupted",
                len(self.space.unwritten),
                ", ".join(str(w.path) for w in self.space.unwritten),
            )
        return Shutdown(len(live) - aborted, aborted)
