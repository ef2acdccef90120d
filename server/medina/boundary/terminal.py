"""Text that others chose (a bot's log, a ladder bot's version) made safe to print on an
operator's terminal: control characters, line and paragraph separators and the bidi
controls are shown as escapes (``\\x1b``, ``\\u202e``) instead of acting. A submitted bot
that printed ``ESC ] 0 ; title BEL`` or ``ESC [ 2K`` into its log recoloured, retitled or
erased the organiser's terminal lines through "its log ends: ..."."""

from __future__ import annotations

import unicodedata
from pathlib import Path

__all__ = [
    "NAME_LIMIT",
    "control_character",
    "controls_shown",
    "last_line",
    "name_fault",
    "printable",
    "shorten",
]

#: Unicode categories of the characters that act on a terminal or end a line: control
#: characters (C0, DEL, C1) and the line and paragraph separators.
_CONTROL = ("Cc", "Zl", "Zp")
#: Format characters that reorder or hide text (the Unicode bidi controls).
_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def _shown(ch: str) -> str:
    if ch == "\t":
        return ch
    if ch in _BIDI or unicodedata.category(ch) in _CONTROL:
        return ch.encode("unicode_escape").decode("ascii")
    return ch


def printable(text: str) -> str:
    """``text`` with every character that would act on a terminal shown as its escape."""
    if text.isprintable():
        return text
    return "".join(_shown(ch) for ch in text)


def controls_shown(text: str) -> str:
    """``text`` with its control characters and line and paragraph separators shown as
    escapes, its bidi controls left as they are (for a web page, which isolates them)."""
    return "".join(_shown(ch) if unicodedata.category(ch) in _CONTROL else ch for ch in text)


def control_character(text: str) -> str | None:
    """The first character of ``text`` that is a control character (a newline, a NUL, ESC)
    or a line or paragraph separator, as ``U+000A``; None when there is none: what a name
    or a cell of a table may not hold (a tab included)."""
    found = next((ch for ch in text if unicodedata.category(ch) in _CONTROL), None)
    return None if found is None else f"U+{ord(found):04X}"


#: The longest name or version a client may give of itself, in characters (a bot's Hello,
#: a ladder bot's LobbyHello).
NAME_LIMIT = 128


def name_fault(field: str, text: str) -> str | None:
    """Why ``text``, sent by a client as ``field`` (``Hello.bot_name``), cannot name it: over
    ``NAME_LIMIT`` characters, or holding a control character (it is printed in consoles,
    tables and logs, where a newline or ESC acted); None when it can."""
    if len(text) > NAME_LIMIT:
        return f"{field} is longer than {NAME_LIMIT} characters"
    if (found := control_character(text)) is not None:
        return f"{field} {text!r} holds a control character ({found})"
    return None


def last_line(path: Path, limit: int = 200) -> str:
    """The last non-empty line of a log file ('' when there is none or it cannot be read),
    made printable and shortened to ``limit`` characters."""
    try:
        lines = path.read_bytes().decode("utf-8", "replace").splitlines()
    except OSError:
        return ""
    return shorten(
        printable(next((line.strip() for line in reversed(lines) if line.strip()), "")), limit
    )


def shorten(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, "..." marking the cut."""
    return text if len(text) <= limit else text[: limit - 3] + "..."
