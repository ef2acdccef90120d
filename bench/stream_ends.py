"""What a finished Play-like stream leaves in a gRPC server process, by how the client ends it.

A bare ``grpc.aio`` server (no Medina code: one bidirectional method on raw bytes, 20
request/reply rounds, then a last message and the handler returns) serves streams, each on
a connection of its own, 16 at a time. After a warm-up the server's heap in use
(glibc's ``mallinfo2().uordblks``, after a full collection; pymalloc's arenas are not in
it) is read, and again after the rest; the difference per stream is what each stream left
behind for good. The client ends each stream one of three ways, after the last message:

* ``half-close, wait``: closes its sending side and waits for the status (the SDK, the
  stdio bridge and the Node bot do this; docs/protocol.md, "A match, start to end");
* ``cancel``: cancels the call at once;
* ``close connection``: closes the channel at once (what exiting the process does).

This is why the bots leave as they do: gRPC (1.85) keeps a few tens of bytes of every
stream cancelled before its status is sent. The figures move by up to 20 bytes a stream
from run to run (four runs here: half-close and wait 11-38, cancel 32-60, close the
connection 18-44); a cleanly ended stream's figure falls as streams go on.
"""

from __future__ import annotations

import asyncio
import ctypes
import gc
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator

import grpc

from bench import quick

STREAMS = 9000
QUICK_STREAMS = 4000
WARM_UP = 2000
CONCURRENT = 16
ROUNDS = 20
ENDINGS = ("half-close, wait", "cancel", "close connection")
METHOD = "/bench.Streams/Play"


class _MallInfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in (
            "arena",
            "ordblks",
            "smblks",
            "hblks",
            "hblkhd",
            "usmblks",
            "fsmblks",
            "uordblks",
            "fordblks",
            "keepcost",
        )
    ]


def heap_in_use() -> int | None:
    """glibc's bytes in use after a full collection; None without glibc's mallinfo2."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        mallinfo2 = libc.mallinfo2
    except (OSError, AttributeError):
        return None
    mallinfo2.restype = _MallInfo2
    gc.collect()
    return int(mallinfo2().uordblks)


async def _play(
    requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext[bytes, bytes]
) -> AsyncIterator[bytes]:
    await anext(requests)  # the hello
    for _ in range(ROUNDS):
        yield b"x" * 300
        await anext(requests)
    yield b"end"


async def serve() -> None:
    """The server process: prints its port, then its heap in use at each SIGUSR1."""
    server = grpc.aio.server()
    handler = grpc.method_handlers_generic_handler(
        "bench.Streams", {"Play": grpc.stream_stream_rpc_method_handler(_play)}
    )
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGUSR1, lambda: print(heap_in_use(), flush=True))
    print(port, flush=True)
    await server.wait_for_termination()


async def _stream(address: str, ending: str) -> None:
    async with grpc.aio.insecure_channel(address) as channel:
        call: grpc.aio.StreamStreamCall[bytes, bytes] = channel.stream_stream(METHOD)()
        await call.write(b"hello")
        async for message in call:
            if message == b"end":
                break
            await call.write(b"r")
        if ending == "half-close, wait":
            await call.done_writing()
            await call.code()
        elif ending == "cancel":
            call.cancel()
        # "close connection": leaving the block closes the channel under the stream


async def _streams(address: str, ending: str, count: int) -> None:
    left = count

    async def lane() -> None:
        nonlocal left
        while left > 0:
            left -= 1
            await _stream(address, ending)

    await asyncio.gather(*(lane() for _ in range(CONCURRENT)))


def _read_heap(server: subprocess.Popen[str]) -> int:
    assert server.stdout is not None
    server.send_signal(signal.SIGUSR1)
    return int(server.stdout.readline())


def measure(ending: str, streams: int) -> tuple[float, float]:
    """Bytes left per stream after the warm-up, and streams per second, for one ending."""
    server = subprocess.Popen(
        [sys.executable, "-m", "bench.stream_ends", "--serve"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        address = f"127.0.0.1:{int(server.stdout.readline())}"
        asyncio.run(_streams(address, ending, WARM_UP))
        before = _read_heap(server)
        started = time.perf_counter()
        asyncio.run(_streams(address, ending, streams - WARM_UP))
        rate = (streams - WARM_UP) / (time.perf_counter() - started)
        after = _read_heap(server)
    finally:
        server.kill()
        server.wait()
    return (after - before) / (streams - WARM_UP), rate


def main() -> None:
    """Print the table."""
    if heap_in_use() is None:
        print("stream ends: skipped (needs glibc's mallinfo2 to read the heap in use)")
        return
    streams = QUICK_STREAMS if quick() else STREAMS
    print(
        f"What a stream leaves in a bare grpc.aio server (grpcio {grpc.__version__}), by how "
        f"the client ends it: {streams} streams, {CONCURRENT} at a time, each on its own "
        f"connection; heap in use (glibc) after the first {WARM_UP} and after the rest"
    )
    print(f"{'ending':<18} {'bytes/stream':>12} {'streams/s':>9}")
    for ending in ENDINGS:
        left, rate = measure(ending, streams)
        print(f"{ending:<18} {left:>12.1f} {rate:>9.0f}")


if __name__ == "__main__":
    if sys.argv[1:] == ["--serve"]:
        asyncio.run(serve())
    else:
        main()
