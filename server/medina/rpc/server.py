"""Building and running the gRPC server: services, health, reflection, TLS, graceful shutdown."""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import logging
import signal
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from medina.v1 import admin_pb2, admin_pb2_grpc, arena_pb2

from .admin_servicer import MatchServicer, SpectatorServicer
from .admission import AdmissionLimits, LoopLag
from .arena_servicer import ArenaServicer, add_arena_service
from .host import Arena
from .limits import CORE_MESSAGE_CEILING, ClientSlots, Limits
from .reflection import enable_reflection

log = logging.getLogger("medina.rpc")


@dataclass(frozen=True)
class BotListener:
    """A worker process's own address for bots (``serve --workers N``): bots that the front
    redirects play here, with no process forwarding their messages. It serves ArenaService
    and health only, with the front's TLS and per-client limits."""

    host: str
    port: int = 0
    limits: Limits = field(default_factory=Limits)
    tls_cert: bytes | None = None
    tls_key: bytes | None = None
    tls_client_ca: bytes | None = None


@dataclass(frozen=True)
class ServerConfig:
    """How to run the server. ``port`` 0 picks a free port."""

    host: str = "127.0.0.1"
    port: int = 50051
    records_dir: Path = Path("records")
    organiser_token: str | None = None
    tls_cert: bytes | None = None
    tls_key: bytes | None = None
    tls_client_ca: bytes | None = None  # set to require client certificates (mutual TLS)
    limits: Limits = field(default_factory=Limits)
    admission: AdmissionLimits = field(default_factory=AdmissionLimits)
    shutdown_grace_s: float = 30.0
    options: tuple[tuple[str, int], ...] = field(default=())
    #: Read the records directory at start (earlier runs' matches). A worker process of a
    #: multi-worker server does not: its front lists those, once.
    scan_records: bool = True
    #: A worker process's listener for bots (None: bots reach it through its front only).
    bots: BotListener | None = None


@dataclass
class RunningServer:
    """A started server and what it hosts."""

    server: grpc.aio.Server
    port: int
    arena: Arena
    health: health.HealthServicer
    config: ServerConfig
    #: The event loop's lateness, which admission control reads.
    lag: LoopLag = field(default_factory=LoopLag)
    #: Open Play/Watch streams per client address.
    slots: ClientSlots = field(default_factory=lambda: ClientSlots(0))
    #: The worker's own server for bots (``ServerConfig.bots``) and its port.
    bots_server: grpc.aio.Server | None = None
    bots_port: int = 0

    @property
    def address(self) -> str:
        """``host:port`` bots connect to."""
        return f"{self.config.host}:{self.port}"

    async def stop(self, grace_s: float | None = None) -> None:
        """Graceful shutdown: no new matches, running ones get ``grace_s`` to end, the rest
        are aborted with complete records, then the server stops."""
        grace = self.config.shutdown_grace_s if grace_s is None else grace_s
        self.health.enter_graceful_shutdown()
        await self.arena.shutdown(grace)
        if self.bots_server is not None:
            await self.bots_server.stop(1.0)
        await self.server.stop(1.0)
        await self.lag.stop()


#: New calls the server holds before gRPC cancels some (three times as many: all).
PENDING_CALLS = 10_000


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
        # A connection with no open stream for five minutes is closed: it holds no seat.
        "grpc.max_connection_idle_ms": 300_000,
        # Streams per HTTP/2 connection; the per-client limit counts across connections.
        "grpc.max_concurrent_streams": 64,
        # New calls that wait for the server to take them up. gRPC's defaults (1,000, and
        # 3,000 at which every further call is refused) cancel calls of an ordinary burst:
        # a tournament starting 512 four-player matches at once opens over 2,000 streams,
        # and some of its bots were cancelled before they could say Hello.
        "grpc.server.max_pending_requests": PENDING_CALLS,
        "grpc.server.max_pending_requests_hard_limit": 3 * PENDING_CALLS,
    }
    options.update(dict(config.options))
    return list(options.items())


