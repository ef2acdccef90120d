"""The viewer paces requests (web/pacing.py, web/server.py: deadlines): an address past its
rate, or all addresses together past the share of a viewer inside ``serve --http``, is not
read until its bucket has a request again; nothing is refused and nothing is lost."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from bounded import run
from medina.rpc.common.config import ServerConfig
from medina.rpc.common.limits import Limits
from medina.rpc.single.server import start_server
from medina.web import HttpServer, serve_viewer
from medina.web.pacing import (
    EVERYONE,
    SHARED_REQUEST_BURST,
    SHARED_REQUESTS_PER_S,
    Pacing,
    request_cost,
)
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

#: Requests an address may send at once, and a second, in these tests.
BURST = 2
RATE = 10.0
#: How long every answer is waited for at most.
WITHIN_S = 10.0
REQUEST = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"


def test_an_address_has_its_burst_then_waits_its_turn() -> None:
    pace = Pacing(rate=RATE, burst=BURST)
    assert [pace.take("a", 0.0) for _ in range(BURST)] == [0.0, 0.0]
    assert pace.take("a", 0.0) == pytest.approx(1 / RATE)
    assert pace.take("b", 0.0) == 0.0  # another address has its own bucket
    # Waiting its turn, the address is let through again, and no faster than the rate.
    assert pace.take("a", 0.1) == pytest.approx(1 / RATE)
    assert pace.take("a", 10.0) == 0.0  # rested: the bucket is full again, not over


def test_a_flood_leaves_an_address_at_most_its_bounded_debt() -> None:
    # Unbounded, one flood left the shared bucket 58,000 requests in debt: honest visitors
    # waited for minutes after it stopped.
    pace = Pacing(rate=RATE, burst=BURST, most_debt=3)
    waits = [pace.take("a", 0.0) for _ in range(1000)]
    assert max(waits) == pytest.approx(3 / RATE)
    assert pace.wait("a", 0.0) == pytest.approx(3 / RATE)
    assert pace.wait("a", 3 / RATE) == 0.0  # and the debt is paid off at the rate
    assert pace.wait("never seen", 0.0) == 0.0


def test_requests_weigh_what_they_cost() -> None:
    assert request_cost("/static/board.js", b"") == 1
    assert request_cost("/api/records/m1/replay", b"") == 2
    assert request_cost("/api/live/m1/events", b"") == 5
    assert request_cost("/", b"") == 4
    assert request_cost("/api/matches", b"state=finished&per=500") == 10
    pace = Pacing(rate=RATE, burst=BURST, most_debt=10)
    assert pace.take("a", 0.0, cost=BURST + 3) == pytest.approx(3 / RATE)


def test_pacing_refuses_a_rate_or_burst_that_could_never_let_a_request_through() -> None:
    for rate, burst in ((0.0, 1), (-1.0, 1), (1.0, 0)):
        with pytest.raises(ValueError, match="pacing needs rate > 0 and burst >= 1"):
            Pacing(rate, burst)


def counting_app(served: list[float]) -> Starlette:
    async def home(_: Request) -> Response:
        served.append(asyncio.get_running_loop().time())
        return PlainTextResponse("ok")

    return Starlette(routes=[Route("/", home)])


@contextlib.asynccontextmanager
async def paced() -> AsyncIterator[tuple[HttpServer, list[float]]]:
    """A server of ``counting_app`` pacing loopback at ``RATE`` a second, ``BURST`` at once;
    the loop times its requests were served at."""
    served: list[float] = []
    http = HttpServer(
        counting_app(served),
        per_client=8,
        loopback_too=True,
        pacing=Pacing(rate=RATE, burst=BURST),
    )
    await http.start()
    try:
        yield http, served
    finally:
        await http.stop()


def assert_paced(served: list[float], count: int) -> None:
    """All ``count`` were served, those past the burst a request's turn apart at least."""
    assert len(served) == count
    gaps = [b - a for a, b in zip(served[BURST:], served[BURST + 1 :], strict=False)]
    assert min(gaps) >= 1 / RATE - 0.01, gaps  # loop.time() is what the timer uses


