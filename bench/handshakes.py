"""What Play streams that never get past their handshake leave in ``medina-arena serve``.

Anyone can open streams at a public address. Three ways a stranger's stream ends before a
match is joined, each run on a fresh server, 28 streams at a time over 4 connections:

* ``cancelled before Hello``: the client cancels its call a few milliseconds after opening
  it (the server's handler is cancelled while it waits for the Hello);
* ``no Hello by the deadline``: the client opens the stream and sends nothing; the server
  ends it at the handshake deadline (``--handshake-timeout-s 0.05``, labelled: the default
  10 s would make the row take hours);
* ``Hello with an unknown token``: refused UNAUTHENTICATED at once.

After a warm-up the server's resident set is read, then again after the rest: the growth
per stream is what each left for good, to within the allocator's granularity (a resident
set moves by a megabyte or more at a time: the rows vary by about 100 bytes a stream from
run to run). Until 29 November 2026 a stream that met the deadline cancelled the server's
pending read of its Hello, and grpc.aio (1.85) keeps the state of a cancelled read for good:
118-121 bytes a stream in this row then (+1.2 MB for every 10,000 such streams, steadily),
6-9 after; the read now runs in a task that is never cancelled and fails on its own when the
call ends. A call the client cancels is cancelled in the server by gRPC itself (its own
tens of bytes, the ``streams`` section's ``cancel``).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import secrets
import tempfile
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

import grpc
from medina.v1 import arena_pb2, arena_pb2_grpc

from bench import quick
from bench.capacity import rss_mb, serve_argv, start_process, stop_process

STREAMS = 40_000
QUICK_STREAMS = 6_000
WARM_UP = 10_000
CONCURRENT = 28
CHANNELS = 4

if TYPE_CHECKING:  # the asyncio stub is a type of the stubs' .pyi only
    Stub = arena_pb2_grpc.ArenaServiceAsyncStub


async def _cancelled(stub: Stub) -> None:
    call = stub.Play()
    await asyncio.sleep(random.random() * 0.01)  # the handler is waiting for the Hello
    call.cancel()


async def _silent(stub: Stub) -> None:
    call = stub.Play()
    with contextlib.suppress(grpc.aio.AioRpcError):
        await call.read()  # ends at the handshake deadline


async def _unknown_token(stub: Stub) -> None:
    call = stub.Play()
    hello = arena_pb2.Hello(protocol_version=1, token=secrets.token_hex(24))
    with contextlib.suppress(grpc.aio.AioRpcError):
        await call.write(arena_pb2.PlayRequest(hello=hello))
        await call.read()


ROWS: tuple[tuple[str, Callable[[Stub], Awaitable[None]], tuple[str, ...]], ...] = (
    ("cancelled before Hello", _cancelled, ()),
    ("no Hello by the deadline (0.05 s)", _silent, ("--handshake-timeout-s", "0.05")),
    ("Hello with an unknown token", _unknown_token, ()),
)


async def _row(end: Callable[[Stub], Awaitable[None]], extra: tuple[str, ...], n: int) -> float:
    """Bytes of resident set a stream left behind, over ``n`` streams after the warm-up."""
    with tempfile.TemporaryDirectory() as records:
        proc, address = await start_process(*serve_argv(records, *extra))
        options = [("grpc.use_local_subchannel_pool", 1)]
        channels = [grpc.aio.insecure_channel(address, options=options) for _ in range(CHANNELS)]
        gate = asyncio.Semaphore(CONCURRENT)
        stubs: list[Stub] = [arena_pb2_grpc.ArenaServiceStub(channel) for channel in channels]

        async def one(i: int) -> None:
            async with gate:
                await end(stubs[i % CHANNELS])

        async def streams(count: int) -> float:
            await asyncio.gather(*(one(i) for i in range(count)))
            await asyncio.sleep(2.0)  # the server's collector runs every 100 ms: settled
            return rss_mb(proc.pid or 0)

        try:
            before = await streams(WARM_UP)
            after = await streams(n)
        finally:
            for channel in channels:
                await channel.close()
            await stop_process(proc)
    return (after - before) * 1024 * 1024 / n


def main() -> None:
    """Print the table."""
    n = QUICK_STREAMS if quick() else STREAMS
    print(f"{'how the stream ended':<40}{'streams':>9}{'bytes left per stream':>24}")
    for label, end, extra in ROWS:
        left = asyncio.run(_row(end, extra, n))
        print(f"{label:<40}{n:>9}{left:>24.0f}")
    print(
        f"(medina-arena serve, defaults but the labelled deadline; {CONCURRENT} streams at a "
        f"time on {CHANNELS} connections, after {WARM_UP} to warm up; resident set, so "
        "allocator noise of a few tens of bytes a stream either way)"
    )
