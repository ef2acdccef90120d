"""Admission control: a server starts a match only when it can referee it fairly.

The limits, each off when None: how many matches may be waiting or running at once; how
late the event loop may run (its lag, measured by a ticker that asks to wake every
``TICK_S`` and notes how much later it woke) in absolute terms; how late relative to the
shortest decision clock in play (the new match's included); the server's own turnaround
(``Turnaround``: from a bot's reply read to the next request written, at the 99th
percentile of the last seconds) relative to that clock; and how many matches may be
starting at once, before their load can be measured (``start_burst``).

The relative limits are what keep a server offered more than it can referee fair: what the
server adds to a decision is added to every bot's, so new matches wait until it keeps up
again. The loop's lag alone under-reads it on a busy process (most likely because gRPC's own
thread waits for the interpreter before a reply even reaches the loop), so the turnaround
is measured too.
And both only see matches that play: a burst of matches created together would all be
admitted before any of them loads the server, so at most ``start_burst`` (or as many as
already play, if more) may be starting at a time.

A match the server has no room for (``no_room``) waits in the start queue
(``start_queue.StartQueue``) once its bots are connected, no clock running, and starts when
there is room, oldest first. CreateMatch is refused (RESOURCE_EXHAUSTED with the reason
SERVER_FULL and a retry hint; nothing is created) only at ``max_matches``, past the open
files the process may hold (``max_open_files``), or with the queue full, or, with no queue
(``max_queued`` 0), whenever there is no room.

The open files are weighed because a process out of them fails in ways nobody can act on:
its next record cannot be created, and gRPC stops accepting connections (it logs "File
descriptor limit reached" and retries), so bots and organisers of every match stall. Each
match waiting or running may hold its record and a connection per bot (``match_files``);
``files_reserve`` is kept for everything else. Refusing the match that would cross the
budget keeps the process below its limit whatever the bots do.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import math
import random
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

TICK_S = 0.1
#: How fast the lag estimate forgets: a one-off pause fades within a few seconds.
DECAY = 0.8
#: The turnaround's percentile is taken over the decisions of this many last seconds ...
TURNAROUND_WINDOW_S = 2.0
#: ... when there are at least this many (fewer say nothing about a percentile).
TURNAROUND_MIN_SAMPLES = 50
#: The most decisions kept (a window's worth at 10,000 decisions a second): what is noted
#: between two questions stays bounded, however long nobody asks.
TURNAROUND_MAX_SAMPLES = 20_000
#: Replies a match keeps waiting for the requests they precede (one, or two when a request's
#: write is noted after its reply was read); more means a request never noted, so the oldest
#: is dropped.
MAX_PENDING_REPLIES = 4
#: A match counts as starting (its load not yet in the measurements) for this long after
#: its first request ...
STARTING_S = 1.0
#: ... or, while its bots have not all connected, for at most this long after its creation
#: (bots that never come do not hold admission shut).
WAITING_S = 10.0
#: The most seats any rule set has: what a front, which does not know its workers' matches'
#: seats, counts for each.
MOST_PLAYERS = 4
#: Open files kept for what no match holds (``files_reserve``): an idle server holds about
#: 20 (its listeners, gRPC's and the event loop's own, logs, the catalog's database); the
#: rest is for organisers', spectators' and the viewer's connections ...
FILES_RESERVE_MIN = 128
#: ... which grow with the server, so a larger limit keeps a share of itself.
FILES_RESERVE_SHARE = 1 / 16


@dataclass(frozen=True, slots=True)
class AdmissionLimits:
    """When CreateMatch refuses: at ``max_matches`` matches waiting or running, or with the
    event loop ``max_loop_lag_ms`` late or more. None: no such limit."""

    max_matches: int | None = None
    # A loop a full second late cannot keep any clock honest.
    max_loop_lag_ms: int | None = 1000
    #: The lag allowed, as a share of the shortest decision clock in play: at 100 ms per
    #: decision a loop 10 ms late refuses new matches (what it adds to each decision is
    #: then a small part of every bot's time) ...
    max_lag_share: float | None = 0.1
    #: ... but never below this: a timer's own jitter and a collection pause are not load.
    #: The same share and floor bound the server's turnaround.
    min_lag_ms: int = 10
    #: Matches that may be starting at once (created and not yet playing, or playing for
    #: less than ``STARTING_S``), or as many as already play if more: the load grows by at
    #: most double between measurements.
    start_burst: int | None = 16
    #: What a refusal suggests: retry after this long (ErrorInfo metadata retry_after_ms).
    retry_after_ms: int = 1000
    #: Matches that may wait to start: for their bots, or in the start queue
    #: (``start_queue``: their bots connected, no clock running, until the limits above let
    #: them start). Past it CreateMatch is refused. 0: no queue; CreateMatch refuses a match
    #: the server has no room for.
    max_queued: int = 1024
    #: The process's open-files limit (the soft RLIMIT_NOFILE, once raised to the hard
    #: one): CreateMatch is refused when the matches waiting or running and the new one
    #: could need more than ``files_budget`` of it. None: not weighed.
    max_open_files: int | None = None

    def __post_init__(self) -> None:
        if self.max_matches is not None and self.max_matches < 1:
            raise ValueError(
                f"max_matches must be at least 1 (or no limit), got {self.max_matches}"
            )
        if self.max_loop_lag_ms is not None and self.max_loop_lag_ms < 1:
            raise ValueError(
                f"max_loop_lag_ms must be at least 1 (or no limit), got {self.max_loop_lag_ms}"
            )
        if self.max_lag_share is not None and not 0 < self.max_lag_share <= 1:
            raise ValueError(
                f"max_lag_share must be in (0, 1] (or no limit), got {self.max_lag_share}"
            )
        if self.start_burst is not None and self.start_burst < 1:
            raise ValueError(
                f"start_burst must be at least 1 (or no limit), got {self.start_burst}"
            )
        if self.max_queued < 0:
            raise ValueError(f"max_queued must be 0 (no queue) or more, got {self.max_queued}")
        if self.max_open_files is not None and self.max_open_files < 0:
            raise ValueError(
                f"max_open_files must be 0 or more (or not weighed), got {self.max_open_files}"
            )


def match_files(bots: int) -> int:
    """The most open files a match with ``bots`` seats played over the network holds in a
    single server: its record, and a connection per bot (each may connect on its own)."""
    return 1 + bots


def files_reserve(limit: int) -> int:
    """Of an open-files ``limit``, what is kept for what no match holds (listeners, logs,
    organisers, spectators, the viewer): ``FILES_RESERVE_MIN``, or a share of a large limit."""
    return max(FILES_RESERVE_MIN, int(limit * FILES_RESERVE_SHARE))


def files_budget(limit: int) -> int:
    """Of an open-files ``limit``, what the matches waiting or running may hold."""
    return max(0, limit - files_reserve(limit))


def matches_within(limit: int, files_each: int) -> int:
    """How many matches needing ``files_each`` open files each fit an open-files ``limit``."""
    return files_budget(limit) // files_each


#: How a refusal for the open-files limit tells the operator to raise it.
RAISE_OPEN_FILES = (
    "raise the hard limit where the server is started (`ulimit -Hn` in its shell, "
    "`LimitNOFILE=` in its systemd unit, `--ulimit nofile=` for a container)"
)


class ServerFullError(Exception):
    """A match admission let in cannot be created for want of a resource the server is out
    of for now (open files): refused as admission refuses (SERVER_FULL, with a retry hint),
    not as a fault of the request or of the disk. The message says what and how to fix it."""


def open_files_limit() -> int | None:
    """This process's soft open-files limit; None where there is none (Windows) or it is
    unlimited."""
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows has no rlimits
        return None
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return None if soft == resource.RLIM_INFINITY else soft


def out_of_files(exc: OSError, what: str) -> str | None:
    """What ``exc``, met opening ``what``, says when the process (EMFILE) or the whole system
    (ENFILE) is out of open files, naming the limit and how to raise it; None for any other
    error (a full or read-only disk is another matter)."""
    if exc.errno == errno.EMFILE:
        limit = open_files_limit()
        of = "its limit" if limit is None else f"its limit of {limit} (RLIMIT_NOFILE)"
        return (
            f"too many open files: the server process has opened {of} and cannot open "
            f"{what}; create the match when one has ended, or {RAISE_OPEN_FILES}"
        )
    if exc.errno == errno.ENFILE:
        return (
            f"too many open files in the system: the machine's table of open files is full "
            f"and the server cannot open {what}; create the match later, or raise the "
            "system's limit (`sysctl fs.file-max`)"
        )
    return None


class LoopLag:
    """The event loop's recent lateness in milliseconds (a decaying maximum)."""

    def __init__(self) -> None:
        self.ms = 0.0
        self._task: asyncio.Task[None] | None = None
        #: Called after every measurement (every ``TICK_S``): the server's one clock for
        #: what looks again at the load (the start queue).
        self.on_tick: list[Callable[[], None]] = []

    def start(self) -> None:
        """Start measuring on the running loop."""
        self._task = asyncio.get_running_loop().create_task(self._tick())

    async def stop(self) -> None:
        """Stop measuring."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def note(self, late_ms: float) -> None:
        """Take one measurement: a new high is kept at once, and it fades slowly."""
        self.ms = max(late_ms, self.ms * DECAY)

    async def _tick(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            due = loop.time() + TICK_S
            await asyncio.sleep(TICK_S)
            self.note(max(0.0, (loop.time() - due) * 1000))
            for listener in self.on_tick:
                listener()


#: Refusals and admissions are counted over this many last seconds for the retry hint.
HINT_WINDOW_S = 5.0
#: The hint is at most this many times the base.
HINT_MAX_FACTOR = 30.0
#: The most refusals and admissions kept each.
HINT_MAX_EVENTS = 10_000


class RetryHint:
    """How long a refused organiser is asked to wait (``retry_after_ms``): the base while
    few ask, longer while many do, so the organisers waiting ask about as often as the
    server admits matches instead of every second each (a refused CreateMatch costs the
    server about 2 ms of CPU, four decisions' worth: 200 organisers asking each second took
    a third of the process). With W organisers waiting and A matches admitted a second,
    each asking every h seconds makes W/h refusals a second; the hint settles at
    h = base * sqrt(W/A / base), the geometric mean of the base and the wait that would
    match them one for one. Spread by up to half again at random, so waiters do not come
    back together. (Simulated: 200 organisers waiting, 4 admissions a second: it settles at
    5-7 s, where sqrt(50 s) is 7 s; tests/rpc/test_admission.py.)"""

    def __init__(
        self,
        base_ms: int,
        window_s: float = HINT_WINDOW_S,
        clock: Callable[[], float] = time.monotonic,
        rng: Callable[[], float] = random.random,
    ) -> None:
        self.base_ms = base_ms
        self.window_s = window_s
        self.clock = clock
        self.rng = rng
        # Bounded: admissions are noted at every CreateMatch, and pruned only when one is
        # refused (a window's worth at 2,000 a second).
        self._refused: deque[float] = deque(maxlen=HINT_MAX_EVENTS)
        self._admitted: deque[float] = deque(maxlen=HINT_MAX_EVENTS)
        self._factor = 1.0
        self._factor_at = -math.inf

    def refused(self) -> None:
        """A CreateMatch was refused."""
        self._refused.append(self.clock())

    def admitted(self) -> None:
        """A CreateMatch was admitted."""
        self._admitted.append(self.clock())

    def ms(self) -> int:
        """The wait to ask of an organiser refused now, in milliseconds."""
        now = self.clock()
        if now - self._factor_at >= 1.0:  # once a second: each answer moves it half-way
            for times in (self._refused, self._admitted):
                while times and times[0] < now - self.window_s:
                    times.popleft()
            refusals = len(self._refused)
            admissions = max(len(self._admitted), 1)
            # The refusals per admission over the window answer the factor given out: the
            # waiters ask less often as it grows (refusals/admissions = W/(A*h)), so
            # sqrt(factor * ratio) is where it settles. It moves half-way there (in log
            # terms) each second: waiters still hold older hints, and a full step swings.
            ratio = refusals / admissions
            target = math.sqrt(self._factor * ratio)
            self._factor = min(max(math.sqrt(self._factor * target), 1.0), HINT_MAX_FACTOR)
            self._factor_at = now
        return int(self.base_ms * self._factor * (1 + 0.5 * self.rng()))


class Turnaround:
    """The server's own time per decision over the last ``TURNAROUND_WINDOW_S``: from a
    bot's reply read off its stream to the next request of that match written to its bot
    (judging, the engine, the record, the observation, the encoding, and every wait on the
    event loop and for the interpreter in between). One per server process; each match
    notes through its ``MatchTiming``."""

    def __init__(
        self,
        window_s: float = TURNAROUND_WINDOW_S,
        min_samples: int = TURNAROUND_MIN_SAMPLES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.window_s = window_s
        self.min_samples = min_samples
        self.clock = clock
        #: When each decision's turnaround ended, and how long it was, oldest first: two
        #: deques, so that a percentile sorts the seconds in C without a pass in Python.
        self._when: deque[float] = deque(maxlen=TURNAROUND_MAX_SAMPLES)
        self._seconds: deque[float] = deque(maxlen=TURNAROUND_MAX_SAMPLES)
        self._p99: float | None = None
        self._p99_at = -1.0

    def match(self) -> MatchTiming:
        """The timing of a new match."""
        return MatchTiming(self, self.clock())

    def note(self, when: float, seconds: float) -> None:
        """One decision's turnaround, ended at ``when``."""
        self._when.append(when)
        self._seconds.append(seconds)

    def p99_ms(self) -> float | None:
        """The 99th percentile over the window in milliseconds; None with too few decisions
        in it. A percentile is recomputed at most every ``TICK_S`` (CreateMatch asks at every
        call); too few decisions is looked at again at every call (cheap), so the first
        percentile is there as soon as its decisions are."""
        now = self.clock()
        if self._p99 is not None and now - self._p99_at < TICK_S:
            return self._p99
        when, seconds = self._when, self._seconds
        oldest = now - self.window_s
        while when and when[0] < oldest:
            when.popleft()
            seconds.popleft()
        self._p99_at = now
        if len(seconds) < self.min_samples:
            self._p99 = None
        else:
            ordered = sorted(seconds)
            self._p99 = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))] * 1000
        return self._p99


