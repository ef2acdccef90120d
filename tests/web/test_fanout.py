"""Many pages of one match (web/fanout.py) over real HTTP: one spectator subscription to the
match however many pages follow it, every page sent the same messages to the same end, a
page opened late brought up to date by its first message, and the subscription dropped once
the last page is gone (a page that opens after starts it again), and an ended match's one
message made once however many pages ask for it; a page that reads nothing is dropped once
too many messages wait for it, and its connection closed after the write deadline, while
the others go on."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator, Awaitable, Callable
from pathlib import Path
from typing import Any

from bounded import run
from medina.referee.config import MatchSettings, TimeControl
from medina.rpc.single.host import HostedMatch
from medina.web import HttpServer, Viewer, build_app
from medina.web.fanout import PACE_S, FanOut
from medina.web.hosted import ArenaSource
from medina.web.listing import MatchRow
from medina.web.shelf import RecordShelf
from medina.web.source import Feed
from medina.web.view import JSON

from .conftest import ArenaThread, HoldOne, play_bots
from .sse import get, never_reading, parse_events, read_out

#: Pages opened on one match.
PAGES = 20


class Stream:
    """A live page's event stream over a raw HTTP/1.0 connection, read message by message."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    @classmethod
    async def open(cls, port: int, match_id: str) -> Stream:
        reader, writer = await asyncio.open_connection("127.0.0.1", port, limit=1 << 20)
        writer.write(f"GET /api/live/{match_id}/events HTTP/1.0\r\n\r\n".encode())
        await writer.drain()
        head = await reader.readuntil(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200"), head
        return cls(reader, writer)

    async def next(self) -> tuple[str, Any]:
        """The next message (keep-alives skipped): its event name and data."""
        while True:
            frame = (await self.reader.readuntil(b"\n\n")).decode()
            lines = frame.strip("\n").split("\n")
            data = [line[len("data: ") :] for line in lines if line.startswith("data: ")]
            if data:
                event = lines[0][len("event: ") :]
                return event, json.loads("\n".join(data))

    async def to_the_end(self) -> list[tuple[str, Any]]:
        """Every message up to the last (``end``), after which the server closes."""
        out = [await self.next()]
        while out[-1][0] != "end":
            out.append(await self.next())
        assert await self.reader.read() == b""
        return out

    def drop(self) -> None:
        """Go away without a word, as a closed tab or a lost network does."""
        self.writer.transport.abort()


def grown(messages: list[tuple[str, Any]]) -> list[Any]:
    """The score plot's points as live.js grows them: the first message's, then each new
    step of the later ones."""
    points = list(messages[0][1]["story"])
    for _event, data in messages[1:]:
        points += [p for p in data["story"] if p["step"] > points[-1]["step"]]
    return points


async def until(check: Callable[[], Awaitable[bool]], what: str, timeout_s: float = 10) -> None:
    """Wait (bounded) until ``check()`` holds."""
    try:
        async with asyncio.timeout(timeout_s):
            while not await check():
                await asyncio.sleep(0.01)
    except TimeoutError:
        raise AssertionError(f"{what}: not within {timeout_s} s") from None


async def no_open_streams(a: ArenaThread) -> bool:
    """Whether /metrics counts no open live-page stream."""
    _status, _headers, body = await get("127.0.0.1", a.http.port, "/metrics")
    return "\nmedina_http_event_streams_open 0.0\n" in body.decode()


def test_pages_of_one_match_share_one_subscription_and_a_late_page_catches_up(
    tmp_path: Path,
) -> None:
    a = ArenaThread(tmp_path)
    try:
        # A clock no held request runs out of: the match waits for the late page.
        settings = MatchSettings("medina-v2", 3, 21, time=TimeControl(decision_ms=60_000))
        hosted = a.create(settings)
        match = hosted.match
        # Seat 0 holds its first request after 12 decisions, so that the match is still in
        # play when the late page joins (on a loaded machine it had ended).
        hold = HoldOne(13)

        async def main() -> None:
            early = [await Stream.open(a.http.port, hosted.match_id) for _ in range(PAGES)]
            firsts = [await s.next() for s in early]
            assert {d["phase"] for _e, d in firsts} == {"waiting"}
            assert match.watchers == 1  # not one per page
            bots = asyncio.ensure_future(play_bots(a.running, hosted, 21, hold))
            seen = [firsts[0]]
            while seen[-1][1]["view"]["decisions"] < 12:
                seen.append(await early[0].next())
            late = await Stream.open(a.http.port, hosted.match_id)
            _event, first = await late.next()
            assert match.watchers == 1
            # The late page's first message is the story so far: a snapshot and the updates
            # after it, every point of the plot from the start, the board as it is now.
            assert list(first["watch"][0]) == ["snapshot"]
            assert all(list(w) == ["update"] for w in first["watch"][1:])
            steps = [p["step"] for p in first["story"]]
            assert steps == list(range(first["view"]["decisions"] + 1))
            assert first["view"]["decisions"] >= 12
            async with asyncio.timeout(60):
                while not hold.held:
                    await asyncio.sleep(0.01)
            hold.release()
            ends = [[("update", first), *await late.to_the_end()]]
            ends.append(seen + await early[0].to_the_end())
            for page, (event, data) in zip(early[1:], firsts[1:], strict=True):
                ends.append([(event, data), *await page.to_the_end()])
            await asyncio.wait_for(bots, 60)
            finals = {json.dumps(e[-1][1], sort_keys=True) for e in ends}
            assert len(finals) == 1, "every page ends on the same message"
            final = json.loads(finals.pop())
            assert final["result"]["ending"] == "complete"
            stories = {json.dumps(grown(e)) for e in ends}
            assert len(stories) == 1, "every page grows the same score plot"
            story = json.loads(stories.pop())
            assert [p["step"] for p in story] == list(range(match.state.decisions + 1))
            assert story[-1]["scores"] == [s["total"] for s in final["result"]["seats"]]

        a.call(main(), timeout=120)
    finally:
        a.close()


def test_the_subscription_ends_with_the_last_page_and_a_new_page_starts_it_again(
    tmp_path: Path,
) -> None:
    a = ArenaThread(tmp_path)
    try:
        hosted: HostedMatch = a.create(MatchSettings("medina-v2", 2, 5))
        match = hosted.match

        async def main() -> None:
            pages = [await Stream.open(a.http.port, hosted.match_id) for _ in range(5)]
            for page in pages:
                await page.next()
            assert match.watchers == 1
            for page in pages:
                page.drop()

            async def unwatched() -> bool:
                return match.watchers == 0

            await until(unwatched, "the subscription ends with the pages")
            await until(lambda: no_open_streams(a), "the pages' streams are closed")
            again = await Stream.open(a.http.port, hosted.match_id)
            _event, first = await again.next()
            assert first["phase"] == "waiting" and list(first["watch"][0]) == ["snapshot"]
            assert match.watchers == 1
            match.abort("test over")
            events = await again.to_the_end()
            assert events[-1][1]["result"]["ending"] == "aborted"

        a.call(main(), timeout=60)
    finally:
        a.close()


class CountingSource:
    """This process's arena as a match source (a real ``ArenaSource``), counting the match
    streams it is asked to start."""

    def __init__(self, source: ArenaSource) -> None:
        self.source = source
        self.started = 0

    async def rows(self) -> list[MatchRow]:
        return await self.source.rows()

    async def has_live_page(self, match_id: str) -> bool:
        return await self.source.has_live_page(match_id)

    async def feed(self, match_id: str) -> Feed | None:
        feed = await self.source.feed(match_id)
        if feed is None:
            return None

        def counted(keepalive_s: float) -> AsyncGenerator[JSON | None, None]:
            self.started += 1
            return feed(keepalive_s)

        return counted


def test_an_ended_matchs_stream_is_made_once_however_often_it_is_asked_for(
    tmp_path: Path,
) -> None:
    a = ArenaThread(tmp_path)
    try:
        hosted = a.create(MatchSettings("medina-v2", 2, 9))
        a.play(hosted, 9).result(60)
        source = CountingSource(ArenaSource(a.running.arena))
        viewer = Viewer(RecordShelf(a.running.arena.records_dir), sources=(source,))
        http = HttpServer(build_app(viewer))
        a.call(http.start())
        try:
            path = f"/api/live/{hosted.match_id}/events"

            async def ask(times: int) -> set[bytes]:
                answers = await asyncio.gather(
                    *(get("127.0.0.1", http.port, path) for _ in range(times))
                )
                assert {status for status, _h, _b in answers} == {200}
                return {body for _s, _h, body in answers}

            bodies = a.call(ask(1)) | a.call(ask(50))
            assert len(bodies) == 1, "every page is sent the same one message"
            assert [event for event, _data in parse_events(bodies.pop())] == ["end"]
            assert source.started == 1
        finally:
            a.call(http.stop())
    finally:
        a.close()


def test_a_fast_match_is_sent_to_its_pages_at_a_bounded_pace(tmp_path: Path) -> None:
    """Bots answering at once play many decisions between two messages to the pages: what
    the stream said in between is folded into the next message (each is written to every
    page on the loop the referee shares), and nothing is lost on the way."""
    a = ArenaThread(tmp_path)
    try:
        hosted = a.create(MatchSettings("medina-v2", 4, 33))
        match = hosted.match

        async def main() -> None:
            page = await Stream.open(a.http.port, hosted.match_id)
            first = await page.next()
            started = asyncio.get_running_loop().time()
            await play_bots(a.running, hosted, 33)
            messages = [first, *await page.to_the_end()]
            elapsed = asyncio.get_running_loop().time() - started
            decisions = match.state.decisions
            # At most one message a PACE_S (and the first and the last) however many
            # decisions there were; before, one a decision or more.
            assert len(messages) <= elapsed / PACE_S + 3 < decisions / 2, (
                len(messages),
                elapsed,
                decisions,
            )
            story = grown(messages)
            assert [p["step"] for p in story] == list(range(decisions + 1))
            final = messages[-1][1]
            assert final["view"]["decisions"] == decisions
            assert final["result"]["ending"] == "complete"
            updates = [w["update"] for _e, d in messages for w in d["watch"] if "update" in w]
            indices = [e.get("index", 0) for u in updates for e in u["events"]]
            assert indices == list(range(indices[0], indices[0] + len(indices))), (
                "every event once, in order"
            )

        a.call(main(), timeout=120)
    finally:
        a.close()


#: The scripted match's id, and the size of each of its messages: a few fill the buffers of
#: a connection that reads nothing (the kernel's and the transport's, 64 KiB).
SCRIPTED = "scripted"
PAD = 128 * 1024
#: Messages the scripted match says at most before the test gives up.
MOST = 40


class ScriptedMatch:
    """A match source of one match, ``SCRIPTED``, that says what the test tells it
    (``say``), each message ``PAD`` characters long."""

    def __init__(self) -> None:
        self.said: asyncio.Queue[JSON] = asyncio.Queue()

    def say(self, n: int, final: bool = False) -> None:
        data: JSON = {"watch": [], "story": [n], "n": n, "pad": "p" * PAD}
        if final:
            data["result"] = {"ending": "complete", "seats": []}
        self.said.put_nowait(data)

    async def rows(self) -> list[MatchRow]:
        return []

    async def has_live_page(self, match_id: str) -> bool:
        return match_id == SCRIPTED

    async def feed(self, match_id: str) -> Feed | None:
        return self.messages if match_id == SCRIPTED else None

    async def messages(self, _keepalive_s: float) -> AsyncGenerator[JSON | None, None]:
        while True:
            data = await self.said.get()
            yield data
            if "result" in data:
                return


async def said_until(
    match: ScriptedMatch, reading: Stream, done: Callable[[], bool], what: str
) -> int:
    """Have ``match`` say 1, 2, ... (each read by ``reading``: nothing is lost for a page
    that reads) until ``done()``; the next number."""
    n = 1
    while not done():
        assert n < MOST, f"{what}: not after {MOST} messages"
        match.say(n)
        _event, data = await reading.next()
        assert data["n"] == n
        n += 1
    return n


def test_a_page_that_reads_nothing_is_dropped_once_its_queue_is_full(tmp_path: Path) -> None:
    # Before, the messages queued for a page that never read grew for as long as its
    # connection stayed open, which was for good.
    async def main() -> None:
        match = ScriptedMatch()
        viewer = Viewer(RecordShelf(tmp_path), sources=(match,), fanout=FanOut(max_pending=3))
        http = HttpServer(build_app(viewer), write_stall_s=600)  # the queue's bound alone
        await http.start()
        try:
            path = f"/api/live/{SCRIPTED}/events"
            reading = await Stream.open(http.port, SCRIPTED)
            match.say(0)
            assert (await reading.next())[1]["n"] == 0
            stuck = await never_reading(http.port, path, version="1.0")

            async def both_follow() -> bool:
                return viewer.fanout.pages(SCRIPTED) == 2

            await until(both_follow, "the page that reads nothing follows the match")
            n = await said_until(
                match, reading, lambda: viewer.fanout.pages(SCRIPTED) == 1, "dropped"
            )
            match.say(n, final=True)
            assert (await reading.to_the_end())[-1][1]["n"] == n
            # Read at last, the dropped page's stream ends without the result (a browser's
            # page reconnects, and starts from everything said so far).
            body = await asyncio.wait_for(read_out(stuck), 10)
            stuck.close()
            events = parse_events(body.partition(b"\r\n\r\n")[2])
            assert [e for e, _d in events] == ["update"] * len(events)
            # What was written before its writes paused, and nothing after (nor the end).
            assert [d["n"] for _e, d in events] == list(range(len(events)))
            assert len(events) < n
        finally:
            await http.stop()

    run(main())


def test_a_live_page_that_reads_nothing_is_closed_and_others_are_served(
    tmp_path: Path,
) -> None:
    async def main() -> None:
        match = ScriptedMatch()
        viewer = Viewer(RecordShelf(tmp_path), sources=(match,))
        http = HttpServer(build_app(viewer), write_stall_s=0.3)
        await http.start()
        try:
            reading = await Stream.open(http.port, SCRIPTED)
            match.say(0)
            assert (await reading.next())[1]["n"] == 0
            stuck = await never_reading(http.port, f"/api/live/{SCRIPTED}/events")

            async def both_follow() -> bool:
                return viewer.fanout.pages(SCRIPTED) == 2

            await until(both_follow, "the page that reads nothing follows the match")
            n = await said_until(match, reading, lambda: http.connections == 1, "closed")
            stuck.close()
            assert viewer.fanout.pages(SCRIPTED) == 1
            status, _headers, _body = await get("127.0.0.1", http.port, "/api/matches")
            assert status == 200
            match.say(n, final=True)
            assert (await reading.to_the_end())[-1][1]["n"] == n
        finally:
            await http.stop()

    run(main())
