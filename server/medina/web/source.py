"""Where the viewer finds the matches being played: one interface, two implementations.

Every page that shows live matches (the matches list, the live page, its event stream, the
running/waiting gauges of /metrics) reads them through a ``MatchSource``:

* ``hosted.ArenaSource``: the arena of this process (``medina-arena serve --http``, ``match
  --http``), read through ``Match.view()`` and followed through ``Match.watch``;
* ``remote.RemoteArena``: another server (``medina-arena web --server``), read through
  ``ListMatches``/``GetMatch`` and followed through ``Watch``, as any gRPC spectator does.

A page never reads a ``Match`` or a gRPC stub itself (tests/test_architecture.py).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from typing import Protocol

from .listing import MatchRow
from .view import JSON

#: A live page's event stream: given the keep-alive interval in seconds, the messages to send
#: (the snapshot first, the last one with ``result``; None for a keep-alive).
Feed = Callable[[float], AsyncGenerator[JSON | None, None]]


class MatchSource(Protocol):
    """Matches being played somewhere, as the viewer's pages read them."""

    async def rows(self) -> list[MatchRow]:
        """Its matches as rows of the matches page, newest first (none when it cannot be
        reached: the page still lists the records)."""
        ...

    async def has_live_page(self, match_id: str) -> bool:
        """Whether ``match_id`` has a live page here (else the page sends the viewer to its
        record's replay, if there is one)."""
        ...

    async def feed(self, match_id: str) -> Feed | None:
        """The live stream of ``match_id``; None when this source does not know it."""
        ...


__all__ = ["Feed", "MatchSource"]
