"""A stand-in ladder lobby that breaks its streams as a dropped network and a stopping
ladder do, for what the SDK and the Node bot then say (tests/clients/test_lobby_hints.py,
tests/e2e/test_node_bot.py)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Protocol

import grpc
from medina.rpc.common.status import Reason, trailers
from medina.v1 import ladder_pb2

#: What gRPC's C core says when the connection under a stream went away.
DROPPED = "Stream removed (Socket closed)"
#: The hint that TLS may be at fault, as both clients say it (the Node bot with a capital I).
HINT = "if it serves tls, pass --tls-ca"


class ScriptedLobby:
    """Ends its first four lobby streams UNAVAILABLE with a dropped socket's words: one
    before a welcome, one after, one before a welcome again, and one with the ladder's reason
    SHUTTING_DOWN; welcomes the fifth and keeps it until the bot leaves."""

    def __init__(self) -> None:
        self.streams = 0
        self.last_open = asyncio.Event()

    async def Lobby(
        self,
        request_iterator: AsyncIterator[ladder_pb2.LobbyRequest],
        context: grpc.aio.ServicerContext[ladder_pb2.LobbyRequest, ladder_pb2.LobbyResponse],
    ) -> AsyncIterator[ladder_pb2.LobbyResponse]:
        await anext(request_iterator)  # the LobbyHello
        self.streams += 1
        welcome = ladder_pb2.LobbyResponse(welcome=ladder_pb2.LobbyWelcome(bot="b"))
        if self.streams in (2, 5):
            yield welcome
        if self.streams == 4:
            code = grpc.StatusCode.UNAVAILABLE
            context.set_trailing_metadata(trailers(code, DROPPED, Reason.SHUTTING_DOWN, {}))
        if self.streams <= 4:
            context.set_code(grpc.StatusCode.UNAVAILABLE)
            context.set_details(DROPPED)
            return
        self.last_open.set()
        async for message in request_iterator:  # until the bot leaves
            if message.WhichOneof("kind") == "leave":
                return


class Lobby(Protocol):
    """A stand-in's LadderService.Lobby."""

    def Lobby(
        self,
        request_iterator: AsyncIterator[ladder_pb2.LobbyRequest],
        context: grpc.aio.ServicerContext[ladder_pb2.LobbyRequest, ladder_pb2.LobbyResponse],
    ) -> AsyncIterator[ladder_pb2.LobbyResponse]: ...


@asynccontextmanager
async def serving(lobby: Lobby) -> AsyncIterator[str]:
    """``lobby`` as a LadderService on 127.0.0.1; its address."""
    server = grpc.aio.server()
    handler = grpc.stream_stream_rpc_method_handler(
        lobby.Lobby,
        request_deserializer=ladder_pb2.LobbyRequest.FromString,
        response_serializer=ladder_pb2.LobbyResponse.SerializeToString,
    )
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler("medina.v1.LadderService", {"Lobby": handler}),)
    )
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        await server.stop(None)
