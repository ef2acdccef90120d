"""A token bucket: how fast something may go, with a burst allowed (the flood guard of a
stream's unsolicited messages, the viewer's pace of requests, a ladder bot's joins, the
streams a sandboxed bot opens)."""

from __future__ import annotations

import math
import time
from collections.abc import Callable

__all__ = ["TokenBucket"]


class TokenBucket:
    """``burst`` tokens, refilled at ``rate`` per second: ``take`` spends one if there is one
    (a stream's unsolicited messages); ``owe`` spends one regardless, into debt, and says how
    long the debt lasts (the viewer's pace of requests). ``now``: a time of the caller's
    clock (an event loop's), else ``clock()``."""

    def __init__(
        self,
        rate: float,
        burst: int,
        clock: Callable[[], float] = time.monotonic,
        now: float | None = None,
    ) -> None:
        self.rate = rate
        self.burst = float(burst)
        self.tokens = float(burst)
        self.clock = clock
        self.stamp = clock() if now is None else now

    def _refill(self, now: float | None) -> None:
        at = self.clock() if now is None else now
        self.tokens = min(self.burst, self.tokens + (at - self.stamp) * self.rate)
        self.stamp = at

    def take(self, now: float | None = None) -> bool:
        """Spend a token; False when the bucket is empty."""
        self._refill(now)
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False

    def owe(self, now: float | None = None, cost: float = 1.0, most: float = math.inf) -> float:
        """Spend ``cost`` tokens, into debt if there are not enough, but never more than
        ``most`` tokens deep; the seconds until the bucket is out of debt (0: it is not)."""
        self._refill(now)
        self.tokens = max(self.tokens - cost, -most)
        return self.debt_s()

    def debt_s(self, now: float | None = None) -> float:
        """The seconds until the bucket is out of debt (0: it is not in debt)."""
        if now is not None:
            self._refill(now)
        return 0.0 if self.tokens >= 0 else -self.tokens / self.rate

    def rested(self, now: float | None = None) -> bool:
        """Whether the bucket has filled up again (as good as a new one)."""
        at = self.clock() if now is None else now
        return self.tokens + (at - self.stamp) * self.rate >= self.burst
