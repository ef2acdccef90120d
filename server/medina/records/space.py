"""The records directory's room: new matches refused while it is short of space, records
that could not be written completed once there is room, and one log line each way."""

from __future__ import annotations

import logging
import os
from pathlib import Path

from .writer import RecordWriter

log = logging.getLogger("medina.records")

#: Free space (MB) the records directory keeps by default: below it no match is created, so
#: the matches in play can finish their records (one is 20-40 KB; a ladder's database on the
#: same disk needs room for its write-ahead log, about 4 MB).
DEFAULT_RESERVE_MB = 64


class RecordsSpace:
    """Whether a match record can be written now, for one records directory.

    ``refusal`` says why a new match must not be created (a record is still held in memory,
    or the directory has less free space than ``reserve_bytes``); ``keep`` takes a finished
    match's writer that holds lines it could not write, and ``retry`` writes them when it
    can. The operator hears of it twice: when the trouble starts (ERROR) and when it is over
    (WARNING), never once a match or a decision.
    """

    def __init__(self, directory: Path, reserve_bytes: int) -> None:
        if reserve_bytes < 0:
            raise ValueError(f"records reserve {reserve_bytes} bytes: must be 0 or more")
        self.directory = directory
        self.reserve_bytes = reserve_bytes
        #: Writers of ended matches whose records still lack lines, oldest first.
        self.unwritten: list[RecordWriter] = []
        #: Matches whose record could not be written whole when they ended, since the start.
        self.failed_total = 0
        self._trouble = ""

    @property
    def trouble(self) -> str:
        """What is wrong now ("" when records are written and the reserve is free)."""
        return self._trouble

    def free_bytes(self) -> int | None:
        """Bytes an unprivileged writer may still use where the records go (None when the
        directory cannot be asked, e.g. it does not exist yet)."""
        directory = self.directory
        while not directory.exists() and directory.parent != directory:
            directory = directory.parent  # the directory is created with the first record
        try:
            st = os.statvfs(directory)
        except OSError:
            return None
        return st.f_bavail * st.f_frsize

    def check(self) -> str:
        """What is wrong now, looked at afresh ("" when nothing): held records are retried
        first. Logs when the trouble starts or ends."""
        if self.unwritten:
            self.unwritten = [w for w in self.unwritten if not w.flush()]
        problem = self._problem()
        self._note(problem)
        return problem

    def refusal(self) -> str | None:
        """Why no match may be created now, or None."""
        return self.check() or None

    def _problem(self) -> str:
        if self.unwritten:
            w = self.unwritten[0]
            return (
                f"the records directory {self.directory} is not writable ({w.problem}): "
                f"{len(self.unwritten)} ended match record(s) wait for room to be completed"
            )
        free = self.free_bytes()
        if free is not None and free < self.reserve_bytes:
            return (
                f"the records directory {self.directory} has {_mb(free)} free, less than the "
                f"{_mb(self.reserve_bytes)} kept in reserve (--records-reserve-mb) for the "
                "matches in play: free some space "
                "(see docs/operations.md, 'Records: retention')"
            )
        return ""

    def keep(self, writer: RecordWriter) -> None:
        """A match ended with lines of its record unwritten: hold them until ``retry``."""
        self.failed_total += 1
        self.unwritten.append(writer)
        self._note(self._problem())

    def retry(self) -> bool:
        """Write what the held records lack, as far as there is room; True once none is held."""
        self.check()
        return not self.unwritten

    def _note(self, problem: str) -> None:
        if problem and not self._trouble:
            log.error("new matches are refused: %s", problem)
        elif self._trouble and not problem:
            log.warning(
                "the records directory %s is writable again (%s free): new matches are taken",
                self.directory,
                _mb(self.free_bytes() or 0),
            )
        self._trouble = problem


def _mb(n: int) -> str:
    return f"{n / 1_000_000:.1f} MB"
