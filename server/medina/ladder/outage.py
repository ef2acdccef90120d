"""The ladder's database while it cannot be written (a full disk, a read-only file, a
database server gone): the outage counted and logged once when it begins and once when it
ends, and the matchmaker's backoff meanwhile. What the ladder holds back during one (the
ends of matches, ``Ladder.held``) is the ladder's."""

from __future__ import annotations

import logging
import time

from sqlalchemy.exc import OperationalError

from medina.storage.database import one_line

__all__ = ["STORAGE_RETRY_MAX_S", "STORAGE_RETRY_MS", "Backoff", "Outage", "StorageDown"]

log = logging.getLogger("medina.ladder")

#: The longest wait between the matchmaker's attempts while the database cannot be written
#: (the first is ``tick_s``, each next one twice as long): a full disk cost 160 failed
#: rounds a minute, each logged with its traceback.
STORAGE_RETRY_MAX_S = 5.0
#: The retry hint of a lobby stream refused while the database cannot be written.
STORAGE_RETRY_MS = 10_000


class Backoff:
    """The matchmaker's wait after failures: twice the last one (the first ``first_s``), at
    most ``most_s``; none after a success."""

    def __init__(self, most_s: float) -> None:
        self.most_s = most_s
        #: The wait before the next attempt (0: none, the ordinary tick).
        self.wait_s = 0.0

    def failed(self, first_s: float) -> None:
        """One more failure: wait twice as long (``first_s`` doubled at first)."""
        self.wait_s = min(self.most_s, max(self.wait_s, first_s) * 2)

    def succeeded(self) -> None:
        """It works again: no wait."""
        self.wait_s = 0.0


class StorageDown(Exception):
    """The ladder's database failed (full disk, read-only, unreachable): counted by
    ``Outage``, which logged it once when it began."""


class Outage:
    """Whether the ladder's database fails now, since when, and how often since."""

    def __init__(self) -> None:
        #: Why the database cannot be written now (None: it can).
        self.problem: str | None = None
        #: Database calls failed since the outage began.
        self.failures = 0
        #: The matchmaker's wait before its next attempt (0: its ordinary tick).
        self.backoff = Backoff(STORAGE_RETRY_MAX_S)
        self._since = 0.0

    def failed(self, what: str, exc: OperationalError) -> StorageDown:
        """Count a failed database call (made while ``what``); log the first of an outage,
        once, without a traceback. The exception to raise."""
        self.failures += 1
        if self.problem is None:
            self.problem = one_line(str(exc.orig))
            self._since = time.monotonic()
            log.error(
                "ladder: the database cannot be written (%s; while %s): no match is formed "
                "and the results of matches that end are held in memory until it can, "
                "then stored in order; trying again every %g s at most",
                self.problem,
                what,
                STORAGE_RETRY_MAX_S,
            )
        return StorageDown(self.problem)

    def over(self, stored: int) -> None:
        """The database takes writes again and nothing is held back (``stored``: the held
        match ends just stored): the outage, if any, ends (logged once)."""
        if self.problem is None:
            return
        log.warning(
            "ladder: the database can be written again after %.0f s (%s; %d failed "
            "attempts): %d held match end(s) stored, matches are formed again",
            time.monotonic() - self._since,
            self.problem,
            self.failures,
            stored,
        )
        self.problem = None
        self.failures = 0
        self.backoff.succeeded()

    def back_off(self, tick_s: float) -> None:
        """A matchmaking round failed on the database: wait twice as long before the next,
        ``tick_s`` at first, ``STORAGE_RETRY_MAX_S`` at most."""
        self.backoff.failed(tick_s)
