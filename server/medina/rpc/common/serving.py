"""What every gRPC server here does alike (the single-process server, the front of a
multi-worker one, a worker's listener for bots): its options, its port (TLS when
configured), health and reflection, and waiting for a signal.
"""

from __future__ import annotations

import errno
import socket
from collections.abc import Callable

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from medina.boundary.stopping import stop_signals_caught
from medina.v1 import admin_pb2, arena_pb2
from medina.wire.shared.addresses import listening_port_error

from .config import BotListener, ServerConfig
from .limits import CORE_MESSAGE_CEILING
from .reflection import enable_reflection

#: New calls the server holds before gRPC cancels some (three times as many: all).
PENDING_CALLS = 10_000


#: A port another process listens on is refused: gRPC's default (SO_REUSEPORT) let a second
#: server start on it silently, and the kernel then shared the bots' new connections between
#: the two (a forgotten old server took half of them). Every listener of medina-arena sets it.
OWN_PORT = ("grpc.so_reuseport", 0)


def server_options(config: ServerConfig) -> list[tuple[str, int]]:
    """The gRPC server options: the limits, then ``config.options`` (which override)."""
    options = {
        # The limit on bot streams is enforced by `limits.sized` (its refusal names a reason).
        "grpc.max_receive_message_length": max(
            config.limits.max_message_bytes, CORE_MESSAGE_CEILING
        ),
        "grpc.max_send_message_length": 4 * 1024 * 1024,
        "grpc.keepalive_time_ms": 20_000,
        "grpc.keepalive_timeout_ms": 10_000,
        "grpc.http2.min_ping_interval_without_data_ms": 5_000,
        # A TCP connection that has not finished its TLS/HTTP2 handshake by the Hello deadline
        # is closed: raw sockets that never speak hold nothing for long.
        "grpc.server_handshake_timeout_ms": int(config.limits.handshake_timeout_s * 1000),
        # A connection with no open stream is closed soon (``Limits.idle_connection_s``): it
        # holds no seat, but a client that completed the handshake and opens no stream
        # would otherwise hold one of the process's files for as long as it answers pings.
        "grpc.max_connection_idle_ms": max(1, round(config.limits.idle_connection_s * 1000)),
        # Streams per HTTP/2 connection; the per-client limit counts across connections.
        "grpc.max_concurrent_streams": 64,
        # New calls that wait for the server to take them up. gRPC's defaults (1,000, and
        # 3,000 at which every further call is refused) cancel calls of an ordinary burst:
        # a tournament starting 512 four-player matches at once opens over 2,000 streams,
        # and some of its bots were cancelled before they could say Hello.
        "grpc.server.max_pending_requests": PENDING_CALLS,
        "grpc.server.max_pending_requests_hard_limit": 3 * PENDING_CALLS,
        OWN_PORT[0]: OWN_PORT[1],
    }
    options.update(dict(config.options))
    return list(options.items())


def add_port(server: grpc.aio.Server, config: ServerConfig | BotListener) -> int:
    """Listen on ``config.host:config.port`` (TLS when configured); the bound port.
    ValueError for a port out of 0..65535, which gRPC would take modulo 65536."""
    why = listening_port_error(config.port)
    if why is not None:
        raise ValueError(why)
    address = f"{config.host}:{config.port}"
    taken = _port_taken(config.host, config.port)
    if taken is not None:
        raise OSError(f"could not listen on {address}: {taken}")
    try:
        if config.tls_cert is not None and config.tls_key is not None:
            credentials = grpc.ssl_server_credentials(
                [(config.tls_key, config.tls_cert)],
                root_certificates=config.tls_client_ca,
                require_client_auth=config.tls_client_ca is not None,
            )
            port = server.add_secure_port(address, credentials)
        else:
            port = server.add_insecure_port(address)
    except RuntimeError:  # grpcio 1.85 raises where older releases returned 0
        port = 0
    if port == 0:
        raise OSError(
            f"could not listen on {address}: the port is in use (another server?) or the "
            "address is not this machine's"
        )
    return port


def _port_taken(host: str, port: int) -> str | None:
    """Why ``host:port`` cannot be listened on, found by binding it first (None: it can, as
    far as a plain socket tells). gRPC finds the same but logs its own error line to stderr
    first, which an operator read as a crash beside the one-line refusal."""
    if port == 0:
        return None
    try:
        found = socket.getaddrinfo(
            host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )
    except OSError:
        return None  # gRPC says what is wrong with the name
    # In use on any of the host's addresses is refused (bots dialling that one would reach
    # the other server); not this machine's is refused only when none is (gRPC listens on
    # those it can: "localhost" may name an IPv6 address a machine lacks).
    missing = 0
    for family, kind, proto, _name, sockaddr in found:
        with socket.socket(family, kind, proto) as probe:
            # As gRPC does: a port left in TIME_WAIT by a server just stopped is free.
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(sockaddr)
            except OSError as exc:
                if exc.errno == errno.EADDRINUSE:
                    return "the port is in use (another server?)"
                if exc.errno == errno.EADDRNOTAVAIL:
                    missing += 1
    if found and missing == len(found):
        return "the address is not this machine's"
    return None


def service_names() -> tuple[str, ...]:
    """The services every server (single process or front) answers, health last."""
    return (
        arena_pb2.DESCRIPTOR.services_by_name["ArenaService"].full_name,
        admin_pb2.DESCRIPTOR.services_by_name["MatchService"].full_name,
        admin_pb2.DESCRIPTOR.services_by_name["SpectatorService"].full_name,
        health.SERVICE_NAME,
    )


async def start_serving(
    server: grpc.aio.Server, config: ServerConfig
) -> tuple[health.HealthServicer, int]:
    """Add health and reflection to ``server`` (its own services already added), bind its
    port and start it; the health servicer (every service SERVING) and the bound port.
    The single server and the ``--workers`` front start the same way."""
    health_servicer = health.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    names = service_names()
    enable_reflection(names, server)
    port = add_port(server, config)
    await server.start()
    for name in names[:3]:
        health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    health_servicer.set("", health_pb2.HealthCheckResponse.SERVING)
    return health_servicer, port


async def wait_for_signal(ready: Callable[[], None] | None = None) -> None:
    """Return at the first SIGTERM, SIGINT or SIGHUP; ``ready`` is called once they are
    caught."""
    with stop_signals_caught() as stop:
        if ready is not None:
            ready()
        await stop.wait()
