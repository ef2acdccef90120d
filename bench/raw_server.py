"""The raw baseline server of the capacity benchmark: a grpc.aio bidi stream that answers
every message with a payload of the given size, no parsing, no logic.

``python -m bench.raw_server REQUEST_BYTES`` prints ``listening on HOST:PORT``.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import AsyncIterator

import grpc


async def main(request_bytes: int) -> None:
    """Serve until SIGTERM."""
    payload = b"q" * request_bytes

    async def play(requests: AsyncIterator[bytes], _context: object) -> AsyncIterator[bytes]:
        async for _ in requests:
            yield payload

    handler = grpc.method_handlers_generic_handler(
        "bench.Raw", {"Play": grpc.stream_stream_rpc_method_handler(play)}
    )
    server = grpc.aio.server()
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    print(f"raw server listening on 127.0.0.1:{port}", flush=True)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await stop.wait()
    await server.stop(1)


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1])))
