"""The match loop: ask the seat to move, enforce its clock and the policies, record everything."""

from __future__ import annotations

import asyncio
import logging
import random
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from importlib import metadata

from medina.engine import (
    Action,
    GameState,
    IllegalActionError,
    LegalMoves,
    apply_action,
    is_legal,
    legal_moves,
    observe,
    result,
)
from medina.engine.notation import squares_named
from medina.engine.turn import explain

from . import clock as clk
from .clock import DecisionClock, SeatClock
from .config import MatchSettings, TimeoutPolicy, seat_label
from .outcome import MatchOutcome, SeatOutcome, Termination, ranks_with_forfeits
from .record import (
    DecisionEntry,
    DecisionSource,
    ErrorCode,
    Header,
    Incident,
    IncidentKind,
    RecordSink,
    RecordWriteError,
    Rejection,
    SeatInfo,
)
from .seat import (
    AbortSignal,
    ClockView,
    DecisionRequest,
    ForfeitNotice,
    MatchEnd,
    MatchObserver,
    ProcessExitSignal,
    RejectionNotice,
    ReplySignal,
    RequestWrittenSignal,
    Seat,
    Signal,
    StartSignal,
)
from .seat_state import SeatState
from .view import MatchPhase, MatchView

log = logging.getLogger("medina.referee")

#: The distributions that may carry this code, the published one first (``make dist``
#: builds ``medina-arena``; the development checkout installs ``medina-arena-dev``).
DISTRIBUTIONS = ("medina-arena", "medina-arena-dev")


def writer_name(distributions: Sequence[str] = DISTRIBUTIONS) -> str:
    """What a record's header names as its writer: ``medina-arena`` and the installed
    version, from the package metadata (so records never lie after a version bump);
    ``medina-arena (version unknown)`` when run from a tree that is not installed."""
    for dist in distributions:
        try:
            return f"medina-arena {metadata.version(dist)}"
        except metadata.PackageNotFoundError:
            continue
    return "medina-arena (version unknown)"


WRITER = writer_name()


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


