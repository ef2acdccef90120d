"""One bot session: the gRPC channel, the Play stream and the handshake."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from types import TracebackType

import grpc
from medina.v1 import arena_pb2, arena_pb2_grpc

from .errors import ConnectionLost, HandshakeError, ProtocolError

PROTOCOL_VERSION = 1


def channel_credentials(
    ca: bytes | None, cert: bytes | None, key: bytes | None
) -> grpc.ChannelCredentials | None:
    """TLS credentials (mutual when a client certificate is given), or None for plaintext."""
    if ca is None and cert is None:
        return None
    return grpc.ssl_channel_credentials(
        root_certificates=ca, private_key=key, certificate_chain=cert
    )


class Connection:
    """An open Play stream. Use ``async with``; then ``handshake``, ``messages``, ``send``."""

    def __init__(self, address: str, credentials: grpc.ChannelCredentials | None = None) -> None:
        self.address = address
        self.credentials = credentials
        self._outgoing: asyncio.Queue[arena_pb2.PlayRequest | None] = asyncio.Queue()
        self._channel: grpc.aio.Channel | None = None
        self._call: grpc.aio.StreamStreamCall[arena_pb2.PlayRequest, arena_pb2.PlayResponse] | None
        self._call = None

    async def __aenter__(self) -> Connection:
        if self.credentials is None:
            self._channel = grpc.aio.insecure_channel(self.address)
        else:
            self._channel = grpc.aio.secure_channel(self.address, self.credentials)
        stub = arena_pb2_grpc.ArenaServiceStub(self._channel)
        self._call = stub.Play(self._requests())
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._outgoing.put_nowait(None)
        if self._call is not None and exc is not None:
            self._call.cancel()
        if self._channel is not None:
            await self._channel.close()

    async def _requests(self) -> AsyncIterator[arena_pb2.PlayRequest]:
        while (message := await self._outgoing.get()) is not None:
            yield message

    def send(self, message: arena_pb2.PlayRequest) -> None:
        """Queue a message to the server."""
        self._outgoing.put_nowait(message)

    async def handshake(self, hello: arena_pb2.Hello) -> arena_pb2.Welcome:
        """Send Hello, return Welcome; HandshakeError with the server's status otherwise."""
        hello.protocol_version = hello.protocol_version or PROTOCOL_VERSION
        self.send(arena_pb2.PlayRequest(hello=hello))
        first = await self._read()
        if first is None:
            raise ConnectionLost("the server closed the stream before Welcome")
        if not first.HasField("welcome"):
            raise ProtocolError(f"expected Welcome, got {first.WhichOneof('message')}")
        return first.welcome

    async def _read(self) -> arena_pb2.PlayResponse | None:
        assert self._call is not None
        try:
            message = await self._call.read()
        except grpc.aio.AioRpcError as exc:
            raise _classify(exc) from None
        if message is grpc.aio.EOF:
            status = await self._call.code()
            if status is not grpc.StatusCode.OK:
                raise _classify_status(status, await self._call.details() or "")
            return None
        assert isinstance(message, arena_pb2.PlayResponse)
        return message

    async def messages(self) -> AsyncIterator[arena_pb2.PlayResponse]:
        """Server messages until the stream ends; ConnectionLost if it fails."""
        while (message := await self._read()) is not None:
            yield message


_HANDSHAKE_CODES = {
    grpc.StatusCode.UNAUTHENTICATED,
    grpc.StatusCode.FAILED_PRECONDITION,
    grpc.StatusCode.ALREADY_EXISTS,
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.PERMISSION_DENIED,
    grpc.StatusCode.NOT_FOUND,
    grpc.StatusCode.UNIMPLEMENTED,
}


def _classify(exc: grpc.aio.AioRpcError) -> Exception:
    return _classify_status(exc.code(), exc.details() or "")


def _classify_status(code: grpc.StatusCode, details: str) -> Exception:
    if code in _HANDSHAKE_CODES:
        return HandshakeError(code, details)
    return ConnectionLost(f"stream failed ({code.name}): {details}")
