"""Whether an organiser's command reaches the server it is given (``--server``) the way it is
told to (in clear, or over TLS with ``--tls-ca``/``--tls-cert``/``--tls-key``), asked once
at start: gRPC retries a wrong address, TLS to a server in clear, clear to a TLS server, a
certificate it refuses and a client certificate the server refuses alike, for minutes and in
silence; here each is said at once in one line naming the problem and the option that
fixes it."""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from dataclasses import dataclass

from medina.rpc.organiser import open_channel
from medina.wire.shared.addresses import host_port
from medina.wire.shared.tls import ClientTls, names

__all__ = ["ARENA_FLAGS", "REACH_S", "Flags", "tls_mismatch", "unreachable"]

#: How long a command waits for the server to answer before saying it cannot.
REACH_S = 10.0
#: How long one TLS handshake (and the server's first bytes after it) may take.
HANDSHAKE_S = 5.0
#: OpenSSL's verify codes for a certificate that does not name the host (DNS name, IP).
_NAME_MISMATCH = (62, 64)


@dataclass(frozen=True)
class Flags:
    """The options a command names in its answers: the server's, and the TLS files' prefix
    (``--tls`` for ``--tls-ca``, ``--tls-cert`` and ``--tls-key``)."""

    server: str = "--server"
    tls: str = "--tls"

    @property
    def all_tls(self) -> str:
        """The three TLS options, for a sentence."""
        return f"{self.tls}-ca, {self.tls}-cert and {self.tls}-key"


#: ``ladder serve --arena``'s options.
ARENA_FLAGS = Flags("--arena", "--arena-tls")


async def unreachable(
    address: str, tls: ClientTls | None = None, timeout_s: float = REACH_S
) -> str | None:
    """Why the server at ``address`` cannot be used with ``tls`` (None: in clear), or None."""
    why = await tls_mismatch(address, tls)
    if why is not None:
        return why
    if not await _ready(address, tls, timeout_s):
        return (
            f"cannot reach a server at {address} within {timeout_s:g} s "
            "(is medina-arena serve running there?)"
        )
    return None


async def tls_mismatch(address: str, tls: ClientTls | None, flags: Flags = Flags()) -> str | None:
    """Why ``tls`` (None: in clear) does not fit the server at ``address``: it serves TLS
    and ``tls`` is None, or the reverse, or its certificate or ours is refused; None when it
    fits, and when nothing answers there (a server that is down: said by ``unreachable``).
    ``flags``: the options the answer names."""
    answers, peer = await _probe(address)
    if peer is not None and tls is None:
        return (
            f"the server at {address} serves TLS: pass {flags.tls}-ca with the CA that signed "
            f"its certificate (and {flags.tls}-cert and {flags.tls}-key if it requires client "
            "certificates; see docs/operations.md, 'In public')"
        )
    if peer is None and answers and tls is not None:
        return f"the server at {address} does not serve TLS: drop {flags.all_tls}"
    if peer is not None and tls is not None:
        return await _refused(address, tls, peer, flags)
    return None


async def _ready(address: str, tls: ClientTls | None, timeout_s: float) -> bool:
    """Whether a gRPC channel to ``address`` becomes ready within ``timeout_s``."""
    async with open_channel(address, tls) as channel:
        try:
            await asyncio.wait_for(channel.channel_ready(), timeout_s)
        except TimeoutError:
            return False
    return True


async def _probe(address: str, timeout_s: float = HANDSHAKE_S) -> tuple[bool, bytes | None]:
    """Whether something answers at ``address``, and the certificate (DER, unchecked) of
    the TLS server there; None when the answer is not TLS (in clear) or nothing answers."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    context.set_alpn_protocols(["h2"])
    try:
        _reader, writer = await _handshake(address, context, None, timeout_s)
    except (ssl.SSLError, ConnectionResetError, ConnectionAbortedError, BrokenPipeError):
        return True, None  # connected, then no TLS: a server in clear
    except (OSError, TimeoutError, ValueError):
        return False, None  # refused, unreachable, silent, or no HOST:PORT
    peer = writer.get_extra_info("ssl_object").getpeercert(binary_form=True)
    await _close(writer)
    return True, bytes(peer or b"")


async def _refused(address: str, tls: ClientTls, peer: bytes, flags: Flags) -> str | None:
    """Why a TLS handshake with ``tls``'s settings fails at ``address`` (whose certificate is
    ``peer``), in the organiser's terms, or None when it succeeds."""
    parts = host_port(address)
    assert parts is not None  # _probe connected
    host = parts[0].strip("[]")
    context = tls.ssl_context()
    trust = f"the CA of {flags.tls}-ca {tls.ca_path}" if tls.ca_path else "the system's CAs"
    try:
        reader, writer = await _handshake(address, context, host, HANDSHAKE_S)
    except ssl.SSLCertVerificationError as exc:
        if exc.verify_code in _NAME_MISMATCH:
            dns, ips = names(ssl.DER_cert_to_PEM_cert(peer).encode("ascii"))
            listed = ", ".join(dns + ips) or "nothing"
            return (
                f"the TLS certificate of the server at {address} does not name {host} (it "
                f"names {listed}): give {flags.server} a name or address it lists"
            )
        return (
            f"the TLS certificate of the server at {address} is not trusted with {trust}: "
            f"{exc.verify_message} ({flags.tls}-ca must be the CA that signed it)"
        )
    except (OSError, TimeoutError) as exc:
        return f"the TLS handshake with {address} failed: {getattr(exc, 'reason', None) or exc}"
    try:
        # A server that requires client certificates checks ours after the handshake (TLS
        # 1.3) and closes the connection where an HTTP/2 server would send its settings.
        first = await asyncio.wait_for(reader.read(1), HANDSHAKE_S)
    except (OSError, TimeoutError):
        first = b""
    await _close(writer)
    if first:
        return None
    if tls.cert_path is None:
        return (
            f"the server at {address} requires a client certificate (mutual TLS): pass "
            f"{flags.tls}-cert and {flags.tls}-key with a certificate signed by a CA it trusts"
        )
    return (
        f"the server at {address} refused the client certificate {flags.tls}-cert "
        f"{tls.cert_path} "
        "(it is not signed by a CA the server trusts for clients)"
    )


async def _handshake(
    address: str, context: ssl.SSLContext, server_hostname: str | None, timeout_s: float
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A TLS connection to ``address`` (ValueError when it is no HOST:PORT)."""
    parts = host_port(address)
    if parts is None:
        raise ValueError(f"not a HOST:PORT address: {address}")
    host = parts[0].strip("[]")
    return await asyncio.wait_for(
        asyncio.open_connection(
            host, int(parts[1]), ssl=context, server_hostname=server_hostname or host
        ),
        timeout_s,
    )


async def _close(writer: asyncio.StreamWriter) -> None:
    """Drop a probe's connection at once: a TLS close waits for the server's close_notify,
    which a gRPC server sends only when it gives up on the HTTP/2 preface (10 s)."""
    writer.transport.abort()
    with contextlib.suppress(OSError):
        await writer.wait_closed()
