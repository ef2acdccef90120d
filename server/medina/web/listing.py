"""The matches list's pages: which rows a query asks for (page, page size, states), and
what one page holds.

Matches this server hosts (and a watched server's, ``web --server``) come first, newest
first, then the records of the directory, newest first. Only the records a page shows are
read (and, with a state filter, those it has to look at): the directory's listing and the
files' times order them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from urllib.parse import urlencode

from medina.records.catalog import StoredState

#: Every state a row may have (its ``state``, as the JSON says it), in the order the filter
#: offers them.
STATES = ("waiting", "running", "finished", "aborted", "abandoned", "interrupted", "unreadable")
#: A state's name on the pages and in ``?state=`` when it is not the JSON's: a record with no
#: outcome line is "unfinished" (still being played, or its server stopped during the match).
_SHOWN = {s.value: s.shown for s in StoredState if s.shown != s.value}
#: ``?state=`` names to states: the shown names, and the JSON's (``interrupted``, the name
#: older links have).
_ASKED = {**{s: s for s in STATES}, **{name: s for s, name in _SHOWN.items()}}
#: Rows per page unless the query says (``per``), and the most it may ask for.
PER_PAGE = 50
MAX_PER_PAGE = 500


@dataclass(frozen=True)
class MatchRow:
    """One line of the matches table."""

    match_id: str
    ruleset: str
    players: int
    bots: Sequence[str]
    state: str
    decisions: int
    scores: Sequence[int] | None
    live: bool  # a live page exists (the match is hosted here)
    record: str | None  # record id for the replay page
    note: str = ""


def state_name(state: str) -> str:
    """A row's state as the pages name it (the JSON keeps ``state``)."""
    return _SHOWN.get(state, state)


class BadQueryError(ValueError):
    """A query parameter out of range; the message names it and its value."""


@dataclass(frozen=True)
class Query:
    """Which page of the list: ``page`` (from 1), ``per`` rows, only ``states`` (all when
    empty; as rows and the JSON say them)."""

    page: int = 1
    per: int = PER_PAGE
    states: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def parse(cls, params: Mapping[str, str]) -> Query:
        """The query of ``?page=N&per=N&state=a,b`` (states by their shown names, or as the
        JSON says them: ``interrupted`` is ``unfinished``); BadQueryError names a bad
        parameter."""
        page = _number(params, "page", 1, 1, 1_000_000)
        per = _number(params, "per", PER_PAGE, 1, MAX_PER_PAGE)
        asked = {s for s in params.get("state", "").split(",") if s}
        unknown = sorted(asked - _ASKED.keys())
        if unknown:
            names = ", ".join(state_name(s) for s in STATES)
            raise BadQueryError(f"state {', '.join(unknown)} is not one of {names}")
        return cls(page, per, frozenset(_ASKED[s] for s in asked))

    @property
    def skip(self) -> int:
        """Rows before this page."""
        return (self.page - 1) * self.per

    def link(
        self, path: str, *, page: int | None = None, states: frozenset[str] | None = None
    ) -> str:
        """``path`` with this query, changed as asked (defaults left out)."""
        params: dict[str, str] = {}
        page = self.page if page is None else page
        states = self.states if states is None else states
        if states:
            params["state"] = ",".join(state_name(s) for s in STATES if s in states)
        if page != 1:
            params["page"] = str(page)
        if self.per != PER_PAGE:
            params["per"] = str(self.per)
        return f"{path}?{urlencode(params, safe=',')}" if params else path


def _number(params: Mapping[str, str], name: str, default: int, low: int, high: int) -> int:
    text = params.get(name)
    if text is None or text == "":
        return default
    if not text.isdigit() or not low <= int(text) <= high:
        raise BadQueryError(f"{name} must be a whole number from {low} to {high}, got {text!r}")
    return int(text)


@dataclass(frozen=True)
class Listing:
    """One page of the list."""

    rows: list[MatchRow]
    query: Query
    #: Rows in all (of the asked states); None when a state filter left it unknown.
    total: int | None
    #: Whether rows follow this page.
    more: bool

    @property
    def newer(self) -> int | None:
        """The page the "newer" link goes to (None on page 1): the one before, or for a
        page past the end of the list the last page that has rows (page 1 when none has)."""
        page = self.query.page
        if page == 1:
            return None
        if not self.rows and self.total is not None:
            return min(page - 1, max(1, -(-self.total // self.query.per)))
        return page - 1

    @property
    def first(self) -> int:
        """The number of this page's first row (from 1)."""
        return self.query.skip + 1

    def etag(self) -> str:
        """A validator of the page's content: equal while nothing shown changed."""
        content = {
            "rows": [asdict(r) for r in self.rows],
            "query": [self.query.page, self.query.per, sorted(self.query.states)],
            "total": self.total,
            "more": self.more,
        }
        digest = hashlib.sha1(json.dumps(content, sort_keys=True, default=list).encode())
        return f'"{digest.hexdigest()[:20]}"'
