"""A live page of a match held in the server's start queue says where it waits (the note
GetMatch gives), follows its place, and plays on once it starts (web/hosted.py, live.js)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

from bounded import run
from e2e.rawbot import RawBot
from medina.v1 import admin_pb2, common_pb2, match_pb2
from medina.web.hosted import ArenaSource
from medina.web.remote import RemoteArena
from medina.web.view import JSON
from stall import stalled

ROOM = "it starts when the server has room"


def config() -> match_pb2.MatchConfig:
    return match_pb2.MatchConfig(
        ruleset=common_pb2.RULESET_MEDINA_V2,
        players=2,
        seed=11,
        time_control=match_pb2.TimeControl(decision_ms=5000, bank_ms=0, increment_ms=0),
    )


async def until(messages: AsyncIterator[JSON | None], wanted: str) -> JSON:
    """The next message (keep-alives skipped) whose phase and note read ``wanted``."""
    while True:
        message = await asyncio.wait_for(anext(messages), 20)
        if message is not None and f"{message['phase']}: {message['note']}" == wanted:
            return message


async def to_the_end(messages: AsyncIterator[JSON | None]) -> JSON:
    """The last message of a live stream (the one with the result)."""
    last: JSON = {}
    async for message in messages:
        last = message if message is not None else last
    assert "result" in last, last
    return last


def test_a_queued_matchs_live_stream_says_where_it_waits_then_plays(tmp_path: Path) -> None:
    async def main() -> None:
        async with stalled(tmp_path) as (running, stub, room):
            source = ArenaSource(running.arena)
            bots: list[asyncio.Future[None]] = []
            streams: list[tuple[admin_pb2.CreateMatchResponse, AsyncIterator[JSON | None]]] = []
            for ahead in range(2):  # one after the other: the queue's order is the bots'
                created = await stub.CreateMatch(admin_pb2.CreateMatchRequest(config=config()))
                bots += [
                    asyncio.ensure_future(RawBot(running.address, t.token).play())
                    for t in created.tokens
                ]
                feed = await source.feed(created.match_id)
                assert feed is not None
                streams.append((created, feed(60.0)))
                queued = f"waiting: queued: its bots are here; {ROOM} ({ahead} ahead)"
                await until(streams[-1][1], queued)
            (first, aborted), (_, messages) = streams
            await stub.AbortMatch(admin_pb2.AbortMatchRequest(match_id=first.match_id))
            assert (await to_the_end(aborted))["result"]["ending"] == "aborted"
            await until(messages, f"waiting: queued: its bots are here; {ROOM} (0 ahead)")
            room.release()
            await until(messages, "running: ")  # it starts: the note is gone
            last = await to_the_end(messages)
            assert last["phase"] == "finished" and last["note"] == ""
            assert last["result"]["ending"] == "complete"
            await asyncio.wait_for(asyncio.gather(*bots), 30)

    run(main())


def test_another_servers_queued_match_opens_with_its_note_and_plays(tmp_path: Path) -> None:
    # `web --server`: the viewer of another server's matches reads the note from GetMatch.
    async def main() -> None:
        async with stalled(tmp_path) as (running, stub, room):
            remote = RemoteArena(running.address)
            try:
                created = await stub.CreateMatch(admin_pb2.CreateMatchRequest(config=config()))
                bots = [
                    asyncio.ensure_future(RawBot(running.address, t.token).play())
                    for t in created.tokens
                ]
                local = await ArenaSource(running.arena).feed(created.match_id)
                assert local is not None  # the server's own page: until the match is queued
                await until(local(60.0), f"waiting: queued: its bots are here; {ROOM} (0 ahead)")
                feed = await remote.feed(created.match_id)
                assert feed is not None
                messages = feed(60.0)
                first = await asyncio.wait_for(anext(messages), 20)
                assert first is not None
                assert (first["phase"], first["note"]) == (
                    "waiting",
                    f"queued: its bots are here; {ROOM} (0 ahead)",
                )
                room.release()
                await until(messages, "running: ")
                assert (await to_the_end(messages))["result"]["ending"] == "complete"
                await asyncio.wait_for(asyncio.gather(*bots), 30)
            finally:
                await remote.close()

    run(main())
