"""Per-client and per-connection limits: how many streams one client may hold open, and how
many unsolicited messages one stream may send.

A bot's legitimate traffic is one reply per decision request, so replies to the open
request are never limited (a fast bot may answer hundreds of requests a second). Everything
else a bot sends — duplicates, stale or unknown request ids, messages other than Reply — is
"unsolicited" and goes through a token bucket: within the budget each gets its in-band
Notice, beyond it they are dropped with one RATE_LIMITED notice, and a stream that keeps
flooding is closed with RESOURCE_EXHAUSTED.
"""

from __future__ import annotations

import asyncio
import ipaddress
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from enum import Enum
from typing import Any, TypeVar

import grpc
from google.protobuf.message import DecodeError

from medina.boundary.bucket import TokenBucket

from .status import Reason, Refused, abort

Context = grpc.aio.ServicerContext[Any, Any]
T = TypeVar("T")

#: gRPC's own ceiling on a received message. The server's limit (``max_message_bytes``) is
#: enforced on bot streams by ``sized`` instead, so that the refusal can carry its reason.
CORE_MESSAGE_CEILING = 4 * 1024 * 1024


@dataclass(frozen=True)
class Limits:
    """Server limits (the defaults are documented in docs/operations.md)."""

    #: Largest message the server accepts from a client, in bytes.
    max_message_bytes: int = 64 * 1024
    #: Seconds a new Play stream has to send its Hello.
    handshake_timeout_s: float = 10.0
    #: Open Play and Watch streams per client address (0: no limit).
    max_streams_per_client: int = 32
    #: Unsolicited messages a stream may send in a burst ...
    unsolicited_burst: int = 20
    #: ... and per second after that.
    unsolicited_per_second: float = 10.0
    #: Unsolicited messages dropped in a row before the stream is closed.
    flood_disconnect_after: int = 200
    #: Seconds a connection may stay open with no stream before it is closed (it holds no
    #: seat; a client opens it again on its next call). A client that finished the HTTP/2
    #: handshake and opens nothing holds a file until then, so it is short.
    idle_connection_s: float = 30.0
    #: Count loopback clients too. By default they are not limited: a client on the server's
    #: own machine is the organiser's (a tournament runner, ``match``, a ladder's house bots),
    #: and the limit is against strangers. Behind a proxy on the same machine every client is
    #: loopback: limit at the proxy (docs/operations.md).
    limit_loopback: bool = False

    def __post_init__(self) -> None:
        if self.max_message_bytes < 1024:
            raise ValueError(f"max_message_bytes {self.max_message_bytes} is below 1024")
        if self.handshake_timeout_s <= 0:
            raise ValueError(f"handshake_timeout_s {self.handshake_timeout_s} must be positive")
        if not self.idle_connection_s > 0:
            raise ValueError(f"idle_connection_s {self.idle_connection_s} must be positive")
        if self.max_streams_per_client < 0:
            raise ValueError("max_streams_per_client must be 0 (no limit) or more")
        if self.unsolicited_burst < 1 or self.unsolicited_per_second <= 0:
            raise ValueError("unsolicited_burst must be >= 1 and unsolicited_per_second > 0")
        if self.flood_disconnect_after < 1:
            raise ValueError("flood_disconnect_after must be >= 1")


class FloodVerdict(Enum):
    """What becomes of an unsolicited message (``FloodGuard.admit``)."""

    #: Within the budget: answer it (its in-band Notice).
    OK = "ok"
    #: Over the budget, the first in a row: drop it and tell the bot once (RATE_LIMITED).
    FIRST_DROP = "first-drop"
    #: Over the budget again: drop it unanswered.
    DROP = "drop"
    #: Over the budget ``flood_disconnect_after`` times in a row: close the stream.
    DISCONNECT = "disconnect"


class FloodGuard:
    """The unsolicited-message budget of one stream."""

    def __init__(self, limits: Limits, clock: Callable[[], float] = time.monotonic) -> None:
        self.bucket = TokenBucket(limits.unsolicited_per_second, limits.unsolicited_burst, clock)
        self.disconnect_after = limits.flood_disconnect_after
        self.dropped = 0  # dropped in a row; reset once a message is within budget again

    def admit(self) -> FloodVerdict:
        """The verdict on one more unsolicited message."""
        if self.bucket.take():
            self.dropped = 0
            return FloodVerdict.OK
        self.dropped += 1
        if self.dropped >= self.disconnect_after:
            return FloodVerdict.DISCONNECT
        return FloodVerdict.FIRST_DROP if self.dropped == 1 else FloodVerdict.DROP


def client_of(peer: str) -> str:
    """The client address of a gRPC peer string, without the port.

    ``ipv4:127.0.0.1:5000`` -> ``127.0.0.1``; ``ipv6:[::1]:5000`` -> ``::1``;
    anything else (``unix:...``) is its own client.
    """
    kind, _, rest = peer.partition(":")
    if kind == "ipv4":
        return rest.rsplit(":", 1)[0]
    if kind == "ipv6":
        host = rest.rsplit(":", 1)[0] if rest.startswith("[") else rest
        return host.strip("[]")
    return peer


