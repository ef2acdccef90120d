"""Admission control: a server refuses a new match it could not referee fairly.

Three limits, each off when None: how many matches may be waiting or running at once; how
late the event loop may run (its lag, measured by a ticker that asks to wake every
``TICK_S`` and notes how much later it woke) in absolute terms; and how late relative to the
shortest decision clock in play (the new match's included). The last is what keeps a server
offered more than it can referee fair: a loop that runs late adds that lateness to every
decision it serves, so new matches wait until it keeps up again. A refused CreateMatch is
RESOURCE_EXHAUSTED with the reason SERVER_FULL and a retry hint; nothing is created.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass

TICK_S = 0.1
#: How fast the lag estimate forgets: a one-off pause fades within a few seconds.
DECAY = 0.8


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
    min_lag_ms: int = 10
    #: What a refusal suggests: retry after this long (ErrorInfo metadata retry_after_ms).
    retry_after_ms: int = 1000

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


class LoopLag:
    """The event loop's recent lateness in milliseconds (a decaying maximum)."""

    def __init__(self) -> None:
        self.ms = 0.0
        self._task: asyncio.Task[None] | None = None

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


def refusal(
    limits: AdmissionLimits, active: int, lag_ms: float, shortest_clock_ms: int | None = None
) -> str | None:
    """Why a new match must be refused now, or None to accept it. ``shortest_clock_ms``: the
    shortest decision clock among the matches in play and the new one (None: not known)."""
    if limits.max_matches is not None and active >= limits.max_matches:
        return (
            f"the server is at its limit of {limits.max_matches} matches waiting or running; "
            "create the match when one has ended"
        )
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
    return None
