"""A running arena elsewhere (``medina-arena web --server HOST:PORT``) as a ``MatchSource``:
its matches listed through ``ListMatches`` and followed through ``Watch``, exactly as any gRPC
spectator does, turned into the live page's messages.

The board is rebuilt by following the public events from the match's setup (the settings
from ``GetMatch``); clocks are those of the configuration (a spectator is not told a seat's
bank as it runs down).
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncGenerator
from typing import Any

import grpc

from medina.engine import GameFollower
from medina.records import catalog
from medina.rpc.common.auth import bearer_metadata
from medina.rpc.organiser import open_channel
from medina.v1 import admin_pb2, admin_pb2_grpc, match_pb2
from medina.wire import convert
from medina.wire import matches as wire_matches
from medina.wire.shared.enums import RULESET_NAMES
from medina.wire.shared.tls import ClientTls

from .listing import MatchRow
from .live import KEEPALIVE_S, follow, proto_json, result_json
from .source import Feed
from .story import Story
from .view import JSON, board_view

#: Matches of the remote server listed on the matches page (its newest first).
LIST_LIMIT = 200

#: States in which a remote match has a live page (later, its record's replay).
LIVE_STATES = (admin_pb2.MATCH_STATE_WAITING, admin_pb2.MATCH_STATE_RUNNING)


class RemoteArena:
    """The ``MatchSource`` of another server, read over gRPC (over TLS with ``tls``)."""

    def __init__(
        self, address: str, organiser_token: str | None = None, tls: ClientTls | None = None
    ) -> None:
        self.address = address
        self.channel = open_channel(address, tls)
        self.matches = admin_pb2_grpc.MatchServiceStub(self.channel)
        self.spectators = admin_pb2_grpc.SpectatorServiceStub(self.channel)
        self.metadata: tuple[tuple[str, str], ...] = bearer_metadata(organiser_token)

    async def close(self) -> None:
        """Close the channel."""
        await self.channel.close()

    async def summary(self, match_id: str) -> admin_pb2.MatchSummary | None:
        """The match's summary, or None when the server does not know it (or is away)."""
        try:
            got = await self.matches.GetMatch(
                wire_matches.get_request(match_id), metadata=self.metadata, timeout=10
            )
        except grpc.aio.AioRpcError:
            return None
        return got.match

    async def rows(self) -> list[MatchRow]:
        """The server's running and waiting matches as rows of the matches page (none when
        it cannot be reached: the page still lists the records)."""
        try:
            listed = await self.matches.ListMatches(
                wire_matches.list_request(
                    LIST_LIMIT, [admin_pb2.MATCH_STATE_WAITING, admin_pb2.MATCH_STATE_RUNNING]
                ),
                metadata=self.metadata,
                timeout=10,
            )
        except grpc.aio.AioRpcError:
            return []
        rows = []
        for m in listed.matches:
            state = admin_pb2.MatchState.Name(m.state).removeprefix("MATCH_STATE_").lower()
            rows.append(
                MatchRow(
                    match_id=m.match_id,
                    ruleset=_ruleset(m.config),
                    players=m.config.players,
                    bots=catalog.seat_labels(m.config, m.seats, m.config.players),
                    state=state,
                    decisions=m.decisions,
                    scores=None,
                    live=True,
                    record=None,
                    note=f"on {self.address}",
                )
            )
        return rows

    async def has_live_page(self, match_id: str) -> bool:
        """Whether the server plays ``match_id`` or waits for its bots."""
        summary = await self.summary(match_id)
        return summary is not None and summary.state in LIVE_STATES

    async def feed(self, match_id: str) -> Feed | None:
        """The live stream of a match the server knows (in any state: an ended one's
        stream gives its result)."""
        summary = await self.summary(match_id)
        return functools.partial(self.messages, summary) if summary is not None else None

    async def messages(
        self, summary: admin_pb2.MatchSummary, keepalive_s: float = KEEPALIVE_S
    ) -> AsyncGenerator[JSON | None, None]:
        """The live page's messages for a match of the remote server (see
        ``hosted.LiveWatch``)."""
        settings = convert.settings_from_proto(summary.config)
        follower = GameFollower(settings.new_game())
        story = Story(follower.state)
        names = catalog.seat_labels(summary.config, summary.seats, summary.config.players)
        call = self.spectators.Watch(
            wire_matches.watch_request(summary.match_id), metadata=self.metadata
        )
        clock = {
            "decision_ms": settings.time.decision_ms,
            "bank_ms": settings.time.bank_ms,
            "seats": [
                {
                    "bank_ms": settings.time.bank_ms,
                    "last_reply_ms": 0,
                    "allowed_ms": settings.time.decision_ms,
                }
                for _ in range(settings.players)
            ],
        }
        # A waiting match says so (and why: its note, as GetMatch gave it) until play shows.
        waiting = summary.state == admin_pb2.MATCH_STATE_WAITING
        phase, note = ("waiting", summary.note) if waiting else ("running", "")
        first = True
        stream = aiter(call)
        try:
            while True:
                try:
                    message = await asyncio.wait_for(anext(stream), keepalive_s)
                except TimeoutError:
                    yield None
                    continue
                except StopAsyncIteration:
                    return
                kind = message.WhichOneof("message")
                events: Any = ()
                if kind == "snapshot":
                    events = message.snapshot.events
                elif kind == "update":
                    events = message.update.events
                    phase, note = "running", ""
                points: list[JSON] = [story.point(follower.state)] if first else []
                first = False
                for event in events:
                    if event.index >= follower.state.n_events:
                        point = follow(follower, story, event)
                        if point is not None:
                            points.append(point)
                out: JSON = {
                    "phase": "finished" if kind == "result" else phase,
                    "note": note,
                    "watch": [proto_json(message)],
                    "view": board_view(follower.state, names=names, start=story.base),
                    "clock": clock,
                    "story": points,
                }
                if kind == "result":
                    out["result"] = result_json(message.result)
                    yield out
                    return
                yield out
        finally:
            call.cancel()


def _ruleset(config: match_pb2.MatchConfig) -> str:
    return RULESET_NAMES.get(int(config.ruleset), "?")