class MatchTiming:
    """One match's side of ``Turnaround``, fed by its seats' transport: when it was created,
    when its first request was written (it started playing), and its replies not yet
    followed by a request."""

    __slots__ = ("_meter", "_replies", "created", "released", "started")

    def __init__(self, meter: Turnaround, created: float) -> None:
        self._meter = meter
        # Oldest first. The transport notes a request as written when the stream asks for
        # its next message, which can come after the bot's reply to it was read: the reply
        # before waits here for that request instead of being overwritten (a turnaround
        # lost, as a loaded CI run showed).
        self._replies: deque[float] = deque(maxlen=MAX_PENDING_REPLIES)
        self.created = created
        #: When the match was let start (``start_queue.StartQueue``); None before.
        self.released: float | None = None
        self.started: float | None = None

    def replied(self, when: float) -> None:
        """A bot's awaited reply was read at ``when`` (``time.monotonic``)."""
        self._replies.append(when)

    def requested(self, when: float) -> None:
        """A decision request was written at ``when``: the turnaround since the oldest reply
        it follows."""
        if self.started is None:
            self.started = when
        if self._replies:
            self._meter.note(when, when - self._replies.popleft())

    def starting(self, now: float) -> bool:
        """Whether the match's load is not yet in the measurements: let start but not
        playing yet (for ``WAITING_S`` at most) or playing for less than ``STARTING_S``. A
        match not let start yet (its bots still coming, or in the start queue) is no load."""
        if self.released is None:
            return False
        if self.started is None:
            return now - self.released < WAITING_S
        return now - self.started < STARTING_S


