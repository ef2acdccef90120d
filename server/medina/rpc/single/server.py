"""The single-process server: one process hosts every match and answers every service (also
what each worker process of ``serve --workers N`` runs, with its own listener for bots)."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import secrets
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from medina.boundary.stopping import stop_signals_caught
from medina.v1 import admin_pb2_grpc

from ..common.admission import LoopLag
from ..common.auth import bearer_metadata
from ..common.collector import Collector
from ..common.config import BotListener, ServerConfig
from ..common.limits import ClientSlots
from ..common.match_service import MatchService
from ..common.serving import add_port, server_options, start_serving
from .arena_servicer import ArenaServicer, add_arena_service
from .host import Arena, Shutdown
from .local_matches import LocalMatches, SpectatorServicer

log = logging.getLogger("medina.rpc")


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
    #: The organiser service (its admission control's refusals are counted there).
    match_service: MatchService | None = None

    @property
    def address(self) -> str:
        """``host:port`` bots connect to."""
        return f"{self.config.host}:{self.port}"

    @property
    def organiser_metadata(self) -> tuple[tuple[str, str], ...]:
        """The metadata of this server's organiser calls (none when it takes them from
        anyone)."""
        return bearer_metadata(self.config.organiser_token)

    async def stop(self, grace_s: float | None = None) -> None:
        """Graceful shutdown: no new matches, running ones get ``grace_s`` to end, the rest
        are aborted with complete records, then the server stops."""
        await self.end_matches(grace_s)
        await self.close()

    async def end_matches(
        self, grace_s: float | None = None, now: asyncio.Event | None = None
    ) -> Shutdown:
        """The first half of ``stop``: no new matches, running ones get ``grace_s`` (the
        configured grace by default) to end, or until ``now`` is set; the rest are aborted
        with complete records. The server still answers (ListMatches, Watch of the
        records)."""
        grace = self.config.shutdown_grace_s if grace_s is None else grace_s
        self.health.enter_graceful_shutdown()
        return await self.arena.shutdown(grace, now)

    async def close(self) -> None:
        """The second half of ``stop``: the server stops listening."""
        if self.bots_server is not None:
            await self.bots_server.stop(1.0)
        await self.server.stop(1.0)
        await self.lag.stop()


async def start_server(config: ServerConfig) -> RunningServer:
    """Start serving; returns once the port is bound."""
    server = grpc.aio.server(options=server_options(config))
    arena = Arena(
        config.records_dir, records_reserve_bytes=int(config.records_reserve_mb * 1_000_000)
    )
    if config.scan_records:
        arena.load_records()
    # Said at the start (once, at ERROR), not first with a refused CreateMatch: a records
    # directory already short of its reserve takes no match.
    arena.space.check()
    lag = LoopLag()
    if config.admission.max_queued > 0:
        arena.queue_for(config.admission, lambda: lag.ms)
    slots = ClientSlots.for_limits(config.limits)
    add_arena_service(ArenaServicer(arena, config.limits, slots), server)
    match_service = MatchService(LocalMatches(arena), config.organiser_token, config.admission, lag)
    admin_pb2_grpc.add_MatchServiceServicer_to_server(match_service, server)
    admin_pb2_grpc.add_SpectatorServiceServicer_to_server(
        SpectatorServicer(arena, slots, config.organiser_token), server
    )
    health_servicer, port = await start_serving(server, config)
    log.info(
        "listening on %s:%d, %s (records in %s)",
        config.host,
        port,
        "TLS" if config.tls_cert is not None else "in clear (no TLS)",
        config.records_dir,
    )
    if arena.queue is not None:
        lag.on_tick.append(arena.queue.tick)
    lag.start()
    running = RunningServer(
        server, port, arena, health_servicer, config, lag, slots, match_service=match_service
    )
    if config.bots is not None:
        running.bots_server, running.bots_port = await _serve_bots(arena, config, config.bots)
    return running


async def start_private_server(records_dir: Path) -> RunningServer:
    """A server on 127.0.0.1 for one command's own matches (``match``, a tournament's games
    and entry games, check-bot), its organiser calls closed to all but that command: the
    bots it hosts are handed its address, and one that called ForfeitSeat on its opponents
    or AbortMatch on a match it was losing (a tournament replays an aborted game) decided
    games from inside. The command makes its calls with ``organiser_metadata``."""
    return await start_server(
        ServerConfig(
            host="127.0.0.1",
            port=0,
            records_dir=records_dir,
            organiser_token=secrets.token_urlsafe(32),
        )
    )


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


async def serve_forever(
    config: ServerConfig,
    beside: Callable[[RunningServer], Awaitable[Callable[[], Awaitable[None]]]] | None = None,
    *,
    until_stdin_closes: bool = False,
) -> None:
    """Run until SIGTERM or SIGINT (or, for a worker process, until its front closes our
    stdin: a front that died leaves no worker behind), then shut down gracefully.

    ``beside`` starts something next to the server once it listens (the web viewer) and
    returns how to stop it; it is stopped once the matches have ended (or were aborted).
    """
    with stop_signals_caught() as stop:
        running = await start_server(config)
        async with Collector():
            bots = f" bots-port {running.bots_port}" if running.bots_server is not None else ""
            print(f"medina-arena listening on {running.address}{bots}", flush=True)
            stop_beside = await beside(running) if beside is not None else None
            if until_stdin_closes:
                await _first_of(stop.wait(), _stdin_closed())
            else:
                await stop.wait()
            # At WARNING, the default level: an operator sees why the server stops and what
            # became of its matches (a worker's front says it for all of them).
            said = log.info if until_stdin_closes else log.warning
            live = len(running.arena.running())
            said(
                "%s: shutting down; %s",
                stop.first or "its front closed",
                f"{live} running match(es) have up to {config.shutdown_grace_s:g} s to end "
                f"({stop.first or 'a stop signal'} again ends them now)"
                if live
                else "no match running",
            )
            ended = await running.end_matches(now=stop.again)
            # The viewer and /metrics last: live pages follow the matches to their end.
            if stop_beside is not None:
                await stop_beside()
            await running.close()
            if ended.ended or ended.aborted:
                said(
                    "stopped: %d match(es) ended within the grace, %d aborted (their records "
                    "end 'server shutting down')",
                    ended.ended,
                    ended.aborted,
                )


async def _first_of(*waits: Awaitable[object]) -> None:
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
