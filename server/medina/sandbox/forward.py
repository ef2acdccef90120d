"""The arena's end of a sandbox's only way out: a unix socket in the sandbox's seat
directory whose connections are copied to and from the arena's TCP address (over TLS when
the arena serves it: the bot inside speaks in clear and never sees the organiser's files)."""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from pathlib import Path

CHUNK = 65536


def split_address(address: str) -> tuple[str, int]:
    """``host:port`` (``[v6]:port`` too) as a host and a port; ValueError otherwise."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or not host:
        raise ValueError(f"not a host:port address: {address!r}")
    return host.strip("[]"), int(port)


class Forwarder:
    """Listens on ``path``; each connection is relayed to ``address`` (host:port), through
    TLS with ``tls`` when given (the server's certificate checked against the host)."""

    def __init__(self, path: Path, address: str, tls: ssl.SSLContext | None = None) -> None:
        self.path = path
        self.host, self.port = split_address(address)
        self.tls = tls
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
            outside_r, outside_w = await asyncio.open_connection(
                self.host,
                self.port,
                ssl=self.tls,
                server_hostname=self.host if self.tls is not None else None,
            )
            writers.append(outside_w)
            await asyncio.gather(_copy(inside_r, outside_w), _copy(outside_r, inside_w))
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


async def _copy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Copy until the end of ``reader``, then end ``writer``'s direction."""
    try:
        while data := await reader.read(CHUNK):
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except (ConnectionError, OSError):
        writer.close()
