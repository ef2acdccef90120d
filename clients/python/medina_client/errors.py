"""Typed errors of the bot SDK."""

from __future__ import annotations

import grpc


class MedinaClientError(Exception):
    """Base class of the SDK's errors."""


class HandshakeError(MedinaClientError):
    """The server refused the seat for good; ``code`` is the gRPC status, ``details`` its
    message and ``reason`` its ErrorInfo reason (docs/protocol.md; empty from a 1.0 server)."""

    def __init__(self, code: grpc.StatusCode, details: str, reason: str = "") -> None:
        why = f"{code.name}, {reason}" if reason else code.name
        super().__init__(f"handshake refused ({why}): {details}")
        self.code = code
        self.details = details
        self.reason = reason


class ConnectionLost(MedinaClientError):
    """The stream ended before the match did (the runner reconnects); ``reason`` is the
    status's ErrorInfo reason, empty when there was none."""

    def __init__(self, message: str, reason: str = "") -> None:
        super().__init__(message)
        self.reason = reason


class SessionOver(MedinaClientError):
    """The stream ended for a reason no retry can fix (the match is over, the seat forfeited,
    the worker holding the match died): ``reason`` names it."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


class ProtocolError(MedinaClientError):
    """The server sent something the SDK does not understand."""


class LocalStateError(MedinaClientError, ValueError):
    """The local engine state could not be rebuilt from the history (``Turn.state()``)."""


class Redirected(MedinaClientError):
    """The server sent the stream elsewhere (protocol 1.1 ``Redirect``): open it again at
    ``host`` (empty: the same host) and ``port``. The play loop follows it by itself."""

    def __init__(self, host: str, port: int) -> None:
        super().__init__(f"redirected to {host or 'the same host'}:{port}")
        self.host = host
        self.port = port


class AddressError(MedinaClientError, ValueError):
    """A ``HOST:PORT`` server address whose port is not 1 to 65535 (gRPC would take it
    modulo 65536 and dial another port)."""
