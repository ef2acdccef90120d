"""Typed errors of the bot SDK."""

from __future__ import annotations

import grpc


class MedinaClientError(Exception):
    """Base class of the SDK's errors."""


class HandshakeError(MedinaClientError):
    """The server refused the handshake; ``code`` is the gRPC status, ``details`` its message."""

    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(f"handshake refused ({code.name}): {details}")
        self.code = code
        self.details = details


class ConnectionLost(MedinaClientError):
    """The stream ended before the match did (the runner reconnects)."""


class ProtocolError(MedinaClientError):
    """The server sent something the SDK does not understand."""


class LocalStateError(MedinaClientError, ValueError):
    """The local engine state could not be rebuilt from the history (``Turn.state()``)."""
