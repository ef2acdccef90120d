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


#: The HTTP/2 client preface, an empty SETTINGS frame and the ack of the server's.
GREETING = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])
SETTINGS_ACK = bytes([0, 0, 0, 4, 1, 0, 0, 0, 0])
PING, ACK = 6, 1


async def greeted_connections_closed(host: str, port: int, n: int, timeout_s: float = 15) -> None:
    """Open ``n`` connections that complete the HTTP/2 handshake, answer the server's
    pings and never open a stream, and wait until the server has closed every one
    (TimeoutError after ``timeout_s``)."""
    conns = [await asyncio.open_connection(host, port) for _ in range(n)]

    async def closed_by_server(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(GREETING + SETTINGS_ACK)
        buffered = b""
        while chunk := await reader.read(4096):
            buffered += chunk
            while len(buffered) >= 9:  # a frame header: length (3), type, flags, stream (4)
                length = int.from_bytes(buffered[:3], "big")
                if len(buffered) < 9 + length:
                    break
                kind, flags, payload = buffered[3], buffered[4], buffered[9 : 9 + length]
                buffered = buffered[9 + length :]
                if kind == PING and not flags & ACK:  # kept alive as a live client is
                    writer.write(bytes([0, 0, 8, PING, ACK, 0, 0, 0, 0]) + payload)

    try:
        async with asyncio.timeout(timeout_s):
            await asyncio.gather(*(closed_by_server(r, w) for r, w in conns))
    finally:
        for _r, w in conns:
            w.close()
