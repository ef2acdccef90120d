"""The first message of a bot stream (its Hello), as every server waits for it: within the
handshake deadline, or the stream ends with the reason the protocol names."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any, TypeVar

import grpc
from google.protobuf.message import DecodeError

from .status import Reason, abort

__all__ = ["first_message"]

T = TypeVar("T")


async def first_message(
    requests: AsyncIterator[T],
    context: grpc.aio.ServicerContext[Any, Any],
    timeout_s: float,
    *,
    hello: str = "Hello",
    request: str = "PlayRequest",
) -> T:
    """The stream's first message, as it was read (a decoded request or raw bytes): within
    ``timeout_s`` (else DEADLINE_EXCEEDED, HELLO_TIMEOUT), before the bot closes its side
    (else INVALID_ARGUMENT, HELLO_MISSING), and decodable where it is decoded (else
    INVALID_ARGUMENT, MESSAGE_MALFORMED). What the message holds is the caller's to check.
    ``hello`` and ``request`` name the stream's first message and its request type in the
    refusals (``LobbyHello`` and ``LobbyRequest`` on a ladder's lobby)."""
    try:
        async with asyncio.timeout(timeout_s):
            return await anext(requests)
    except TimeoutError:
        await abort(
            context,
            grpc.StatusCode.DEADLINE_EXCEEDED,
            Reason.HELLO_TIMEOUT,
            f"no {hello} within {timeout_s:g} s of opening the stream",
            timeout_ms=int(timeout_s * 1000),
        )
    except StopAsyncIteration:
        await abort(
            context,
            grpc.StatusCode.INVALID_ARGUMENT,
            Reason.HELLO_MISSING,
            f"stream closed before {hello}",
        )
    except DecodeError as exc:
        await abort(
            context,
            grpc.StatusCode.INVALID_ARGUMENT,
            Reason.MESSAGE_MALFORMED,
            f"the first message is not a {request}: {exc}",
        )
