"""Where a multi-worker server's matches live: match id and seat token -> worker.

Filled from CreateMatch answers. Only the newest ``limit`` matches are kept, so memory stays
bounded; the front asks every worker about a match or token it no longer knows.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass

from ..common.tokens import token_key

#: Matches remembered (about 0.6 KB each with four seats).
ROUTES_KEPT = 20_000


@dataclass(frozen=True, slots=True)
class Route:
    """A worker slot and the generation of its process that holds the match."""

    slot: int
    generation: int


class Routes:
    """The newest ``limit`` matches' routes, by match id and by seat token."""

    def __init__(self, limit: int = ROUTES_KEPT) -> None:
        if limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit}")
        self.limit = limit
        self._matches: OrderedDict[str, tuple[Route, list[str]]] = OrderedDict()
        self._tokens: dict[str, str] = {}

    def __len__(self) -> int:
        return len(self._matches)

    def add(self, match_id: str, tokens: Iterable[str], route: Route) -> None:
        """Remember a new match; the oldest is forgotten beyond the limit."""
        keys = [token_key(t) for t in tokens]
        self._matches[match_id] = (route, keys)
        for key in keys:
            self._tokens[key] = match_id
        while len(self._matches) > self.limit:
            _old, (_route, old_keys) = self._matches.popitem(last=False)
            for key in old_keys:
                self._tokens.pop(key, None)

    def match(self, match_id: str) -> Route | None:
        """The route of a match, if remembered."""
        found = self._matches.get(match_id)
        return found[0] if found is not None else None

    def token(self, token: str) -> tuple[str, Route] | None:
        """The match id and route a seat token opens, if remembered."""
        match_id = self._tokens.get(token_key(token))
        if match_id is None:
            return None
        route = self.match(match_id)
        return (match_id, route) if route is not None else None

    def held_by(self, route: Route) -> list[str]:
        """The remembered matches of one worker generation."""
        return [m for m, (r, _keys) in self._matches.items() if r == route]