@dataclass(frozen=True, slots=True)
class Load:
    """What admission control weighs before a new match."""

    #: Matches waiting or running.
    active: int
    #: The shortest decision clock in play, the new match's included; None where the loop
    #: lag is not weighed against the clocks (a front: its workers' loops referee).
    shortest_clock_ms: int | None
    #: The server's turnaround at the 99th percentile (``Turnaround``); None
    #: where not known (too few decisions lately, or a front).
    turnaround_ms: float | None = None
    #: Of the ``active`` matches, those starting: their load not measured yet.
    starting: int = 0
    #: Of the ``active`` matches, those not let start yet (waiting for their bots, or in
    #: the start queue).
    queued: int = 0
    #: The open files the matches waiting or running may hold (``match_files`` each; with
    #: ``max_open_files`` weighed) ...
    files: int = 0
    #: ... and what the new match would add.
    new_files: int = 0


def refusal(limits: AdmissionLimits, load: Load, lag_ms: float) -> str | None:
    """Why CreateMatch must refuse a new match now, or None to create it (``lag_ms``: the
    event loop's lag now). With a start queue (``max_queued`` above 0) a match the server
    has no room for yet waits in it, and only a full queue refuses; without one,
    ``no_room`` refuses it."""
    active, queued = load.active, load.queued
    if limits.max_matches is not None and active >= limits.max_matches:
        return (
            f"the server is at its limit of {limits.max_matches} matches waiting or running; "
            "create the match when one has ended"
        )
    if limits.max_open_files is not None:
        why = files_refusal(limits.max_open_files, load)
        if why is not None:
            return why
    if limits.max_queued > 0:
        if queued >= limits.max_queued:
            return (
                f"the server's start queue is full: {queued} matches wait to start (for "
                "their bots, or for room to be played); try later"
            )
        return None
    return no_room(limits, load, lag_ms)


