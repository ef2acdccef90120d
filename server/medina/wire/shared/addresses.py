"""Ports and ``HOST:PORT`` addresses, as every server here listens and every client dials.

gRPC takes a port number modulo 65536 (``70000`` listens or dials on 4464), so a port out of
range is refused where it is given, with these messages: by the servers' command line and
listener, and by the SDK, the stdio bridge (the Node bot has its own copy in ``bot.js``).
"""

from __future__ import annotations

__all__ = ["address_port_error", "host_port", "listening_port_error"]


def host_port(address: str) -> tuple[str, str] | None:
    """(host, port) of ``HOST:PORT`` (``[v6]:PORT`` too); None for any other target (such as
    ``unix:PATH``), which gRPC reads itself."""
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit() or "/" in host:
        return None
    return host, port


def listening_port_error(port: int) -> str | None:
    """Why ``port`` cannot be listened on (0: any free port), or None."""
    if 0 <= port <= 65535:
        return None
    return f"a port is 0 to 65535 (0: any free port), got {port}"


def address_port_error(address: str) -> str | None:
    """Why the port of ``address`` cannot be dialled (a ``HOST:PORT`` with a port out of
    1..65535), or None."""
    parts = host_port(address)
    if parts is None or 1 <= int(parts[1]) <= 65535:
        return None
    return f"a port is 1 to 65535, got {parts[1]}"
