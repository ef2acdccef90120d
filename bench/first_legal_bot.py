"""A raw bot for the referee benchmark: answers every request at once with the first legal action.

Run as ``python -m bench.first_legal_bot HOST:PORT TOKEN``; it uses only the generated stubs.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator

import grpc
from medina.v1 import arena_pb2, arena_pb2_grpc, game_pb2


async def play(address: str, token: str) -> None:
    """Play one seat to the end of its match."""
    outgoing: asyncio.Queue[arena_pb2.PlayRequest | None] = asyncio.Queue()

    async def requests() -> AsyncIterator[arena_pb2.PlayRequest]:
        while (message := await outgoing.get()) is not None:
            yield message

    hello = arena_pb2.Hello(protocol_version=1, bot_name="first-legal", token=token)
    outgoing.put_nowait(arena_pb2.PlayRequest(hello=hello))
    async with grpc.aio.insecure_channel(address) as channel:
        call = arena_pb2_grpc.ArenaServiceStub(channel).Play(requests())
        async for message in call:
            if message.HasField("request"):
                request = message.request
                if request.legal.tea and not request.legal.placements:
                    action = game_pb2.Action(kind=game_pb2.ACTION_KIND_TEA)
                else:
                    first = request.legal.placements[0]
                    action = game_pb2.Action(
                        kind=first.kind, square=first.squares[0], colour=first.colour
                    )
                reply = arena_pb2.Reply(request_id=request.request_id, action=action)
                outgoing.put_nowait(arena_pb2.PlayRequest(reply=reply))
            elif message.HasField("ended"):
                # Half-close and read on: the server ends the stream at once (closing the
                # channel first would cancel it, which costs the server memory in gRPC).
                outgoing.put_nowait(None)


if __name__ == "__main__":
    asyncio.run(play(sys.argv[1], sys.argv[2]))
