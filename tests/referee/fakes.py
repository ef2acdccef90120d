"""Scripted fake seats, an ordered record sink, a spectator and helpers that run matches."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, TypeVar

from medina.engine import Action, ActionKind, Event, GameState, apply_action, new_game, result
from medina.referee.config import MatchSettings, Policies, TimeControl, TimeoutPolicy
from medina.referee.match import Match
from medina.referee.outcome import MatchOutcome
from medina.referee.record import DecisionEntry, DecisionSource, Header, Incident, IncidentKind
from medina.referee.seat import (
    ConnectionSignal,
    DecisionRequest,
    ForfeitNotice,
    MatchEnd,
    RejectionNotice,
    ReplySignal,
)

T = TypeVar("T")

#: Timeouts fire after 40 ms: small enough to keep timeout tests fast.
FAST = TimeControl(
    decision_ms=30, bank_ms=0, increment_ms=0, first_decision_extra_ms=0, grace_ms=10
)
#: Timeouts that never fire in a test bounded by ``run``.
SLOW = TimeControl(
    decision_ms=60_000, bank_ms=0, increment_ms=0, first_decision_extra_ms=0, grace_ms=10
)
#: A reply scheduled this long after its request arrives well after FAST's hard deadline
#: (with a wide margin: a referee held up past both timers would still take the reply).
LATE_S = 0.5
#: Illegal in every position: square A1 is a tower, not a wall space.
ILLEGAL = Action(ActionKind.WALL, 0)


def run(coro: Coroutine[Any, Any, T], limit_s: float = 10.0) -> T:
    """Run ``coro`` in a fresh event loop, failing the test if it takes over ``limit_s``."""

    async def bounded() -> T:
        async with asyncio.timeout(limit_s):
            return await coro

    return asyncio.run(bounded())


def make_settings(
    ruleset: str = "medina-v2",
    players: int = 2,
    *,
    seed: int = 7,
    time: TimeControl = FAST,
    on_timeout: TimeoutPolicy = TimeoutPolicy.RANDOM_ACTION,
    max_strikes: int = 3,
    max_rejections: int = 3,
    reconnect_grace_ms: int = 50,
    connect_timeout_ms: int = 1_000,
) -> MatchSettings:
    """Match settings with test-sized clocks."""
    return MatchSettings(
        ruleset=ruleset,
        players=players,
        seed=seed,
        time=time,
        policies=Policies(on_timeout, max_strikes, max_rejections, reconnect_grace_ms),
        connect_timeout_ms=connect_timeout_ms,
    )


Entry = Header | DecisionEntry | Incident | MatchOutcome


class LogSink:
    """A record sink keeping every entry in one list, in the order written."""

    def __init__(self) -> None:
        self.entries: list[Entry] = []

    def header(self, header: Header) -> None:
        """Keep the header."""
        self.entries.append(header)

    def decision(self, entry: DecisionEntry) -> None:
        """Keep the decision."""
        self.entries.append(entry)

    def incident(self, incident: Incident) -> None:
        """Keep the incident."""
        self.entries.append(incident)

    def outcome(self, outcome: MatchOutcome, ended_at: str) -> None:
        """Keep the outcome."""
        assert ended_at.endswith("Z")
        self.entries.append(outcome)

    @property
    def decisions(self) -> list[DecisionEntry]:
        """The decisions, in order."""
        return [e for e in self.entries if isinstance(e, DecisionEntry)]

    @property
    def incidents(self) -> list[Incident]:
        """The incidents, in order."""
        return [e for e in self.entries if isinstance(e, Incident)]

    def kinds(self, seat: int) -> list[IncidentKind]:
        """The kinds of the incidents of ``seat``, in order."""
        return [i.kind for i in self.incidents if i.seat == seat]

    def sources(self, seat: int) -> list[DecisionSource]:
        """Who chose each decision of ``seat``, in order."""
        return [d.source for d in self.decisions if d.seat == seat]


def replay(settings: MatchSettings, decisions: Sequence[DecisionEntry]) -> GameState:
    """The state reached by playing the recorded actions through the engine."""
    s = new_game(settings.ruleset, settings.players, settings.seed, start_seat=settings.start_seat)
    for d in decisions:
        assert d.index == s.decisions
        assert d.seat == s.to_move
        s = apply_action(s, d.action)
    return s


def check_record(settings: MatchSettings, sink: LogSink, outcome: MatchOutcome) -> GameState:
    """Check the record's shape and that it replays to the outcome's totals."""
    assert isinstance(sink.entries[0], Header)
    assert sink.entries[-1] == outcome
    assert sum(isinstance(e, Header) for e in sink.entries) == 1
    assert sum(isinstance(e, MatchOutcome) for e in sink.entries) == 1
    final = replay(settings, sink.decisions)
    if outcome.complete:
        assert final.over
    assert tuple(s.total for s in outcome.seats) == result(final).totals
    return final


def decision_keys(decisions: Sequence[DecisionEntry]) -> list[tuple[Any, ...]]:
    """The decisions without their measured times (which vary from run to run)."""
    return [(d.index, d.seat, d.request_id, d.action, d.rejections, d.source) for d in decisions]


class FakeSeat:
    """A seat that records what the referee sends and answers with the first legal action.

    Subclasses change ``on_request`` and ``on_reject`` to script other behaviour.
    """

    def __init__(self, seat: int) -> None:
        self.seat = seat
        self._match: Match | None = None
        self.requests: list[DecisionRequest] = []
        self.rejections: list[RejectionNotice] = []
        self.closed: list[int] = []
        self.updates: list[tuple[int, list[Event]]] = []
        self.ends: list[MatchEnd] = []
        self.forfeits: list[ForfeitNotice] = []
        self.bot_name = f"bot{seat}"

    # -- the Seat protocol ----------------------------------------------------------------

    def request(self, request: DecisionRequest) -> None:
        """Record the request, then answer as scripted."""
        assert request.seat == self.seat
        self.requests.append(request)
        self.on_request(request)

    def reject(self, notice: RejectionNotice) -> None:
        """Record the notice, then answer as scripted."""
        self.rejections.append(notice)
        self.on_reject(notice)

    def close_request(self, request_id: int) -> None:
        """Record the settled request."""
        self.closed.append(request_id)

    def update(self, first_index: int, events: Sequence[Event]) -> None:
        """Record the events."""
        self.updates.append((first_index, list(events)))

    def forfeited(self, notice: ForfeitNotice) -> None:
        """Record the forfeit notice."""
        self.forfeits.append(notice)

    def end(self, end: MatchEnd) -> None:
        """Record the end."""
        self.ends.append(end)

    # -- scripting ------------------------------------------------------------------------

    @property
    def match(self) -> Match:
        """The match this seat plays in."""
        assert self._match is not None, "bind the seat to its match first"
        return self._match

    def bind(self, match: Match) -> None:
        """Play in ``match``."""
        self._match = match

    @property
    def asked(self) -> int:
        """How many distinct requests were received (a re-sent request counts once)."""
        return len({r.request_id for r in self.requests})

    def now(self) -> float:
        """The loop's clock (the referee's time base)."""
        return asyncio.get_running_loop().time()

    def reply(
        self, request_id: int, action: Action | None, error: str = "", raw: bytes | None = None
    ) -> None:
        """Answer ``request_id`` now."""
        self.match.submit(ReplySignal(self.seat, request_id, action, self.now(), error, raw))

    def connection(self, connected: bool, *, crashed: bool = False) -> None:
        """Report a connection change now."""
        detail = "" if connected else "stream ended"
        self.match.submit(
            ConnectionSignal(
                self.seat,
                connected,
                self.now(),
                bot_name=self.bot_name if connected else "",
                detail=detail,
                crashed=crashed,
            )
        )

    def on_request(self, request: DecisionRequest) -> None:
        """Answer with the first legal action."""
        self.reply(request.request_id, request.legal.nth(0))

    def on_reject(self, notice: RejectionNotice) -> None:
        """Do nothing."""


class Stall(FakeSeat):
    """Answers its first ``answer`` requests, then never again."""

    def __init__(self, seat: int, answer: int = 0) -> None:
        super().__init__(seat)
        self.answer = answer

    def on_request(self, request: DecisionRequest) -> None:
        """Answer while the script allows."""
        if self.asked <= self.answer:
            super().on_request(request)


class Skip(FakeSeat):
    """Never answers the requests numbered in ``on`` (1-based); answers the others."""

    def __init__(self, seat: int, on: set[int]) -> None:
        super().__init__(seat)
        self.on = on

    def on_request(self, request: DecisionRequest) -> None:
        """Answer unless the script says to stall."""
        if self.asked not in self.on:
            super().on_request(request)


class Late(FakeSeat):
    """Answers its first ``count`` requests (all: None) with the first legal action
    ``delay_s`` after they arrived, and the others at once."""

    def __init__(self, seat: int, delay_s: float = LATE_S, count: int | None = None) -> None:
        super().__init__(seat)
        self.delay_s = delay_s
        self.count = count

    def on_request(self, request: DecisionRequest) -> None:
        """Schedule the reply."""
        if self.count is not None and self.asked > self.count:
            super().on_request(request)
            return
        action = request.legal.nth(0)
        asyncio.get_running_loop().call_later(self.delay_s, self.reply, request.request_id, action)


#: What ``Illegal`` sends as a malformed reply's action: medina.v1.Action{kind: 99}, serialized.
MALFORMED_RAW = b"\x08\x63"


class Illegal(FakeSeat):
    """On its request number ``on`` (1-based), sends ``count`` illegal replies before a legal
    one; ``None`` as the action sends malformed replies instead."""

    def __init__(
        self, seat: int, count: int, *, on: int = 1, action: Action | None = ILLEGAL
    ) -> None:
        super().__init__(seat)
        self.count = count
        self.on = on
        self.action = action
        self.sent = 0
        self.current: DecisionRequest | None = None

    def on_request(self, request: DecisionRequest) -> None:
        """Start the bad replies on the scripted request."""
        if self.asked != self.on:
            super().on_request(request)
            return
        self.current = request
        self._next(request.request_id)

    def on_reject(self, notice: RejectionNotice) -> None:
        """Go on with the script."""
        self._next(notice.request_id)

    def _next(self, request_id: int) -> None:
        assert self.current is not None and self.current.request_id == request_id
        if self.sent < self.count:
            self.sent += 1
            if self.action is None:
                self.reply(request_id, None, "could not decode action", MALFORMED_RAW)
            else:
                self.reply(request_id, self.action)
        else:
            self.reply(request_id, self.current.legal.nth(0))


class Noisy(FakeSeat):
    """Before each real reply, sends replies the referee must ignore: to an unknown id, to
    its previous (settled) request, and in the name of another seat."""

    def __init__(self, seat: int, players: int) -> None:
        super().__init__(seat)
        self.other = (seat + 1) % players

    def on_request(self, request: DecisionRequest) -> None:
        """Send the noise, then the first legal action."""
        rid = request.request_id
        now = self.now()
        moves = request.legal
        self.reply(rid + 1000, moves.nth(len(moves) - 1))
        self.reply(-1, ILLEGAL)
        if len(self.requests) > 1:
            self.reply(self.requests[-2].request_id, ILLEGAL)
        self.match.submit(ReplySignal(self.other, rid, ILLEGAL, now))
        self.match.submit(ReplySignal(self.other, rid, moves.nth(len(moves) - 1), now))
        super().on_request(request)
        self.reply(rid, moves.nth(len(moves) - 1))  # a duplicate answer is stale too


class Flaky(FakeSeat):
    """Loses its connection on request number ``on`` instead of answering; reconnects
    ``reconnect_s`` later (0: at once, None: never) and then answers the re-sent request."""

    def __init__(
        self, seat: int, *, on: int = 1, reconnect_s: float | None = 0, crashed: bool = False
    ) -> None:
        super().__init__(seat)
        self.on = on
        self.reconnect_s = reconnect_s
        self.crashed = crashed
        self.connected = True
        self.dropped = False

    def on_request(self, request: DecisionRequest) -> None:
        """Drop the connection on the scripted request; answer while connected."""
        if self.asked == self.on and not self.dropped:
            self.dropped = True
            self.connected = False
            self.connection(False, crashed=self.crashed)
            if self.reconnect_s == 0:
                self._reconnect()
            elif self.reconnect_s is not None:
                asyncio.get_running_loop().call_later(self.reconnect_s, self._reconnect)
            return
        if self.connected:
            super().on_request(request)

    def _reconnect(self) -> None:
        self.connected = True
        self.connection(True)


class Hook(FakeSeat):
    """On request number ``on``, calls ``hook`` instead of answering."""

    def __init__(self, seat: int, on: int, hook: Callable[[], object]) -> None:
        super().__init__(seat)
        self.on = on
        self.hook = hook

    def on_request(self, request: DecisionRequest) -> None:
        """Answer, or call the hook on the scripted request."""
        if self.asked == self.on:
            self.hook()
        else:
            super().on_request(request)


class Spectator:
    """A match observer that records what it is told."""

    def __init__(self) -> None:
        self.batches: list[tuple[int, list[Event]]] = []
        self.ends: list[MatchOutcome] = []

    def on_events(self, first_index: int, events: Sequence[Event]) -> None:
        """Record the events."""
        self.batches.append((first_index, list(events)))

    def on_end(self, outcome: MatchOutcome) -> None:
        """Record the outcome."""
        self.ends.append(outcome)


def make_match(
    settings: MatchSettings,
    seats: Sequence[FakeSeat],
    sink: LogSink,
    *,
    connected: bool = True,
) -> Match:
    """A match of ``seats`` (already connected unless told otherwise), each bound to it."""
    match = Match(
        "test-match",
        settings,
        seats,
        sink,
        connected=[connected] * len(seats) if connected else None,
    )
    for seat in seats:
        seat.bind(match)
    return match


async def play(
    settings: MatchSettings, seats: Sequence[FakeSeat]
) -> tuple[MatchOutcome, LogSink, Match]:
    """Play a match of connected ``seats`` to its end."""
    sink = LogSink()
    match = make_match(settings, seats, sink)
    outcome = await match.run()
    return outcome, sink, match


def play_sync(
    settings: MatchSettings, seats: Sequence[FakeSeat]
) -> tuple[MatchOutcome, LogSink, Match]:
    """``play`` in a fresh event loop, bounded in time."""
    return run(play(settings, seats))