def add_port(server: grpc.aio.Server, config: ServerConfig | BotListener) -> int:
    """Listen on ``config.host:config.port`` (TLS when configured); the bound port."""
    address = f"{config.host}:{config.port}"
    if config.tls_cert is not None and config.tls_key is not None:
        credentials = grpc.ssl_server_credentials(
            [(config.tls_key, config.tls_cert)],
            root_certificates=config.tls_client_ca,
            require_client_auth=config.tls_client_ca is not None,
        )
        port = server.add_secure_port(address, credentials)
    else:
        port = server.add_insecure_port(address)
    if port == 0:
        raise OSError(f"could not listen on {address}")
    return port


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


async def start_server(config: ServerConfig) -> RunningServer:
    """Start serving; returns once the port is bound."""
    server = grpc.aio.server(options=server_options(config))
    arena = Arena(config.records_dir)
    if config.scan_records:
        arena.load_records()
    lag = LoopLag()
    slots = ClientSlots.for_limits(config.limits)
    add_arena_service(ArenaServicer(arena, config.limits, slots), server)
    admin_pb2_grpc.add_MatchServiceServicer_to_server(
        MatchServicer(arena, config.organiser_token, config.admission, lag), server
    )
    admin_pb2_grpc.add_SpectatorServiceServicer_to_server(SpectatorServicer(arena, slots), server)
    health_servicer, port = await start_serving(server, config)
    log.info("listening on %s:%d (records in %s)", config.host, port, config.records_dir)
    lag.start()
    running = RunningServer(server, port, arena, health_servicer, config, lag, slots)
    if config.bots is not None:
        running.bots_server, running.bots_port = await _serve_bots(arena, config, config.bots)
    return running


async def _serve_bots(
    arena: Arena, config: ServerConfig, bots: BotListener
) -> tuple[grpc.aio.Server, int]:
    """A worker's own listener for bots: ArenaService and health on ``bots``'s address."""
    server = grpc.aio.server(
        options=server_options(dataclasses.replace(config, limits=bots.limits, options=()))
    )
    slots = ClientSlots.for_limits(bots.limits)
    add_arena_service(ArenaServicer(arena, bots.limits, slots), server)
    health_servicer = health.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    port = add_port(server, bots)
    await server.start()
    health_servicer.set("", health_pb2.HealthCheckResponse.SERVING)
    log.info("bots may connect to %s:%d", bots.host, port)
    return server, port


def tune_gc() -> None:
    """Collect garbage less often and never look at start-up objects again.

    A match allocates many short-lived objects per decision; with the default threshold the
    young generation is collected hundreds of times a second and the occasional full
    collection walks every module and message class (pauses of tens of ms were measured,
    charged to whoever was waiting). Frozen start-up objects are never scanned again, and a
    larger first threshold makes collections rarer but no longer.
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(20_000, 50, 100)


async def wait_for_signal(ready: Callable[[], None] | None = None) -> None:
    """Return at the first SIGTERM or SIGINT; ``ready`` is called once they are caught."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    if ready is not None:
        ready()
    try:
        await stop.wait()
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)


async def serve_forever(
    config: ServerConfig,
    beside: Callable[[RunningServer], Awaitable[Callable[[], Awaitable[None]]]] | None = None,
    *,
    until_stdin_closes: bool = False,
) -> None:
    """Run until SIGTERM or SIGINT (or, for a worker process, until its front closes our
    stdin: a front that died leaves no worker behind), then shut down gracefully.

    ``beside`` starts something next to the server once it listens (the web viewer) and
    returns how to stop it; it is stopped first at shutdown.
    """
    running = await start_server(config)
    tune_gc()
    bots = f" bots-port {running.bots_port}" if running.bots_server is not None else ""
    print(f"medina-arena listening on {running.address}{bots}", flush=True)
    stop_beside = await beside(running) if beside is not None else None
    if until_stdin_closes:
        await _first_of(wait_for_signal(), _stdin_closed())
    else:
        await wait_for_signal()
    log.info("shutting down: %d running match(es)", len(running.arena.running()))
    if stop_beside is not None:
        await stop_beside()
    await running.stop()


async def _first_of(*waits: Awaitable[None]) -> None:
    tasks = [asyncio.ensure_future(w) for w in waits]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def _stdin_closed() -> None:
    """Return when stdin reaches its end."""
    reader = asyncio.StreamReader()
    loop = asyncio.get_running_loop()
    transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), sys.stdin
    )
    try:
        while await reader.read(4096):
            pass
    finally:
        transport.close()
