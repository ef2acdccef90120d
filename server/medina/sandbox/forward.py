"""The arena's end of a sandbox's only way out: a unix socket in the sandbox's seat
directory whose connections are copied to and from the arena's TCP address (over TLS when
the arena serves it: the bot inside speaks in clear and never sees the organiser's files).

The streams a bot opens through it are paced (``StreamPace``): a sandboxed bot that opened
Play streams with made-up tokens as fast as it could, a thousand at once, kept the arena
refusing them, and its opponent, whose replies waited behind, timed out. A bot needs one
stream a match; past the pace its bytes wait in the relay, and nobody else's do.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from medina.boundary.bucket import TokenBucket

CHUNK = 65536

#: What an HTTP/2 client sends first (RFC 9113, 3.4), then frames.
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
#: An HTTP/2 frame's header: length (3 bytes), type, flags, stream id (4 bytes).
FRAME_HEADER = 9
#: The frame type that opens a stream (a client's HEADERS on a new, odd stream id).
HEADERS = 0x1
#: New streams a sandboxed bot may open a second through its relay, and at once.
STREAMS_PER_S = 20.0
STREAMS_BURST = 50


def split_address(address: str) -> tuple[str, int]:
    """``host:port`` (``[v6]:port`` too) as a host and a port; ValueError otherwise."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or not host:
        raise ValueError(f"not a host:port address: {address!r}")
    return host.strip("[]"), int(port)


class NewStreams:
    """Counts the streams a client opens in the bytes it sends on one HTTP/2 connection:
    the frames' headers are read across chunks, their payloads skipped. Bytes that are not
    HTTP/2 (no preface) count nothing: the arena refuses them itself."""

    def __init__(self) -> None:
        self._preface = 0  # bytes of the preface seen
        self._header = b""  # a frame header cut by a chunk's end
        self._skip = 0  # payload bytes left of the current frame
        self._highest = 0  # the highest stream id opened
        self._http2 = True

    def count(self, data: bytes) -> int:
        """The new streams ``data`` opens (the next bytes the client sent)."""
        if not self._http2:
            return 0
        at, end, opened = 0, len(data), 0
        if self._preface < len(PREFACE):
            take = min(len(PREFACE) - self._preface, end)
            if data[:take] != PREFACE[self._preface : self._preface + take]:
                self._http2 = False
                return 0
            self._preface += take
            at = take
        while at < end:
            if self._skip:
                step = min(self._skip, end - at)
                self._skip -= step
                at += step
                continue
            need = FRAME_HEADER - len(self._header)
            self._header += data[at : at + need]
            at += min(need, end - at)
            if len(self._header) < FRAME_HEADER:
                break
            header, self._header = self._header, b""
            self._skip = int.from_bytes(header[:3], "big")
            stream = int.from_bytes(header[5:9], "big") & 0x7FFF_FFFF
            if header[3] == HEADERS and stream > self._highest:
                self._highest = stream
                opened += 1
        return opened


class StreamPace:
    """The pace of new streams for everything one sandbox sends (all its connections):
    ``per_s`` a second, ``burst`` at once; ``clock`` and ``sleep`` are the loop's."""

    def __init__(
        self,
        per_s: float = STREAMS_PER_S,
        burst: int = STREAMS_BURST,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.bucket = TokenBucket(per_s, burst, clock)
        self.sleep = sleep
        #: Streams counted so far, and seconds waited for the pace (for tests and logs).
        self.opened = 0
        self.waited_s = 0.0

    async def admit(self, streams: int) -> None:
        """Take ``streams`` new streams (or connections): return once the pace allows them."""
        if not streams:
            return
        self.opened += streams
        wait = self.bucket.owe(cost=streams)
        if wait > 0:
            self.waited_s += wait
            await self.sleep(wait)  # the pace: the bot's bytes wait here, nobody else's


class Forwarder:
    """Listens on ``path``; each connection is relayed to ``address`` (host:port), through
    TLS with ``tls`` when given (the server's certificate checked against the host), the
    streams opened through all of them paced by ``pace``."""

    def __init__(
        self,
        path: Path,
        address: str,
        tls: ssl.SSLContext | None = None,
        pace: StreamPace | None = None,
    ) -> None:
        self.path = path
        self.host, self.port = split_address(address)
        self.tls = tls
        self.pace = pace or StreamPace()
        self._server: asyncio.AbstractServer | None = None
        self._links: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        """Start listening."""
        self._server = await asyncio.start_unix_server(self._link, path=str(self.path))

    async def _link(self, inside_r: asyncio.StreamReader, inside_w: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._links.add(task)
        writers = [inside_w]
        try:
            # A connection is paced as a stream: each costs the arena a handshake.
            await self.pace.admit(1)
            outside_r, outside_w = await asyncio.open_connection(
                self.host,
                self.port,
                ssl=self.tls,
                server_hostname=self.host if self.tls is not None else None,
            )
            writers.append(outside_w)
            await asyncio.gather(
                _copy(inside_r, outside_w, self._paced()), _copy(outside_r, inside_w)
            )
        except (OSError, asyncio.CancelledError):
            pass  # the arena is gone, or the sandbox is being closed: the link ends here
        finally:
            for w in writers:
                w.close()
            self._links.discard(task)

    async def close(self) -> None:
        """Stop listening and cut every connection."""
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()
        for task in list(self._links):
            task.cancel()
        await asyncio.gather(*self._links, return_exceptions=True)

    def _paced(self) -> Callable[[bytes], Awaitable[None]]:
        """What the bot's bytes on one new connection wait for before they are sent on."""
        streams = NewStreams()

        async def before(data: bytes) -> None:
            await self.pace.admit(streams.count(data))

        return before


async def _copy(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    before: Callable[[bytes], Awaitable[None]] | None = None,
) -> None:
    """Copy until the end of ``reader``, then end ``writer``'s direction; each chunk waits
    for ``before`` first."""
    try:
        while data := await reader.read(CHUNK):
            if before is not None:
                await before(data)
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except (ConnectionError, OSError):
        writer.close()
