"""The viewer's HTTP server closes a connection that does not send a whole request head in
time (slowloris), on opening and between keep-alive requests, and never cuts a response
being written (a live page's event stream) for it; closes a connection that reads nothing
for its write deadline (web/server.py: deadlines); and keeps to its share of the server's
open-files limit (web/server.py: viewer_connections)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from bounded import run
from medina.rpc.common.admission import AdmissionLimits
from medina.rpc.common.config import ServerConfig
from medina.rpc.common.limits import Limits
from medina.rpc.single.server import start_server
from medina.web import HttpServer, serve_viewer
from medina.web.server import BROWSER_CONNECTIONS, viewer_connections
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route

from .sse import never_reading, read_out

#: The deadline in these tests; waits for a close are bounded well above it.
HEAD_S = 0.3
CLOSE_WITHIN_S = 10.0
#: The write deadline in these tests (a connection that reads nothing that long is closed).
WRITE_S = 0.3
#: A chunk of the endless response, and a response written in one piece (as a replay's
#: JSON is), far more than the kernel's and the transport's buffers hold.
CHUNK = b"x" * 65536
BLOB = b"y" * (8 << 20)


def app(release: asyncio.Event) -> Starlette:
    async def home(_: Request) -> Response:
        return PlainTextResponse("ok")

    async def stream(_: Request) -> Response:
        async def body() -> AsyncIterator[bytes]:
            yield b"first\n"
            await release.wait()
            yield b"last\n"

        return StreamingResponse(body(), media_type="text/plain")

    async def endless(_: Request) -> Response:
        async def body() -> AsyncIterator[bytes]:
            while True:
                yield CHUNK
                # uvicorn's send returns at once to a closed connection: without a pause
                # here the loop would spin, never letting Starlette see the disconnect.
                await asyncio.sleep(0)

        return StreamingResponse(body(), media_type="text/plain")

    async def blob(_: Request) -> Response:
        return Response(BLOB, media_type="text/plain")

    return Starlette(
        routes=[
            Route("/", home),
            Route("/stream", stream),
            Route("/endless", endless),
            Route("/blob", blob),
        ]
    )


@asynccontextmanager
async def serving(release: asyncio.Event) -> AsyncIterator[HttpServer]:
    """The test app served with the ``HEAD_S`` deadline, stopped after the block."""
    http = HttpServer(app(release), request_head_s=HEAD_S, write_stall_s=WRITE_S)
    await http.start()
    try:
        yield http
    finally:
        await http.stop()


async def closed(reader: asyncio.StreamReader) -> bytes:
    """What the server sent until it closed the connection (bounded)."""
    return await asyncio.wait_for(reader.read(), CLOSE_WITHIN_S)


def test_a_connection_that_sends_half_a_head_is_closed_and_others_are_served() -> None:
    async def main() -> None:
        async with serving(asyncio.Event()) as http:
            reader, writer = await asyncio.open_connection("127.0.0.1", http.port)
            writer.write(b"GET / HTTP/1.1\r\nHost: x\r\n")  # and never the blank line
            await writer.drain()
            silent_r, silent_w = await asyncio.open_connection("127.0.0.1", http.port)
            # Another client meanwhile is served at once.
            r2, w2 = await asyncio.open_connection("127.0.0.1", http.port)
            w2.write(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            assert (await closed(r2)).endswith(b"\r\n\r\nok")
            assert await closed(reader) == b""  # closed without an answer
            assert await closed(silent_r) == b""  # a connection that sends nothing too
            for w in (writer, silent_w, w2):
                w.close()

    run(main())


def test_the_next_head_on_a_kept_alive_connection_has_the_same_deadline() -> None:
    async def main() -> None:
        async with serving(asyncio.Event()) as http:
            reader, writer = await asyncio.open_connection("127.0.0.1", http.port)
            writer.write(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), CLOSE_WITHIN_S)
            assert head.startswith(b"HTTP/1.1 200")
            assert await asyncio.wait_for(reader.readexactly(2), CLOSE_WITHIN_S) == b"ok"
            # uvicorn's own keep-alive timer stops at any byte; this deadline does not.
            writer.write(b"GET / HTTP/1.1\r\n")
            await writer.drain()
            assert await closed(reader) == b""
            writer.close()

    run(main())


def test_a_response_longer_than_the_deadline_is_not_cut() -> None:
    async def main() -> None:
        release = asyncio.Event()
        async with serving(release) as http:
            reader, writer = await asyncio.open_connection("127.0.0.1", http.port)
            writer.write(b"GET /stream HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            await asyncio.wait_for(reader.readuntil(b"first\n"), CLOSE_WITHIN_S)
            await asyncio.sleep(3 * HEAD_S)  # the deadline passes while the body is written
            release.set()
            rest = await closed(reader)
            assert b"last\n" in rest, rest
            writer.close()

    run(main())


@pytest.mark.parametrize(
    ("max_open_files", "connections"),
    [(None, None), (200, 64), (300, 64), (1024, 64), (20_000, 1186)],
)
def test_the_viewer_keeps_to_its_share_of_the_open_files_limit(
    max_open_files: int | None, connections: int | None
) -> None:
    # files_reserve (what no match holds: max(128, limit / 16)) less RESERVE_KEPT.
    assert viewer_connections(max_open_files) == connections


async def served(port: int) -> tuple[bytes, asyncio.StreamWriter]:
    """A request on a new connection kept alive: the answer's head and the connection."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"GET /api/matches HTTP/1.1\r\nHost: x\r\n\r\n")
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), CLOSE_WITHIN_S)
    return head, writer


