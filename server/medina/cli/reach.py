"""Whether an organiser's command reaches the server it is given (``--server``), asked once
at start: these commands dial in clear, so a wrong address, or a server that serves TLS, is
said at once in one line rather than after minutes of silent retries."""

from __future__ import annotations

import asyncio
import contextlib
import ssl

import grpc

from medina.wire.shared.addresses import host_port

__all__ = ["REACH_S", "serves_tls", "unreachable"]

#: How long a command waits for the server to answer before saying it cannot.
REACH_S = 10.0


async def unreachable(address: str, timeout_s: float = REACH_S) -> str | None:
    """Why the server at ``address`` cannot be reached in clear, or None."""
    if await serves_tls(address):  # at once: gRPC in clear would retry it until timeout_s
        return (
            f"the server at {address} serves TLS, and this command dials in clear (it has no "
            "TLS options yet; see docs/operations.md, 'In public')"
        )
    async with grpc.aio.insecure_channel(address) as channel:
        try:
            await asyncio.wait_for(channel.channel_ready(), timeout_s)
        except TimeoutError:
            return (
                f"cannot reach a server at {address} within {timeout_s:g} s "
                "(is medina-arena serve running there?)"
            )
    return None


async def serves_tls(address: str, timeout_s: float = 5.0) -> bool:
    """Whether something at ``address`` completes a TLS handshake (its certificate is not
    checked: this only tells a TLS server from one that is down or speaks in clear)."""
    parts = host_port(address)
    if parts is None:
        return False
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    context.set_alpn_protocols(["h2"])
    host = parts[0].strip("[]")
    try:
        _, writer = await asyncio.wait_for(
            asyncio.open_connection(host, int(parts[1]), ssl=context), timeout_s
        )
    except (OSError, TimeoutError):
        # ssl.SSLError is an OSError: no TLS there (or nothing at all)
        return False
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()
    return True
