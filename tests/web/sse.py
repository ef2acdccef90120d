"""A minimal HTTP/1.0 client on asyncio streams, enough to read a viewer's Server-Sent
Events stream to its end (HTTP/1.0: no chunking, the server closes when done)."""

from __future__ import annotations

import asyncio
import json
import socket
from typing import Any


async def get(host: str, port: int, path: str) -> tuple[int, dict[str, str], bytes]:
    """(status, headers, body) of GET ``path``."""
    reader, writer = await asyncio.open_connection(host, port)
    try:
        writer.write(f"GET {path} HTTP/1.0\r\nHost: {host}\r\n\r\n".encode())
        await writer.drain()
        data = await reader.read()
    finally:
        writer.close()
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return status, headers, body


def parse_events(body: bytes) -> list[tuple[str, Any]]:
    """(event name, decoded JSON data) of each frame; keep-alive comments are skipped."""
    out: list[tuple[str, Any]] = []
    for frame in body.decode().split("\n\n"):
        event = "message"
        data: list[str] = []
        for line in frame.split("\n"):
            if line.startswith("event: "):
                event = line[len("event: ") :]
            elif line.startswith("data: "):
                data.append(line[len("data: ") :])
        if data:
            out.append((event, json.loads("\n".join(data))))
    return out


async def read_events(host: str, port: int, path: str) -> list[tuple[str, Any]]:
    """Every event of an SSE stream, read until the server closes it."""
    status, headers, body = await get(host, port, path)
    assert status == 200, body
    assert headers["content-type"].startswith("text/event-stream")
    return parse_events(body)


async def never_reading(port: int, path: str, version: str = "1.1") -> socket.socket:
    """A connection that asks for ``path`` with a tiny receive buffer and then reads nothing
    (until the test reads it: ``loop.sock_recv``)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)  # before connecting
    sock.setblocking(False)
    loop = asyncio.get_running_loop()
    try:
        await loop.sock_connect(sock, ("127.0.0.1", port))
        await loop.sock_sendall(sock, f"GET {path} HTTP/{version}\r\nHost: x\r\n\r\n".encode())
    except BaseException:
        sock.close()
        raise
    return sock


async def read_out(sock: socket.socket) -> bytes:
    """What ``sock`` reads until the server closes it (a reset ends it too)."""
    loop = asyncio.get_running_loop()
    data = bytearray()
    try:
        while chunk := await loop.sock_recv(sock, 65536):
            data += chunk
    except ConnectionResetError:
        pass
    return bytes(data)
