"""The first message of a bot stream (its Hello), as every server waits for it: within the
handshake deadline, or the stream ends with the reason the protocol names."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any, TypeVar

import grpc
from google.protobuf.message import DecodeError

from .status import Reason, Refused

__all__ = ["first_message"]

T = TypeVar("T")


async def first_message(
    requests: AsyncIterator[T],
    timeout_s: float,
    *,
    hello: str = "Hello",
    request: str = "PlayRequest",
) -> T | Refused:
    """The stream's first message, as it was read (a decoded request or raw bytes): within
    ``timeout_s`` (else DEADLINE_EXCEEDED, HELLO_TIMEOUT), before the bot closes its side
    (else INVALID_ARGUMENT, HELLO_MISSING), and decodable where it is decoded (else
    INVALID_ARGUMENT, MESSAGE_MALFORMED): the refusal is returned, for the handler to set
    and return (anyone can open streams: nothing is raised, see ``Refused``). What the
    message holds is the caller's to check. ``hello`` and ``request`` name the stream's
    first message and its request type in the refusals (``LobbyHello`` and
    ``LobbyRequest`` on a ladder's lobby)."""
    # The read runs as a task of its own that is never cancelled: cancelling a pending
    # gRPC read (at the deadline, or with the handler when the bot cancels its call) leaks
    # the read's state in grpc.aio, about 80 bytes a stream, never freed; left alone, it
    # fails on its own once the call is over.
    read = asyncio.ensure_future(anext(requests))
    read.add_done_callback(_retrieved)
    try:
        return await asyncio.wait_for(asyncio.shield(read), timeout_s)
    except TimeoutError:
        return Refused(
            grpc.StatusCode.DEADLINE_EXCEEDED,
            Reason.HELLO_TIMEOUT,
            f"no {hello} within {timeout_s:g} s of opening the stream",
            {"timeout_ms": int(timeout_s * 1000)},
        )
    except StopAsyncIteration:
        return Refused(
            grpc.StatusCode.INVALID_ARGUMENT, Reason.HELLO_MISSING, f"stream closed before {hello}"
        )
    except DecodeError as exc:
        return Refused(
            grpc.StatusCode.INVALID_ARGUMENT,
            Reason.MESSAGE_MALFORMED,
            f"the first message is not a {request}: {exc}",
        )


def _retrieved(read: asyncio.Future[Any]) -> None:
    """Take the outcome of a read nobody awaits any more (the call ended first), so that
    asyncio does not log it as never retrieved."""
    if not read.cancelled():
        read.exception()