async def one_past(port: int, limit: int) -> bytes:
    """Open ``limit`` connections, each served; what the next is answered (to its close).
    Then one leaves, and a new connection is served (bounded: once the server has seen it
    close); all are closed at the end."""
    kept = [await served(port) for _ in range(limit)]
    try:
        assert {head.split(b"\r\n")[0] for head, _w in kept} == {b"HTTP/1.1 200 OK"}
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        answer = await closed(reader)
        writer.close()
        kept.pop()[1].close()  # one leaves: a new one gets in
        async with asyncio.timeout(CLOSE_WITHIN_S):
            while True:
                head, again = await served(port)
                again.close()
                if head.startswith(b"HTTP/1.1 200"):
                    return answer
    finally:
        for _head, w in kept:
            w.close()


def test_connections_past_the_viewers_share_of_open_files_are_answered_503(
    tmp_path: Path,
) -> None:
    # Spectators' connections took the open files admission control had promised to
    # matches: 250 live pages on a server limited to 300 files refused every CreateMatch
    # ("cannot open the match record"). The viewer now holds only its share.
    async def main() -> None:
        config = ServerConfig(
            host="127.0.0.1",
            port=0,
            records_dir=tmp_path,
            admission=AdmissionLimits(max_open_files=200),
        )
        running = await start_server(config)
        http = await serve_viewer(running, "127.0.0.1", 0)
        try:
            assert http.max_connections == 64
            answer = await one_past(http.port, 64)
            assert answer.startswith(b"HTTP/1.1 503 Service Unavailable\r\n"), answer
            assert answer.endswith(
                b"\r\n\r\nthe viewer has its most open connections (64: its share of the "
                b"server's open-files limit); try again in a few seconds\n"
            )
        finally:
            await http.stop()
            await running.stop(1)

    run(main())


def test_one_address_keeps_at_most_its_share_of_the_viewers_connections(tmp_path: Path) -> None:
    # The viewer's connections were limited only in all: one address opening 1,400 of them
    # (a header byte now and then, reconnecting when closed) kept every other visitor out,
    # /metrics included. An address keeps two connections per stream it may open, and a
    # browser's (BROWSER_CONNECTIONS) besides.
    async def main() -> None:
        config = ServerConfig(
            host="127.0.0.1",
            port=0,
            records_dir=tmp_path,
            limits=Limits(max_streams_per_client=2, limit_loopback=True),
        )
        running = await start_server(config)
        http = await serve_viewer(running, "127.0.0.1", 0)
        try:
            assert http.per_client == 4 + BROWSER_CONNECTIONS == 12
            answer = await one_past(http.port, 12)
            assert answer.startswith(b"HTTP/1.1 429 Too Many Requests\r\n"), answer
            assert b"client 127.0.0.1 already has 12 open connections to the viewer" in answer
        finally:
            await http.stop()
            await running.stop(1)

    run(main())


async def until(check: Callable[[], bool], what: str) -> None:
    """Wait (bounded by ``CLOSE_WITHIN_S``) until ``check()`` holds."""
    try:
        async with asyncio.timeout(CLOSE_WITHIN_S):
            while not check():
                await asyncio.sleep(0.01)
    except TimeoutError:
        raise AssertionError(f"{what}: not within {CLOSE_WITHIN_S} s") from None


async def ok(port: int) -> bytes:
    """What a new connection asking for / is answered, to the server's close."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    answer = await closed(reader)
    writer.close()
    return answer


@pytest.mark.parametrize("path", ["/endless", "/blob"])
def test_a_connection_that_reads_nothing_is_closed_and_others_are_served(path: str) -> None:
    # A response waited for a client that never read without end (uvicorn pauses writing
    # when the socket's buffer is full, and the response waits for it to resume), so such
    # clients held the viewer's connections, and what was queued for them, for good.
    async def main() -> None:
        async with serving(asyncio.Event()) as http:
            stuck = await never_reading(http.port, path)
            await until(lambda: http.connections == 1, "the connection is open")
            assert (await ok(http.port)).endswith(b"\r\n\r\nok")  # served meanwhile
            await until(lambda: http.connections == 0, "the stalled connection is closed")
            # The client sees it closed: what it reads ends (a reset: what was unsent is
            # dropped), long before an endless response or 8 MiB could have come.
            try:
                got = await asyncio.wait_for(read_out(stuck), CLOSE_WITHIN_S)
            finally:
                stuck.close()
            assert len(got) < len(BLOB)
            assert (await ok(http.port)).endswith(b"\r\n\r\nok")

    run(main())


def test_a_client_that_reads_is_not_cut_however_often_its_writes_pause() -> None:
    async def main() -> None:
        async with serving(asyncio.Event()) as http:
            reader, writer = await asyncio.open_connection("127.0.0.1", http.port)
            writer.write(b"GET /blob HTTP/1.1\r\nHost: x\r\n\r\n")
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), CLOSE_WITHIN_S)
            assert head.startswith(b"HTTP/1.1 200")
            body = await asyncio.wait_for(reader.readexactly(len(BLOB)), CLOSE_WITHIN_S)
            assert body == BLOB
            writer.close()

    run(main())
