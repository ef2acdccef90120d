"""What a stdio bridge (``python -m medina_client stdio``) says when its program fails, in
the words it writes and the arena reads back: the one format both sides use.

The bridge's last line on stderr (the seat's log, when the arena started it) is
``medina_client stdio: the bot exited with status 255 before the match ended; its stderr
ends: oops; its stderr is in /path/bot-x-123.log``. From it the arena's reports take the
program's own last stderr line, its exit status and where its stderr is kept.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "BRIDGE_MARK",
    "KEPT_PREFIX_ENV",
    "PREFIX",
    "BridgeFailure",
    "failure_text",
    "parse_failure",
    "program_lines",
]

#: How the bridge's own lines in the program's log file are marked (after a timestamp).
BRIDGE_MARK = " [bridge] "
#: How the bridge's messages on stderr start.
PREFIX = "medina_client stdio: "
#: Set by the arena beside ``MEDINA_LOG_DIR``: what the files written there are kept as once
#: the bot exited (``PREFIX + NAME``, ``.log`` added unless NAME ends with it), a path outside
#: any sandbox, where the organiser finds them.
KEPT_PREFIX_ENV = "MEDINA_LOG_KEPT_PREFIX"

_ENDS = "; its stderr ends: "
_IN = "; its stderr is in "
_STATUS = re.compile(r"\bexited with (status -?\d+|signal \w+)")
_BRIDGE_LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+" + re.escape(BRIDGE_MARK))


@dataclass(frozen=True)
class BridgeFailure:
    """A bridge's account of its program's failure: ``problem`` (``exited with status 255
    before the match ended``), the program's last stderr line ('' when it wrote none), the
    file holding its stderr, and its exit status in words (``status 255``; '' when it had
    not exited)."""

    problem: str
    tail: str
    path: str

    @property
    def status(self) -> str:
        """``status 255`` or ``signal SIGKILL`` when the program had exited, else ''."""
        found = _STATUS.search(self.problem)
        return found.group(1) if found else ""

    @property
    def note(self) -> str:
        """What the bridge added in parentheses (``it could not be started: ...``), or ''."""
        _, sep, note = self.problem.partition(" (")
        return note.removesuffix(")") if sep and self.problem.endswith(")") else ""


def failure_text(problem: str, tail: str, path: str) -> str:
    """The bridge's message (without ``PREFIX``) that ``parse_failure`` reads back."""
    ends = f"{_ENDS}{tail}" if tail else ""
    return f"the bot {problem}{ends}{_IN}{path}"


def parse_failure(line: str) -> BridgeFailure | None:
    """The failure a bridge's stderr line (``PREFIX`` and ``failure_text``) tells of; None for
    any other line."""
    if not line.startswith(PREFIX + "the bot "):
        return None
    head, sep, path = line.removeprefix(PREFIX + "the bot ").rpartition(_IN)
    if not sep:
        return None
    problem, _, tail = head.partition(_ENDS)
    return BridgeFailure(problem, tail, path)


def program_lines(text: str) -> list[str]:
    """The lines of a bridge's log file that its program wrote (the bridge's own dropped)."""
    return [line for line in text.splitlines() if not _BRIDGE_LINE.match(line)]
