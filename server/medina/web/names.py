"""Names someone else chose (bots', seats', ladder versions'), set among the viewer's own
words: each isolated, so that bidi controls in a name (U+202E RIGHT-TO-LEFT OVERRIDE turns
the text after it around) act inside the name only, and each control character in it (a
newline, a NUL: a ladder version held them once) shown as its escape, never raw in the
page."""

from __future__ import annotations

from html import escape

from medina.boundary.terminal import controls_shown

#: FIRST STRONG ISOLATE and POP DIRECTIONAL ISOLATE: what <bdi> does, for plain text.
FSI, PDI = "\u2068", "\u2069"
#: The isolate initiators: LRI, RLI, FSI.
_OPENERS = frozenset("\u2066\u2067\u2068")


def balanced(name: str) -> str:
    """``name`` with its isolates paired: a PDI that closes nothing is dropped, an isolate
    left open is closed. Either would pair with the isolation around the name (a stray PDI
    ends it early, an open isolate takes its end) and let an override escape."""
    out: list[str] = []
    depth = 0
    for ch in name:
        if ch in _OPENERS:
            depth += 1
        elif ch == PDI:
            if not depth:
                continue
            depth -= 1
        out.append(ch)
    return "".join(out) + PDI * depth


def name_html(name: str) -> str:
    """A name someone chose (a bot's, a seat's, a ladder version's) as HTML: escaped, its
    control characters shown as escapes, and isolated in a ``<bdi>`` so that bidi controls in
    it (U+202E turns the text that follows around) stay inside it."""
    return f'<bdi class="name">{escape(balanced(controls_shown(name)))}</bdi>'


def name_attribute(name: str) -> str:
    """A name as the value of an HTML attribute (``data-bot``): escaped, its control
    characters shown as escapes."""
    return escape(controls_shown(name))


def isolated(name: str) -> str:
    """A name set in plain text (a page's title, an SVG label): between FSI and PDI, which
    isolate it as <bdi> does."""
    return f"{FSI}{balanced(controls_shown(name))}{PDI}"
