"""The start queue: matches whose bots are all connected, waiting until the server has room
to referee them fairly (``admission.no_room``), let start oldest first.

A server offered more matches than it can play at once keeps the excess here instead of
refusing it: an organiser that creates 300 matches at once gets 300 matches, and each plays
with the clocks an idle server would give it. No clock runs while a match waits (its bots
were sent Welcome and nothing else), so waiting costs a bot nothing but time. A match that
ends while it waits (aborted, its bots gone) leaves the queue.

The queue lets the load grow by at most ``per_second`` matches a second (the start burst),
spread over its ticks. Room is measured (the turnaround's percentile over the last seconds),
so it shows a start's load only after a while, and a queue that filled all the room it saw
at every tick overshot it. 256 matches of bots thinking 20-80 ms offered on the 2-core
development machine, bot-seen p99 and decisions/s: unspread 19-34 ms at 1,730-1,950 (six
runs); at 16 starts a second 12-18 ms at 1,360-1,400 (four runs); with no queue, organisers
refused and waiting out the retry hint, 10-21 ms at 1,220-1,910 (six runs). Fair first:
spread.

A start that takes the place of a match that has just ended does not grow the load, so it
is not one of the tick's: a match that ends lets the oldest waiting one start at once (room
permitting). Counting every start against the burst capped the load at the burst times a
game's length whatever the room: 16 a second of 8-second games is 128 matches.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from .admission import TICK_S, MatchTiming

__all__ = ["QUEUED_NOTE", "StartQueue"]

#: How the note of a match waiting in the queue starts (``MatchSummary.note``; organisers
#: look for it: ``rpc.organiser.report_queued``).
QUEUED_NOTE = "queued:"


@dataclass(slots=True)
class _Waiting:
    clock_ms: int
    go: Callable[[], None]
    since: float


class StartQueue:
    """Matches ready to start, let start while ``no_room(clock_ms)`` says None for the
    oldest one's decision clock (it is asked again after each start, which it must then count
    as starting), oldest first, at most ``per_second`` a second from the queue beyond the
    places of matches that ended (None: as many as there is room for). A match that finds
    the queue empty and room starts at once."""

    def __init__(
        self,
        no_room: Callable[[int], str | None],
        per_second: int | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if per_second is not None and per_second < 1:
            raise ValueError(f"per_second must be at least 1 (or None), got {per_second}")
        self.no_room = no_room
        self.clock = clock
        #: Starts from the queue a tick allows (None: no limit).
        self.per_tick = None if per_second is None else max(1, round(per_second * TICK_S))
        self._budget = self.per_tick
        self._waiting: dict[MatchTiming, _Waiting] = {}  # oldest first
        #: Matches that have waited in the queue (a match let start at once is not counted).
        self.queued_total = 0
        #: The longest any match has waited, in seconds.
        self.longest_wait_s = 0.0
        #: Why the oldest match waits (``no_room``'s last answer while one waited).
        self.why = ""

    def __len__(self) -> int:
        return len(self._waiting)

    def ahead_of(self, timing: MatchTiming) -> int | None:
        """How many matches wait ahead of this one; None when it is not in the queue."""
        if timing not in self._waiting:
            return None
        for n, waiting in enumerate(self._waiting):
            if waiting is timing:
                return n
        return None  # pragma: no cover - found above

    def note(self, timing: MatchTiming) -> str:
        """What GetMatch, ListMatches and the live page say of a match waiting here (its
        place), '' when it is not in the queue."""
        ahead = self.ahead_of(timing)
        if ahead is None:
            return ""
        room = "it starts when the server has room"
        return f"{QUEUED_NOTE} its bots are here; {room} ({ahead} ahead)"

    def enter(self, timing: MatchTiming, clock_ms: int, go: Callable[[], None]) -> None:
        """The match (its decision clock ``clock_ms``) is ready to start: ``go()`` is called
        when it may (at once, if nothing waits ahead of it and there is room)."""
        if not self._waiting and self.no_room(clock_ms) is None:
            self._release(timing, go)
            return
        self._waiting[timing] = _Waiting(clock_ms, go, self.clock())
        self.queued_total += 1
        self.pump()

    def leave(self, timing: MatchTiming) -> None:
        """The match ended: before it was let start (it leaves the queue), or after (its
        place goes to the oldest waiting match, room permitting, beyond the tick's starts)."""
        if self._waiting.pop(timing, None) is not None or timing.released is None:
            return
        if self._budget is not None:
            self._budget += 1  # this tick's: an unused place does not carry over
        if self._waiting:
            self.pump()

    def pump(self) -> None:
        """Let the oldest matches start while there is room."""
        while self._waiting:
            if self._budget is not None and self._budget <= 0:
                self.why = "the queue's starts for this tick are spent"
                return
            timing, waiting = next(iter(self._waiting.items()))
            why = self.no_room(waiting.clock_ms)
            if why is not None:
                self.why = why
                return
            del self._waiting[timing]
            if self._budget is not None:
                self._budget -= 1
            self.longest_wait_s = max(self.longest_wait_s, self.clock() - waiting.since)
            self._release(timing, waiting.go)
        self.why = ""

    def _release(self, timing: MatchTiming, go: Callable[[], None]) -> None:
        timing.released = self.clock()
        go()

    def tick(self) -> None:
        """A new tick (the server's ``LoopLag`` calls it every ``TICK_S``): its starts are
        allowed, and the queue looks for room, which comes back as the load's measurements
        fade, not only when a match ends."""
        self._budget = self.per_tick
        if self._waiting:
            self.pump()
