"""The arena's refusals of the ladder's CreateMatch calls (a full arena: SERVER_FULL, a
records disk short of room, ...): counted by reason, and logged once when they begin and
once when they end, with their count. ``create_match`` waits each refusal out, asking
again, and logs the retries at INFO only: a ladder whose arena refused it 126 times said
nothing at all."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

__all__ = ["ArenaRefusals"]

log = logging.getLogger("medina.ladder")


class ArenaRefusals:
    """The CreateMatch calls the arena refuses: by reason since the start, and whether
    matches wait on a refusal now (from the first refusal to the moment none does)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        #: Refusals since the start, by reason (``create_match``'s ``on_refused``).
        self.by_reason: dict[str, int] = {}
        self._clock = clock
        #: The matches refused at least once whose CreateMatch is still asking.
        self._waiting: set[int] = set()
        #: Refusals since the first of the refusals going on, by reason.
        self._now: dict[str, int] = {}
        self._since = 0.0

    def refused(self, match: int, reason: str) -> None:
        """The arena refused the CreateMatch of ladder match ``match`` for ``reason``."""
        self.by_reason[reason] = self.by_reason.get(reason, 0) + 1
        if not self._waiting:
            self._since = self._clock()
            log.warning(
                "ladder: the arena refuses new matches (%s, ladder match %d): each waits and "
                "asks again until it is taken or gives up; logged again when they end",
                reason,
                match,
            )
        self._waiting.add(match)
        self._now[reason] = self._now.get(reason, 0) + 1

    def settled(self, match: int, accepted: bool) -> None:
        """The CreateMatch of ``match`` is over (``accepted``, or it failed): once no
        refused match is left asking, the refusals end (logged once, with their count)."""
        if match not in self._waiting:
            return
        self._waiting.discard(match)
        if self._waiting:
            return
        counts = ", ".join(f"{reason} {n}" for reason, n in sorted(self._now.items()))
        log.warning(
            "ladder: %s after %.0f s of refusals (%d refused: %s)",
            "the arena takes new matches again"
            if accepted
            else "no match waits for the arena any more (the last one refused stopped asking)",
            self._clock() - self._since,
            sum(self._now.values()),
            counts,
        )
        self._now = {}
