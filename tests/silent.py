"""Raw TCP connections that never speak HTTP/2, as a port scanner or a broken client opens
them: a server must close each at its handshake deadline, never hold it."""

from __future__ import annotations

import asyncio


async def silent_connections_closed(host: str, port: int, n: int, timeout_s: float = 15) -> None:
    """Open ``n`` connections that never speak and wait until the server has closed every
    one (TimeoutError after ``timeout_s``)."""
    conns = [await asyncio.open_connection(host, port) for _ in range(n)]

    async def closed_by_server(reader: asyncio.StreamReader) -> None:
        while await reader.read(4096):  # the server's SETTINGS frame, then EOF
            pass

    try:
        async with asyncio.timeout(timeout_s):
            await asyncio.gather(*(closed_by_server(r) for r, _w in conns))
    finally:
        for _r, w in conns:
            w.close()