def is_loopback(client: str) -> bool:
    """Whether a client address is this machine's loopback (a name or a unix socket: no)."""
    try:
        return ipaddress.ip_address(client).is_loopback
    except ValueError:
        return False  # a unix socket, or a name: not known to be this machine


class StreamSlotsExhausted(Exception):
    """The client already holds as many streams as it may."""


class ClientSlots:
    """Counts open streams per client address (loopback clients only with ``loopback``)."""

    def __init__(self, limit: int, *, loopback: bool = True) -> None:
        self.limit = limit
        self.loopback = loopback
        self.open: dict[str, int] = {}

    @classmethod
    def for_limits(cls, limits: Limits) -> ClientSlots:
        """The slots ``limits`` ask for."""
        return cls(limits.max_streams_per_client, loopback=limits.limit_loopback)

    def acquire(self, peer: str) -> str:
        """Take a slot for ``peer``; returns the client key to release with.

        Raises StreamSlotsExhausted when the client is at its limit."""
        return self.take(client_of(peer))

    def take(self, client: str) -> str:
        """Take a slot for a client address (the web viewer's streams count here too)."""
        held = self.open.get(client, 0)
        if self.limit and held >= self.limit and (self.loopback or not is_loopback(client)):
            raise StreamSlotsExhausted(
                f"client {client} already has {held} open streams (the limit is {self.limit}); "
                "close some before opening more"
            )
        self.open[client] = held + 1
        return client

    def release(self, client: str) -> None:
        """Give a slot back."""
        held = self.open.get(client, 0) - 1
        if held > 0:
            self.open[client] = held
        else:
            self.open.pop(client, None)


@dataclass(frozen=True, slots=True)
class Oversize:
    """A message over the size limit, in place of the message (see ``sized``)."""

    size: int
    limit: int

    def status(self) -> tuple[grpc.StatusCode, Reason, str]:
        """The status that ends the stream."""
        return (
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            Reason.MESSAGE_TOO_LARGE,
            f"a message of {self.size} bytes is over the limit of {self.limit} bytes",
        )

    def refused(self) -> Refused:
        """That status, to return rather than raise (``status.Refused``)."""
        code, reason, text = self.status()
        return Refused(code, reason, text, {"limit": self.limit, "size": self.size})


def sized(parse: Callable[[bytes], T], limit: int) -> Callable[[bytes], T | Oversize]:
    """A request deserializer that yields ``Oversize`` for a message over ``limit`` bytes
    instead of parsing it (gRPC's own limit would end the call without a reason)."""

    def deserialize(data: bytes) -> T | Oversize:
        if len(data) > limit:
            return Oversize(len(data), limit)
        return parse(data)

    return deserialize


@asynccontextmanager
async def stream_slot(
    slots: ClientSlots, context: Context, *, exempt: bool = False
) -> AsyncIterator[None]:
    """Hold one of the calling client's stream slots for the body; a client at its limit
    gets RESOURCE_EXHAUSTED instead. An ``exempt`` stream (the organiser's own) holds none:
    strangers on its address must not lock the organiser out."""
    if exempt:
        yield
        return
    try:
        client = slots.acquire(context.peer())
    except StreamSlotsExhausted as exc:
        await abort(
            context,
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            Reason.TOO_MANY_STREAMS,
            str(exc),
            limit=slots.limit,
        )
    try:
        yield
    finally:
        slots.release(client)


#: How long a stream cut for flooding is still read (and its messages dropped) before its
#: status goes out, and how quiet it must fall to stop sooner.
DRAIN_S = 1.0
DRAIN_QUIET_S = 0.05


async def drain(request_iterator: AsyncIterator[object]) -> None:
    """Read and drop what the bot is still sending, until it pauses (or ``DRAIN_S``).

    A server that stops reading lets the HTTP/2 window fill: the bot's writes then wait, and
    when the stream ends under a waiting write, gRPC's client library reports its own
    INTERNAL ("Internal error from Core") instead of the status the server sent. Reading
    the backlog first lets the bot see RESOURCE_EXHAUSTED and its reason.
    """
    loop = asyncio.get_running_loop()
    end = loop.time() + DRAIN_S
    try:
        while loop.time() < end:
            async with asyncio.timeout(DRAIN_QUIET_S):
                await anext(request_iterator)
    except (
        TimeoutError,
        StopAsyncIteration,
        grpc.aio.AioRpcError,
        grpc.aio.UsageError,
        grpc.aio.AbortError,  # the call was ended meanwhile
    ):
        pass
    except DecodeError:
        pass  # garbage among the flood: dropped like the rest