async def answers(port: int, count: int, pipelined: bool) -> list[bytes]:
    """``count`` requests on one kept-alive connection, each sent after the last answer or
    all in one write; the answers' heads."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    heads = []
    try:
        if pipelined:
            writer.write(REQUEST * count)
        for _ in range(count):
            if not pipelined:
                writer.write(REQUEST)
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), WITHIN_S)
            assert await asyncio.wait_for(reader.readexactly(2), WITHIN_S) == b"ok"
            heads.append(head)
    finally:
        writer.close()
    return heads


@pytest.mark.parametrize("pipelined", [False, True])
def test_an_address_past_its_rate_is_served_at_its_rate_and_every_request_answered(
    pipelined: bool,
) -> None:
    # Six requests with a burst of two at ten a second: the last four are served a tenth of
    # a second apart at the soonest (the server waits; the client is not refused).
    async def main() -> None:
        async with paced() as (http, served):
            heads = await answers(http.port, 6, pipelined)
        assert all(h.startswith(b"HTTP/1.1 200") for h in heads)
        assert_paced(served, 6)

    run(main())


def test_an_address_in_debt_is_not_read_on_a_new_connection_either() -> None:
    # Paced only after a connection's first request, a client opening a connection per
    # request (HTTP/1.0, Connection: close) got 2,000-2,600 requests a second through.
    async def main() -> None:
        async with paced() as (http, served):
            for _ in range(5):
                reader, writer = await asyncio.open_connection("127.0.0.1", http.port)
                writer.write(b"GET / HTTP/1.0\r\nHost: x\r\n\r\n")
                answer = await asyncio.wait_for(reader.read(), WITHIN_S)
                assert answer.startswith(b"HTTP/1.1 200") and answer.endswith(b"ok"), answer
                writer.close()
        assert_paced(served, 5)

    run(main())


def test_loopback_clients_are_not_paced_per_address_unless_asked() -> None:
    # As the per-address connection limit: a same-machine proxy's visitors all share its
    # address. The pacing is the same addresses', so a bucket this small is never consulted.
    async def main() -> None:
        served: list[float] = []
        pace = Pacing(rate=0.001, burst=1)
        http = HttpServer(counting_app(served), per_client=8, pacing=pace)
        await http.start()
        try:
            heads = await answers(http.port, 3, pipelined=False)
        finally:
            await http.stop()
        assert len(heads) == 3
        assert pace.take("127.0.0.1", 0.0) == 0.0  # its bucket was never touched

    run(main())


def test_the_viewer_inside_serve_paces_all_its_clients_together_loopback_included(
    tmp_path: Path,
) -> None:
    # A flood of cheap requests (cached replays) from clients on this machine took the
    # matches sharing the loop from ~1,240 decisions a second to 407, with 50 strikes.
    async def main() -> None:
        config = ServerConfig(host="127.0.0.1", port=0, records_dir=tmp_path, limits=Limits())
        running = await start_server(config)
        http = await serve_viewer(running, "127.0.0.1", 0)
        try:
            shared = http.shared_pacing
            assert shared is not None
            assert (shared.rate, shared.burst) == (SHARED_REQUESTS_PER_S, SHARED_REQUEST_BURST)
            # Spend the shared bucket, as a flood would have, and 0.3 s more of it: the
            # next request is answered, the one after it read 0.3 s later at the soonest.
            now = asyncio.get_running_loop().time()
            for _ in range(SHARED_REQUEST_BURST + int(0.3 * SHARED_REQUESTS_PER_S)):
                shared.take(EVERYONE, now)
            start = asyncio.get_running_loop().time()
            reader, writer = await asyncio.open_connection("127.0.0.1", http.port)
            writer.write(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n" * 2)
            for _ in range(2):
                head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), WITHIN_S)
                assert head.startswith(b"HTTP/1.1 200"), head
                length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
                await asyncio.wait_for(reader.readexactly(length), WITHIN_S)
            writer.close()
            assert asyncio.get_running_loop().time() - start >= 0.3
        finally:
            await http.stop()
            await running.stop(1)

    run(main())