def files_refusal(limit: int, load: Load) -> str | None:
    """Why the new match would take the process past its open-files ``limit``'s budget
    (``files_budget``), or None."""
    budget = files_budget(limit)
    if load.files + load.new_files <= budget:
        return None
    return (
        f"the server is at its open-files limit: the process may open {limit} files "
        f"(RLIMIT_NOFILE), {files_reserve(limit)} of them kept for listeners, organisers and "
        f"spectators; its {load.active} matches waiting or running may hold {load.files} "
        f"with their records and bots' connections, and this one {load.new_files} more. "
        f"Create the match when one has ended, or {RAISE_OPEN_FILES}"
    )


def no_room(limits: AdmissionLimits, load: Load, lag_ms: float) -> str | None:
    """Why the server has no room to start another match now (it would be served late), or
    None. Of the ``load``: ``active``, the matches let start and not ended (with a start
    queue; without, every match waiting or running); the shortest clock, the turnaround and
    the matches still starting (``MatchTiming.starting``); ``lag_ms``: the event loop's lag
    now."""
    active, starting = load.active, load.starting
    shortest_clock_ms, turnaround_ms = load.shortest_clock_ms, load.turnaround_ms
    if limits.max_loop_lag_ms is not None and lag_ms >= limits.max_loop_lag_ms:
        return (
            f"the server is overloaded (its event loop runs {lag_ms:.0f} ms late, the limit is "
            f"{limits.max_loop_lag_ms} ms): it could not referee another match fairly; try later"
        )
    if limits.max_lag_share is not None and shortest_clock_ms is not None:
        allowed = max(limits.min_lag_ms, limits.max_lag_share * shortest_clock_ms)
        if lag_ms >= allowed:
            return (
                f"the server is at capacity (its event loop runs {lag_ms:.1f} ms late, at least "
                f"{allowed:g} ms: {limits.max_lag_share:.0%} of the shortest decision clock in "
                f"play, {shortest_clock_ms} ms): another match would be served late; try later"
            )
        # Only while matches play: the last seconds of a load that has ended say nothing.
        if turnaround_ms is not None and turnaround_ms >= allowed and active > starting:
            return (
                f"the server is at capacity (from a bot's reply to the next request it takes "
                f"{turnaround_ms:.1f} ms at the 99th percentile of the last "
                f"{TURNAROUND_WINDOW_S:g} s, at least {allowed:g} ms: "
                f"{limits.max_lag_share:.0%} of the shortest decision clock in play, "
                f"{shortest_clock_ms} ms): another match would be served late; try later"
            )
    if limits.start_burst is not None:
        playing = active - starting
        allowed_starting = max(limits.start_burst, playing)
        if starting >= allowed_starting:
            why = (
                "the start burst"
                if playing <= limits.start_burst
                else f"as many as the {playing} matches already playing"
            )
            return (
                f"{starting} matches are starting and their load is not measured yet; at most "
                f"{allowed_starting} may be starting at once ({why}): try again in a moment"
            )
    return None