class _Aborted(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def utc_now() -> str:
    """The current time, RFC 3339 UTC with milliseconds."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Match:
    """One match between seats. Create it, attach seats, then ``await run()``.

    Seats (and the transport behind them) report through ``submit``; the match
    never blocks on a seat: every wait has a deadline from the clock.
    """

    def __init__(
        self,
        match_id: str,
        settings: MatchSettings,
        seats: Sequence[Seat],
        sink: RecordSink,
        *,
        connected: Sequence[bool] | None = None,
        writer: str = WRITER,
        ready: Callable[[], None] | None = None,
    ) -> None:
        """``ready``: called once every seat is connected (or forfeited); the match then
        waits, no clock running, for a ``StartSignal`` (a host's start queue). None: it
        starts at once."""
        n = settings.players
        if len(seats) != n:
            raise ValueError(f"{len(seats)} seats given for a {n}-player match")
        self.match_id = match_id
        self.settings = settings
        self.seats = list(seats)
        self.sink = sink
        self.writer = writer
        self._ready = ready
        self.state: GameState = settings.new_game()
        self.phase = MatchPhase.WAITING
        #: One record per seat (its connection, bot, forfeit, strikes, clock, cursors).
        self.seat_states = [
            SeatState(
                SeatClock.start(settings.time),
                connected=bool(connected and connected[seat]),
                ever_connected=bool(connected and connected[seat]),
            )
            for seat in range(n)
        ]
        self.outcome: MatchOutcome | None = None
        #: Why the record could not be written (the first failure), once it could not: the
        #: match then ends, aborted with it.
        self.record_problem = ""
        self._inbox: deque[Signal] = deque()
        #: What ``_next_signal`` is waiting on, and the timer that ends the wait (due at
        #: ``_timer_due_ns``).
        self._waiter: asyncio.Future[None] | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._timer_due_ns = 0
        #: The decision being waited for (its clock), while ``_decide`` waits.
        self._awaited: DecisionClock | None = None
        self._observers: dict[MatchObserver, int] = {}
        self._rng = random.Random(f"referee:{settings.seed}")
        self._next_request = 1
        #: The state of the last decision request: the next one's scores are reused from it
        #: where the actions between changed nothing that scores.
        self._requested: GameState | None = None
        self._done = asyncio.Event()
        #: Server-measured seconds from sending each accepted request to its reply (benchmarks).
        self.reply_seconds: list[float] = []

    # -- inputs -------------------------------------------------------------------------

    def submit(self, signal: Signal) -> None:
        """Deliver a seat's reply or connection change, a request's write, or an abort."""
        if type(signal) is RequestWrittenSignal:
            self._request_written(signal)
            return
        self._inbox.append(signal)
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def abort(self, reason: str) -> None:
        """Ask the match to stop; its record is completed with an ABORTED outcome."""
        self.submit(AbortSignal(reason))

    def seat_label(self, seat: int) -> str:
        """How results and viewers name ``seat``: the organiser's name for it when one was
        given (a tournament's bot name: two bots that both call themselves ``stdiobot`` in
        their handshake stay apart), else the name its bot gave when it connected, else
        ``seat N``. The handshake's name is kept beside it in the record's header."""
        names = self.settings.seat_names
        configured = names[seat] if names else ""
        return seat_label(seat, configured, self.seat_states[seat].bot_name)

    def process_exited(self, seat: int, detail: str) -> None:
        """The program playing ``seat`` exited: it forfeits as CRASHED at once."""
        self.submit(ProcessExitSignal(seat, detail))

    def watch(self, observer: MatchObserver) -> tuple[int, MatchOutcome | None]:
        """Subscribe ``observer``; returns the history length it starts after and the
        outcome if the match has already ended."""
        if self.outcome is None:
            self._observers[observer] = self.state.n_events
        return self.state.n_events, self.outcome

    def unwatch(self, observer: MatchObserver) -> None:
        """Unsubscribe a spectator."""
        self._observers.pop(observer, None)

    @property
    def watchers(self) -> int:
        """Spectators subscribed now (each told of every decision by the referee): a gRPC
        ``Watch`` stream each, and the viewer's one per match however many pages follow it."""
        return len(self._observers)

    def is_forfeited(self, seat: int) -> bool:
        """Whether ``seat`` has forfeited (a bot may not take it up again)."""
        return self.seat_states[seat].forfeited

    def view(self) -> MatchView:
        """A frozen snapshot of the match and its seats (what the viewer and /metrics read)."""
        return MatchView(
            match_id=self.match_id,
            settings=self.settings,
            phase=self.phase,
            state=self.state,
            outcome=self.outcome,
            seats=tuple(
                st.view(seat, self.seat_label(seat)) for seat, st in enumerate(self.seat_states)
            ),
        )

    async def wait_done(self) -> None:
        """Wait until the match has finished or been aborted."""
        await self._done.wait()

    # -- the loop ------------------------------------------------------------------------

    async def run(self) -> MatchOutcome:
        """Play the match to its end (or abort) and return the outcome."""
        try:
            await self._wait_for_seats()
            if not any(st.ever_connected for st in self.seat_states):
                return self._abandon()
            if self._ready is not None:
                await self._wait_for_room(self._ready)
            self._start()
            self._check_record()
            while not self.state.over:
                await self._step()
                self._check_record()
            return self._finish(complete=True, reason="")
        except _Aborted as exc:
            return self._finish(complete=False, reason=exc.reason)
        except asyncio.CancelledError:
            self._finish(complete=False, reason="match task cancelled")
            raise
        except Exception as exc:  # a bug must cost one match, never the server or the record
            log.exception("match %s: internal error", self.match_id)
            return self._finish(
                complete=False, reason=f"internal error ({exc.__class__.__name__}: {exc})"
            )
        finally:
            self._done.set()

    def _check_record(self) -> None:
        """Abort once the record could not be written: a match is played only as far as its
        record keeps it (its sink keeps the rest in order, to complete it when it can)."""
        if self.record_problem:
            raise _Aborted(self.record_problem)

    def _record_failed(self, exc: RecordWriteError) -> None:
        if not self.record_problem:
            # Bots read this reason: it names the problem, not the server's paths.
            self.record_problem = f"the match record could not be written ({exc})"
            log.warning("match %s: %s", self.match_id, self.record_problem)

    async def _wait_for_seats(self) -> None:
        deadline = clk.after(self._now_ns(), self.settings.connect_timeout_ms)
        while not all(st.connected or st.forfeited for st in self.seat_states):
            signal = await self._next_signal(deadline)
            if signal is None:
                break
            self._handle_background(signal)
        for seat, st in enumerate(self.seat_states):
            if not st.connected and not st.forfeited:
                seconds = clk.seconds_of_ms(self.settings.connect_timeout_ms)
                self._forfeit(
                    seat,
                    Termination.NO_SHOW,
                    f"its bot never connected ({seconds:g} s connect deadline)",
                )

    async def _wait_for_room(self, ready: Callable[[], None]) -> None:
        """Say the seats are ready and wait for the host's ``StartSignal``; connections come
        and go meanwhile, and an abort ends the wait."""
        ready()
        while True:
            # No deadline of its own: the wait is the host's to end (a timer due in an hour
            # only bounds one wait of the loop).
            signal = await self._next_signal(clk.after(self._now_ns(), 3_600_000))
            if isinstance(signal, StartSignal):
                return
            if signal is not None:
                self._handle_background(signal)

    def _start(self) -> None:
        """Write the header, then who connected, who left, and who forfeited while waiting.

        A bot that connected and left while the match waited to start (in a host's start
        queue) is away from the start, as if it had left then: its reconnect grace runs from
        now, and it forfeits as disconnected (or crashed) if it does not come back. It came,
        so it is no no-show."""
        self._write_header()
        self.phase = MatchPhase.RUNNING
        now = self._now_ns()
        for seat, st in enumerate(self.seat_states):
            if st.connected:
                self._incident(IncidentKind.CONNECTED, seat, st.bot_name)
            elif st.ever_connected and not st.forfeited:
                self._incident(IncidentKind.CONNECTED, seat, st.bot_name)
                self._incident(
                    IncidentKind.DISCONNECTED, seat, "its stream ended before the match started"
                )
                grace_ms = self.settings.policies.reconnect_grace_ms
                st.reconnect_by_ns = clk.after(now, grace_ms)
            forfeit = st.forfeit
            if forfeit is not None:
                self._incident(IncidentKind.FORFEIT, seat, forfeit[1], forfeit[0])

    def _write_header(self) -> None:
        # The setup as dealt, before any scripted opening placed pieces of its own.
        s = replace(self.settings, opening=()).new_game() if self.settings.opening else self.state
        seats = tuple(
            SeatInfo(seat, self.settings.seat_name(seat), st.bot_name, st.bot_version)
            for seat, st in enumerate(self.seat_states)
        )
        merchant = (s.merchants & -s.merchants).bit_length() - 1 if s.merchants else -1
        header = Header(
            match_id=self.match_id,
            settings=self.settings,
            well=s.well,
            start_merchant=merchant,
            seats=seats,
            started_at=utc_now(),
            writer=self.writer,
        )
        try:
            self.sink.header(header)
        except RecordWriteError as exc:
            self._record_failed(exc)

    async def _step(self) -> None:
        s = self.state
        seat = s.to_move
        index = s.decisions
        if self.seat_states[seat].forfeited:
            self._broadcast(exclude=-1)
            action = self._random_action()
            entry = DecisionEntry(index, seat, 0, action, 0, (), DecisionSource.FALLBACK)
        else:
            entry = await self._decide(seat)
            # News for the other seats goes out once the decider has answered, off its
            # critical path (so a turn reaches the others with the next turn's first reply).
            if self._broadcast(exclude=seat):
                await asyncio.sleep(0)  # let the updates go out before the next request
        self.state = apply_action(
            s, entry.action, by_referee=entry.source is not DecisionSource.BOT
        )
        try:
            self.sink.decision(entry)
        except RecordWriteError as exc:
            self._record_failed(exc)

    def _broadcast(self, exclude: int) -> bool:
        """Send news to spectators, and to seats at turn boundaries.

        Seats hear of a turn once it has ended (their next request carries
        everything anyway); ``exclude`` is the seat whose request carried it.
        """
        s = self.state
        n = s.n_events
        sent = False
        if s.placed == 0 or s.over:  # a turn is over
            for seat, (obj, st) in enumerate(zip(self.seats, self.seat_states, strict=True)):
                first = st.update_cursor
                if seat != exclude and first < n:
                    if obj.update(first, s.events_since(first)) is not False:
                        sent = True
                    st.update_cursor = n
        for observer, first in list(self._observers.items()):
            if first < n:
                observer.on_events(first, s.events_since(first))
                self._observers[observer] = n
                sent = True
        return sent

    def _strikes_left(self, seat: int) -> int:
        """Timeouts ``seat`` may still take before the next one forfeits it."""
        policies = self.settings.policies
        if policies.on_timeout is TimeoutPolicy.FORFEIT:
            return 0
        return max(0, policies.max_strikes - self.seat_states[seat].strikes - 1)

    def _random_action(self) -> Action:
        moves = legal_moves(self.state)
        return moves.nth(self._rng.randrange(len(moves)))

    async def _decide(self, seat: int) -> DecisionEntry:
        s = self.state
        st = self.seat_states[seat]
        clock = st.clock
        rid = self._next_request
        self._next_request += 1
        legal = legal_moves(s)
        first = st.request_cursor
        st.request_cursor = s.n_events
        st.update_cursor = s.n_events
        observation = observe(s, seat, since=first, known=self._requested)
        self._requested = s
        awaited = DecisionClock.for_seat(seat, rid, clock)

        has_bank = self.settings.time.bank_ms > 0
        strikes_left = self._strikes_left(seat)

        def view(now_ns: int) -> ClockView:
            return ClockView(
                awaited.time_left_ms(now_ns),
                clock.bank_ms,
                clock.last_reply_ms,
                st.strikes,
                has_bank,
                strikes_left,
            )

        request = DecisionRequest(
            rid,
            seat,
            observation,
            legal,
            ClockView(
                clock.allowed_ms(),
                clock.bank_ms,
                clock.last_reply_ms,
                st.strikes,
                has_bank,
                strikes_left,
            ),
        )
        writes = bool(self.seats[seat].request(request))
        # The seat's clock starts once the request is handed to the transport: building and
        # converting it is server work, not the seat's time. A transport that reports when
        # it actually wrote the request (RequestWrittenSignal) starts it then, so a server
        # backlog is never charged to the bot; a write that does not come within another
        # full allowance (a bot that stopped reading its stream) is the bot's timeout.
        awaited.start(self._now_ns(), awaiting_write=writes)
        self._awaited = awaited
        try:
            return await self._await_decision(awaited, legal, view)
        finally:
            self._awaited = None

    async def _await_decision(
        self, awaited: DecisionClock, legal: LegalMoves, view: Callable[[int], ClockView]
    ) -> DecisionEntry:
        """Wait for the seat's accepted reply, judging and refusing as it comes."""
        s = self.state
        seat, rid = awaited.seat, awaited.request_id
        st = self.seat_states[seat]
        rejections: list[Rejection] = []
        while True:
            signal = await self._next_signal(awaited.hard_deadline_ns, seat)
            if signal is None:
                if st.forfeited:
                    return self._settle_forfeit(seat, awaited, rejections)
                return self._timeout(seat, awaited, rejections, Termination.TIMEOUT)
            if isinstance(signal, ReplySignal) and signal.seat == seat and signal.request_id == rid:
                action = signal.action
                rejection = self._judge_reply(action, signal.error, signal.raw)
                if rejection is None:
                    assert action is not None  # a reply without an action is always refused
                    received = clk.ns(signal.received_at)
                    self.reply_seconds.append(clk.seconds(received - awaited.sent_at_ns))
                    used = awaited.reply_used_ns(received)
                    st.clock.charge(used)
                    self.seats[seat].close_request(rid)
                    return DecisionEntry(
                        s.decisions,
                        seat,
                        rid,
                        action,
                        clk.ms(used),
                        tuple(rejections),
                        DecisionSource.BOT,
                    )
                rejections.append(rejection)
                left = self.settings.policies.max_rejections - len(rejections)
                if left < 0:
                    return self._timeout(seat, awaited, rejections, Termination.ILLEGAL_ACTION)
                self.seats[seat].reject(
                    RejectionNotice(
                        rid,
                        rejection.code,
                        rejection.rule,
                        rejection.message,
                        left,
                        view(self._now_ns()),
                        self._squares_of(rejection),
                    )
                )
                continue
            reconnected = self._handle_background(signal)
            if awaited.awaiting_write and not st.connected:
                # Gone before the write: a disconnected seat's clock runs from the queueing.
                awaited.awaiting_write = False
            if reconnected == seat:
                self.seats[seat].request(
                    DecisionRequest(
                        rid, seat, observe(self.state, seat), legal, view(self._now_ns())
                    )
                )
            elif st.forfeited:
                return self._settle_forfeit(seat, awaited, rejections)

    def _judge_reply(
        self, action: Action | None, error: str, raw: bytes | None = None
    ) -> Rejection | None:
        """None when the reply is accepted, else why it is refused (``raw``: the undecodable
        action as sent, kept in the record)."""
        if action is None or not is_legal(self.state, action):
            return self._rejection(action, error, raw)
        return None

    def _rejection(self, action: Action | None, error: str, raw: bytes | None = None) -> Rejection:
        if action is None:
            return Rejection(None, ErrorCode.MALFORMED_ACTION, "malformed", error, raw)
        try:
            exc: IllegalActionError = explain(self.state, action)
        except Exception as bad:  # explaining must never kill the match
            log.exception("match %s: explaining %r failed", self.match_id, action)
            exc = IllegalActionError("illegal", f"illegal action ({bad.__class__.__name__})")
        return Rejection(action, ErrorCode.ILLEGAL_ACTION, exc.rule, exc.message)

    def _squares_of(self, rejection: Rejection) -> tuple[int, ...]:
        """The squares a refusal names: the action's own first, then those of its message."""
        g = self.state.rules.geometry
        named = squares_named(g, rejection.message)
        action = rejection.action
        if action is None or not 0 <= action.square < g.size:
            return named
        return (action.square, *(sq for sq in named if sq != action.square))

    def _timeout(
        self,
        seat: int,
        awaited: DecisionClock,
        rejections: list[Rejection],
        cause: Termination,
    ) -> DecisionEntry:
        """The seat ran out of time or retries: strike, random action or forfeit."""
        rid = awaited.request_id
        st = self.seat_states[seat]
        self.seats[seat].close_request(rid)
        st.strikes += 1
        policies = self.settings.policies
        what = (
            "ran out of time" if cause is Termination.TIMEOUT else "sent too many illegal actions"
        )
        self._incident(IncidentKind.TIMEOUT, seat, f"{what}; strike {st.strikes}")
        used = awaited.used_ns(self._now_ns())
        st.clock.charge(used)
        if policies.on_timeout is TimeoutPolicy.FORFEIT or st.strikes >= policies.max_strikes:
            detail = f"{what} ({st.strikes} strike(s))"
            if not st.connected and st.ever_connected:
                # Its connection went first: the strikes came while it was away, so the
                # first cause is the crash or disconnect, which standings must charge.
                lost = "crashed" if st.crashed else "disconnected"
                cause = st.lost_as
                detail = f"{lost} and did not come back before its strikes ran out ({detail})"
            self._forfeit(seat, cause, detail)
            source = DecisionSource.FALLBACK
        else:
            source = DecisionSource.TIMEOUT
        return DecisionEntry(
            self.state.decisions,
            seat,
            rid,
            self._random_action(),
            clk.ms(used),
            tuple(rejections),
            source,
        )

    def _settle_forfeit(
        self, seat: int, awaited: DecisionClock, rejections: list[Rejection]
    ) -> DecisionEntry:
        """The seat forfeited while deciding: the fallback decides for it."""
        rid = awaited.request_id
        st = self.seat_states[seat]
        self.seats[seat].close_request(rid)
        if not st.forfeited:
            self._forfeit(seat, st.lost_as, "did not reconnect in time")
        used = awaited.used_ns(self._now_ns())
        return DecisionEntry(
            self.state.decisions,
            seat,
            rid,
            self._random_action(),
            clk.ms(used),
            tuple(rejections),
            DecisionSource.FALLBACK,
        )

    @staticmethod
    def _now_ns() -> int:
        """The event loop's time, in the clock's nanoseconds."""
        return clk.ns(asyncio.get_running_loop().time())

    async def _next_signal(self, deadline_ns: int, seat: int = -1) -> Signal | None:
        """The next signal; None at ``deadline_ns`` (or the awaited decision's deadline,
        which a late write can move) or when the awaited ``seat`` forfeits because its
        reconnect grace ran out."""
        inbox = self._inbox
        loop = asyncio.get_running_loop()
        while True:
            if inbox:
                return inbox.popleft()
            now = clk.ns(loop.time())
            self._expire_reconnects(now)
            if seat >= 0 and self.seat_states[seat].forfeited:
                return None
            awaited = self._awaited
            due = awaited.hard_deadline_ns if awaited is not None else deadline_ns
            until = due
            for st in self.seat_states:
                if st.reconnect_by_ns is not None:
                    until = min(until, st.reconnect_by_ns)
            if now >= until:
                if awaited is not None and until == due and awaited.excuse_lateness(now - due):
                    continue
                return None
            # One future and one timer per wait, not a Queue.get and a timeout scope: this
            # runs on every decision.
            waiter = loop.create_future()
            self._waiter = waiter
            self._timer = loop.call_at(clk.loop_time(until), _wake, waiter)
            self._timer_due_ns = until
            try:
                await waiter
            finally:
                self._timer.cancel()
                self._waiter = self._timer = None

    def _request_written(self, signal: RequestWrittenSignal) -> None:
        """The transport wrote a request: if it is the awaited one, its clock starts now.

        Handled where it arrives, without waking the match: only the awaited decision's
        deadline moves (its timer with it).
        """
        awaited = self._awaited
        if (
            awaited is None
            or not awaited.awaiting_write
            or awaited.seat != signal.seat
            or awaited.request_id != signal.request_id
        ):
            return  # for a request already settled, or timed from its queueing: nothing to do
        awaited.written(clk.ns(signal.at))
        timer, waiter = self._timer, self._waiter
        due = awaited.hard_deadline_ns
        if timer is not None and waiter is not None and due < self._timer_due_ns:
            timer.cancel()
            loop = asyncio.get_running_loop()
            self._timer = loop.call_at(clk.loop_time(due), _wake, waiter)
            self._timer_due_ns = due

    def _expire_reconnects(self, now_ns: int) -> None:
        """Forfeit seats whose reconnect grace ran out."""
        for seat, st in enumerate(self.seat_states):
            by = st.reconnect_by_ns
            if by is not None and now_ns >= by and not st.forfeited:
                self._forfeit(seat, st.lost_as, "did not reconnect in time")

    def _handle_background(self, signal: Signal) -> int:
        """Handle a signal that is not the awaited reply; returns a seat that just
        reconnected, or -1."""
        if isinstance(signal, AbortSignal):
            raise _Aborted(signal.reason)
        if isinstance(signal, StartSignal):
            return -1  # only ever awaited in _wait_for_room
        if isinstance(signal, ReplySignal):
            return -1  # a reply to a settled request: the seat layer already said so
        if isinstance(signal, RequestWrittenSignal):
            return -1  # for a request already settled: nothing to time
        if isinstance(signal, ProcessExitSignal):
            exited = self.seat_states[signal.seat]
            if self.outcome is None and not exited.forfeited:
                exited.connected = False
                self._forfeit(signal.seat, Termination.CRASHED, signal.detail)
            return -1
        seat = signal.seat
        st = self.seat_states[seat]
        if signal.connected:
            was_seen = st.ever_connected
            st.ever_connected = True
            st.connected = True
            st.bot_name = signal.bot_name or st.bot_name
            st.bot_version = signal.bot_version or st.bot_version
            st.reconnect_by_ns = None
            st.crashed = False
            kind = IncidentKind.RECONNECTED if was_seen else IncidentKind.CONNECTED
            if self.phase is not MatchPhase.WAITING:
                self._incident(kind, seat, signal.bot_name)
            return seat if was_seen else -1
        if not st.connected:
            return -1
        st.connected = False
        st.crashed = signal.crashed
        if not st.forfeited and self.phase is not MatchPhase.WAITING:
            grace_ms = self.settings.policies.reconnect_grace_ms
            st.reconnect_by_ns = clk.after(clk.ns(signal.at), grace_ms)
        if self.phase is not MatchPhase.WAITING:
            self._incident(IncidentKind.DISCONNECTED, seat, signal.detail)
        return -1

    def _forfeit(self, seat: int, cause: Termination, detail: str) -> None:
        st = self.seat_states[seat]
        if st.forfeited:
            return
        st.forfeit = (cause, detail)
        st.reconnect_by_ns = None
        log.info("match %s seat %d forfeits: %s (%s)", self.match_id, seat, cause.name, detail)
        if self.phase is not MatchPhase.WAITING:
            self._incident(IncidentKind.FORFEIT, seat, detail, cause)
        notice = ForfeitNotice(seat, cause, detail, st.strikes)
        for obj in self.seats:
            obj.forfeited(notice)

    def _incident(
        self, kind: IncidentKind, seat: int, detail: str, termination: Termination | None = None
    ) -> None:
        try:
            self.sink.incident(Incident(kind, seat, detail, self.state.decisions, termination))
        except RecordWriteError as exc:
            self._record_failed(exc)

    def _abandon(self) -> MatchOutcome:
        """Nobody came: record the no-shows and end without playing (not a game for standings)."""
        self._write_header()
        for seat, st in enumerate(self.seat_states):
            f = st.forfeit
            if f is not None:
                self._incident(IncidentKind.FORFEIT, seat, f[1], f[0])
        return self._finish(complete=False, reason="", abandoned=True)

    def _finish(self, complete: bool, reason: str, abandoned: bool = False) -> MatchOutcome:
        if self.outcome is not None:
            return self.outcome
        if not complete and not abandoned:
            if self.phase is MatchPhase.WAITING:
                self._start()
            self._incident(IncidentKind.ABORTED, -1, reason)
        s = self.state
        res = result(s)
        forfeited = tuple(st.forfeited for st in self.seat_states)
        ranks = ranks_with_forfeits(res.totals, forfeited)
        seats = []
        for seat, st in enumerate(self.seat_states):
            f = st.forfeit
            if f is not None:
                termination, detail = f
            elif complete:
                termination, detail = Termination.NORMAL, ""
            else:
                termination, detail = Termination.ABORTED, reason
            seats.append(
                SeatOutcome(
                    seat=seat,
                    name=self.seat_label(seat),
                    total=res.totals[seat],
                    rank=ranks[seat],
                    breakdown=res.breakdowns[seat],
                    termination=termination,
                    detail=detail,
                    strikes=st.strikes,
                )
            )
        outcome = MatchOutcome(seats=tuple(seats), complete=complete, abandoned=abandoned)
        self.outcome = outcome
        if abandoned:
            self.phase = MatchPhase.ABANDONED
        else:
            self.phase = MatchPhase.FINISHED if complete else MatchPhase.ABORTED
        try:
            self.sink.outcome(outcome, utc_now())
        except RecordWriteError as exc:
            # Every move is in the record: the result stands, and its last line follows
            # when the sink can write it (the host completes it once there is room).
            self._record_failed(exc)
        self._broadcast_end(outcome)
        return outcome

    def _broadcast_end(self, outcome: MatchOutcome) -> None:
        s = self.state
        for seat, (obj, st) in enumerate(zip(self.seats, self.seat_states, strict=True)):
            first = st.update_cursor
            if first < s.n_events:
                obj.update(first, s.events_since(first))
                st.update_cursor = s.n_events
            obj.end(MatchEnd(outcome, observe(s, seat, since=s.n_events)))
        for observer, first in list(self._observers.items()):
            if first < s.n_events:
                observer.on_events(first, s.events_since(first))
            observer.on_end(outcome)
        self._observers.clear()


__all__ = ["WRITER", "Match", "MatchPhase", "MatchView", "utc_now", "writer_name"]
