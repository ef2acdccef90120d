"""One bot session: the gRPC channel, the Play stream and the handshake, with typed errors."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
from collections.abc import AsyncIterator
from types import TracebackType

import grpc
from medina.v1 import arena_pb2, arena_pb2_grpc
from medina.wire.shared.tls import client_tls

from .errors import ConnectionLost, HandshakeError, ProtocolError, Redirected, SessionOver
from .status import FINAL, RETRY, status_info
from .tls import TlsError, explain

#: Statuses that end a handshake for a reason retrying cannot fix.
HANDSHAKE_CODES = frozenset(
    {
        grpc.StatusCode.UNAUTHENTICATED,
        grpc.StatusCode.FAILED_PRECONDITION,
        grpc.StatusCode.ALREADY_EXISTS,
        grpc.StatusCode.INVALID_ARGUMENT,
        grpc.StatusCode.PERMISSION_DENIED,
        grpc.StatusCode.NOT_FOUND,
        grpc.StatusCode.UNIMPLEMENTED,
    }
)


def channel_credentials(
    ca: bytes | None, cert: bytes | None = None, key: bytes | None = None
) -> grpc.ChannelCredentials | None:
    """TLS credentials (mutual when a client certificate and key are given), or None for
    plaintext. ``ca`` None with a client certificate trusts the system roots."""
    if ca is None and cert is None and key is None:
        return None
    if (cert is None) != (key is None):
        raise ValueError("mutual TLS needs both the client certificate and its key")
    return grpc.ssl_channel_credentials(
        root_certificates=ca, private_key=key, certificate_chain=cert
    )


def add_tls_options(p: argparse.ArgumentParser) -> None:
    """``--tls-ca``, ``--tls-cert`` and ``--tls-key`` of the SDK's commands (a bot, the stdio
    bridge), defaulting to ``MEDINA_TLS_CA``, ``MEDINA_TLS_CERT`` and ``MEDINA_TLS_KEY``:
    where ``match`` and tournaments put the organiser's files for a bot command with
    ``{server}``."""
    p.add_argument(
        "--tls-ca",
        default=os.environ.get("MEDINA_TLS_CA"),
        help="CA certificate (PEM) to verify the server (env MEDINA_TLS_CA)",
    )
    p.add_argument(
        "--tls-cert",
        default=os.environ.get("MEDINA_TLS_CERT"),
        help="client certificate (PEM) for mutual TLS (env MEDINA_TLS_CERT)",
    )
    p.add_argument(
        "--tls-key",
        default=os.environ.get("MEDINA_TLS_KEY"),
        help="client private key (PEM) for mutual TLS (env MEDINA_TLS_KEY)",
    )


def credentials_from_files(
    ca: str | None, cert: str | None = None, key: str | None = None
) -> grpc.ChannelCredentials | None:
    """``channel_credentials`` from the files of ``--tls-ca``, ``--tls-cert`` and
    ``--tls-key``, checked first (ValueError naming the option and the file: unreadable, not
    PEM, a key that is not the certificate's, an expired certificate), so that a mistake is
    said before connecting instead of as a failed handshake. The arena's organiser commands
    check their own ``--tls-*`` options the same way (``client_tls``)."""
    tls = client_tls(ca, cert, key)
    return None if tls is None else channel_credentials(tls.ca, tls.cert, tls.key)


class Connection:
    """An open Play stream. Use ``async with``; then ``handshake``, ``messages``, ``send``."""

    def __init__(
        self,
        address: str,
        credentials: grpc.ChannelCredentials | None = None,
        handshake_timeout_s: float = 30.0,
        end_timeout_s: float = 2.0,
    ) -> None:
        self.address = address
        self.credentials = credentials
        self.handshake_timeout_s = handshake_timeout_s
        #: How long leaving the block (unless cancelled) waits for the server to end the stream.
        self.end_timeout_s = end_timeout_s
        #: The stream's status once the block is left: OK when the server ended it (after
        #: MatchEnded, or after this side half-closed on an error), CANCELLED when this side
        #: closed it first (cancelled, interrupted, or no status within ``end_timeout_s``);
        #: None before.
        self.final_status: grpc.StatusCode | None = None
        self._outgoing: asyncio.Queue[arena_pb2.PlayRequest | None] = asyncio.Queue()
        self._channel: grpc.aio.Channel | None = None
        self._call: grpc.aio.StreamStreamCall[arena_pb2.PlayRequest, arena_pb2.PlayResponse] | None
        self._call = None
        self._welcomed = False

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
        self._outgoing.put_nowait(None)  # half-close: this side sends nothing more
        call = self._call
        if call is not None:
            if exc is not None and not isinstance(exc, Exception):
                call.cancel()  # cancelled or interrupted: leave at once
            else:
                # Left after MatchEnded, or on an error (a bot's or policy's bug, a protocol
                # error): the server ends the stream once this side has half-closed. Waiting
                # for that status instead of closing the connection under the stream spares
                # the server: gRPC keeps about 50 bytes for good of every stream cancelled
                # before its status is sent (docs/operations.md, "Memory and clocks"). And a
                # seat left on an error always counts as disconnected: the server reads a
                # cancelled stream as crashed or disconnected, as its own timing falls.
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(self.end_timeout_s):
                        await call.code()
        if self._channel is not None:
            await self._channel.close()
        if call is not None:
            self.final_status = await call.code()

    async def _requests(self) -> AsyncIterator[arena_pb2.PlayRequest]:
        while (message := await self._outgoing.get()) is not None:
            yield message

    def send(self, message: arena_pb2.PlayRequest) -> None:
        """Queue a message to the server (never blocks)."""
        self._outgoing.put_nowait(message)

    async def handshake(self, hello: arena_pb2.PlayRequest) -> arena_pb2.Welcome:
        """Send Hello, return Welcome.

        HandshakeError carries the server's status code and message when it refuses;
        ConnectionLost when the server cannot be reached or does not answer in time.
        """
        self.send(hello)
        try:
            async with asyncio.timeout(self.handshake_timeout_s):
                first = await self._read()
        except TimeoutError:
            raise ConnectionLost(
                f"no Welcome from {self.address} within {self.handshake_timeout_s:g} s"
            ) from None
        if first is None:
            raise ConnectionLost(f"{self.address} closed the stream before Welcome")
        if first.HasField("redirect"):
            raise Redirected(first.redirect.host, first.redirect.port)
        if not first.HasField("welcome"):
            raise ProtocolError(f"expected Welcome, got {first.WhichOneof('message')}")
        self._welcomed = True
        return first.welcome

    async def _read(self) -> arena_pb2.PlayResponse | None:
        assert self._call is not None, "use the Connection in 'async with'"
        try:
            message = await self._call.read()
        except grpc.aio.AioRpcError as exc:
            info = status_info(exc.trailing_metadata())
            raise self._error(exc.code(), exc.details() or "", info.reason) from None
        if message is grpc.aio.EOF:
            code = await self._call.code()
            if code is not grpc.StatusCode.OK:
                info = status_info(await self._call.trailing_metadata())
                raise self._error(code, await self._call.details() or "", info.reason)
            return None
        assert isinstance(message, arena_pb2.PlayResponse)
        return message

    def _error(self, code: grpc.StatusCode, details: str, reason: str = "") -> Exception:
        """The error a failed stream raises: the reason decides (docs/protocol.md, "Errors");
        a server without reasons (1.0) is judged by the status code."""
        if reason in RETRY:
            return ConnectionLost(
                f"stream to {self.address} refused ({code.name}, {reason}): {details}", reason
            )
        if reason in FINAL:
            if not self._welcomed and reason != "MATCH_OVER":
                return HandshakeError(code, details, reason)
            return SessionOver(f"stream to {self.address} ended ({reason}): {details}", reason)
        if not self._welcomed and code in HANDSHAKE_CODES:
            return HandshakeError(code, details)
        hint = ""
        if code is grpc.StatusCode.UNAVAILABLE and not self._welcomed:
            trouble = explain(details, self.credentials is not None)
            if trouble is not None and trouble.final:
                return TlsError(f"cannot connect to {self.address}: {trouble.text}")
            hint = f" (is a Medina Arena server running at {self.address}?)"
            if trouble is not None:
                hint = f" ({trouble.text})"
        why = f"{code.name}, {reason}" if reason else code.name
        return ConnectionLost(f"stream to {self.address} failed ({why}): {details}{hint}", reason)

    async def messages(self) -> AsyncIterator[arena_pb2.PlayResponse]:
        """Server messages until the stream ends cleanly; ConnectionLost if it fails."""
        while (message := await self._read()) is not None:
            yield message
