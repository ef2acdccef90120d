"""What a bot's seat log says of how it ended: the one reading of it behind ``match``'s
console line, check-bot's and the entry games' "its log ends: ...", and a crashed seat's
detail.

A seat's log holds what the bot wrote to stdout and stderr. When the bot is a stdio bridge
(``python -m medina_client stdio``), its last line is the bridge's account of its program's
failure (``medina.wire.shared.bridge_log``): what is reported then is the program's own
last stderr line, the file beside the seat log its stderr is kept in, and its exit status.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from medina.boundary.terminal import last_line, printable, shorten
from medina.wire.shared.bridge_log import parse_failure

__all__ = ["LogSays", "log_says"]


@dataclass(frozen=True)
class LogSays:
    """``tail``: the last line the bot (a stdio bridge's program) wrote, printable and
    shortened ('' when none); ``path``: the file it is in; ``program_status``: a stdio
    bridge's program's exit (``status 255``, ``signal SIGKILL``; '' when there is no bridge
    or its program had not exited); ``bridged``: a stdio bridge told of its program's
    failure."""

    tail: str
    path: Path
    program_status: str = ""
    bridged: bool = False
    #: What the bridge added about its program (``it could not be started: ...``), or ''.
    note: str = ""

    def ends(self, seat_log: Path) -> str:
        """``its log ends: TAIL``, naming the file when it is not ``seat_log``; '' when the
        log is empty."""
        where = f" (in {self.path})" if self.path != seat_log else ""
        note = f"; {self.note}" if self.note else ""
        if self.tail:
            return f"its log ends: {self.tail}{where}{note}"
        return f"its program wrote nothing to its stderr{where}{note}" if self.bridged else ""

    def exited(self, how: str, when: str = "") -> str:
        """How the bot ended, to follow "the bot" or "its bot": `` {how}{when}`` (``how``
        being its own exit, ``exited with code 3``), or when it is a stdio bridge whose
        program exited, the program's status first (``'s program exited with status 255
        and its stdio bridge with code 3{when}``)."""
        if not self.program_status:
            return f" {how}{when}"
        bridge = how.replace("exited with", "with", 1)  # "and its stdio bridge with code 3"
        return f"'s program exited with {self.program_status} and its stdio bridge {bridge}{when}"


def log_says(seat_log: Path, limit: int = 160) -> LogSays:
    """What ``seat_log`` says, its last line cut to ``limit`` characters."""
    line = last_line(seat_log, 1 << 20)
    failure = parse_failure(line)
    if failure is None:
        return LogSays(shorten(line, limit), seat_log)
    tail = shorten(printable(failure.tail), limit) if failure.tail else ""
    return LogSays(tail, Path(failure.path), failure.status, True, printable(failure.note))
