"""The client half of the raw gRPC ping-pong: answer each server message with REPLY_BYTES bytes.

Run as ``python -m bench.pingpong_client HOST:PORT REPLY_BYTES``.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator

import grpc

METHOD = "/bench.PingPong/Play"


async def run(address: str, reply_bytes: int) -> None:
    """Echo until the server closes the stream."""
    outgoing: asyncio.Queue[bytes | None] = asyncio.Queue()
    payload = b"r" * reply_bytes

    async def requests() -> AsyncIterator[bytes]:
        while (message := await outgoing.get()) is not None:
            yield message

    async with grpc.aio.insecure_channel(address) as channel:
        method: grpc.aio.StreamStreamMultiCallable[bytes, bytes] = channel.stream_stream(
            METHOD, request_serializer=None, response_deserializer=None
        )
        async for _message in method(requests()):
            outgoing.put_nowait(payload)
        outgoing.put_nowait(None)


if __name__ == "__main__":
    asyncio.run(run(sys.argv[1], int(sys.argv[2])))
