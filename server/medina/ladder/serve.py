"""Running a ladder server: the lobby (LadderService) on its address, and an arena beside
it, in this process or anywhere an organiser can reach (``--arena``)."""

from __future__ import annotations

import asyncio
import logging
import secrets
import socket
from dataclasses import dataclass, field
from pathlib import Path

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from medina.records.space import DEFAULT_RESERVE_MB
from medina.rpc.common.admission import AdmissionLimits
from medina.rpc.common.config import BotListener, ServerConfig
from medina.rpc.common.limits import Limits
from medina.rpc.common.serving import add_port, server_options
from medina.rpc.organiser import open_channel
from medina.rpc.single.server import RunningServer, start_server
from medina.storage.ladder import LadderStore
from medina.wire.shared.tls import ClientTls

from .lobby import LadderServicer, add_ladder_service
from .service import Ladder, LadderConfig
from .standings import DEFAULT_MIN_GAMES

__all__ = ["LadderServerConfig", "RunningLadder", "start_ladder"]

log = logging.getLogger("medina.ladder")


@dataclass(frozen=True)
class LadderServerConfig:
    """Where a ladder listens, where its arena is, and its database."""

    db: str
    host: str = "127.0.0.1"
    port: int = 50061
    #: An arena to drive (``host:port``); None: start one in this process.
    arena: str | None = None
    #: The in-process arena's port (0: any free port).
    arena_port: int = 0
    #: The arena address bots are told (None: the arena's own address).
    arena_public: str | None = None
    records_dir: Path = Path("records")
    #: The in-process arena's free space kept for records (``ServerConfig``).
    records_reserve_mb: float = DEFAULT_RESERVE_MB
    organiser_token: str | None = None
    #: The organiser credential of an external arena (None: ``organiser_token``).
    arena_token: str | None = None
    ladder: LadderConfig = field(default_factory=LadderConfig)
    limits: Limits = field(default_factory=Limits)
    #: The in-process arena's admission control (its open-files limit: ``ladder serve``
    #: sets the process's).
    admission: AdmissionLimits = field(default_factory=AdmissionLimits)
    #: This server's identity in the database (None: host, pid and start tick).
    server_id: str | None = None
    #: TLS of the lobby and of the in-process arena's port for bots (None: plaintext); a
    #: client CA requires client certificates (mutual TLS).
    tls_cert: bytes | None = None
    tls_key: bytes | None = None
    tls_client_ca: bytes | None = None
    #: How to dial an external arena (``arena``) that serves TLS (None: in clear).
    arena_tls: ClientTls | None = None
    #: Rated games before a version's standing is established (GetStandings and the
    #: ``--http`` page list provisional versions after the others).
    min_games: int = DEFAULT_MIN_GAMES

    @property
    def tls(self) -> bool:
        """Whether the lobby and the in-process arena serve TLS."""
        return self.tls_cert is not None and self.tls_key is not None


@dataclass
class RunningLadder:
    """A started ladder server."""

    server: grpc.aio.Server
    port: int
    ladder: Ladder
    store: LadderStore
    arena_address: str
    arena: RunningServer | None
    channel: grpc.aio.Channel
    #: With TLS, the lobby's loopback listener in clear (its house bots connect there, and
    #: play at the arena's loopback address); None without TLS.
    local_server: grpc.aio.Server | None = None
    local_port: int = 0

    async def stop(self, grace_s: float = 5.0) -> None:
        """Stop matching, abort matches in play (not rated), stop the servers."""
        await self.ladder.stop()
        await self.server.stop(1.0)
        if self.local_server is not None:
            await self.local_server.stop(1.0)
        if self.arena is not None:
            await self.arena.stop(grace_s)
        await self.channel.close()
        self.store.engine.dispose()


def default_server_id(port: int) -> str:
    """This server's name in the database when none is given: its host and lobby port, the
    same across restarts, so a server restarted after a crash takes back its own bots at
    once and aborts its earlier life's matches (a name with the pid locked every bot out
    until the dead one's lease lapsed, 30 s). A lobby on a port picked at random (0) gets
    another name at every start."""
    return f"{socket.gethostname()}:{port}"


async def start_ladder(config: LadderServerConfig) -> RunningLadder:
    """Open the database, start (or reach) the arena, start the lobby; returns once both
    listen."""
    store = await asyncio.to_thread(LadderStore, config.db)
    # The lobby's port first, before anything that would need stopping: a port another
    # process listens on is refused (gRPC's SO_REUSEPORT would share it), so the lobby's
    # host and port name one live server, its default id in the database.
    lobby = ServerConfig(
        host=config.host,
        port=config.port,
        tls_cert=config.tls_cert,
        tls_key=config.tls_key,
        tls_client_ca=config.tls_client_ca,
        limits=config.limits,
    )
    # The arena's transport limits (the handshake deadline, streams per connection, new
    # calls taken up, keepalive): the lobby's port is as public as the arena's.
    server = grpc.aio.server(options=server_options(lobby))
    local_server: grpc.aio.Server | None = None
    local_port = 0
    try:
        port = add_port(server, lobby)
        if config.tls:
            local_server = grpc.aio.server(options=server_options(lobby))
            local_port = add_port(local_server, ServerConfig(host="127.0.0.1", port=0))
    except OSError:
        store.engine.dispose()
        raise
    arena, target, public, local_arena = await _arena(config)
    channel = open_channel(target, config.arena_tls if config.arena is not None else None)
    ladder = Ladder(
        store,
        config.ladder,
        config.server_id or default_server_id(port),
        channel,
        public,
        organiser_token=(
            config.arena_token or config.organiser_token
            if arena is None
            else arena.config.organiser_token
        ),
        local_arena_address=local_arena,
        endpoints=config.arena_public is None,
    )
    add_ladder_service(
        LadderServicer(ladder, config.organiser_token, config.limits, min_games=config.min_games),
        server,
    )
    health_servicer = health.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    await server.start()
    if local_server is not None:
        servicer = LadderServicer(
            ladder, config.organiser_token, config.limits, local=True, min_games=config.min_games
        )
        add_ladder_service(servicer, local_server)
        await local_server.start()
    health_servicer.set("", health_pb2.HealthCheckResponse.SERVING)
    await ladder.start()
    log.info("ladder listening on %s:%d, arena %s", config.host, port, public)
    return RunningLadder(
        server, port, ladder, store, public, arena, channel, local_server, local_port
    )


async def _arena(config: LadderServerConfig) -> tuple[RunningServer | None, str, str, str | None]:
    """The in-process arena, started (None for an external one), the address the ladder
    dials, the address bots are told, and (with TLS) the arena's loopback address.

    Without TLS the arena serves everything on ``host``. With TLS it serves bots
    (ArenaService, health) on ``host`` with the lobby's certificate, as a worker of
    ``serve --workers`` does, and the ladder's own calls on a loopback port in clear: the
    ladder holds no client certificate for a mutual-TLS port, and a certificate names the
    public host, not 127.0.0.1."""
    if config.arena is not None:
        # The loopback lobby's house bots play where the ladder dials, when it does in clear.
        local = config.arena if config.arena_tls is None else None
        return None, config.arena, config.arena_public or config.arena, local
    wildcard = config.host in ("0.0.0.0", "::")
    bots = (
        BotListener(
            host=config.host,
            port=config.arena_port,
            limits=config.limits,
            tls_cert=config.tls_cert,
            tls_key=config.tls_key,
            tls_client_ca=config.tls_client_ca,
        )
        if config.tls
        else None
    )
    arena = await start_server(
        ServerConfig(
            host=config.host if bots is None else "127.0.0.1",
            port=config.arena_port if bots is None else 0,
            records_dir=config.records_dir,
            records_reserve_mb=config.records_reserve_mb,
            # Never open to all: the bots it hosts are handed its address (without TLS, the
            # port that answers organiser calls too), and a bot that called ForfeitSeat on
            # its opponents would decide rated matches. Without an operator's token, one
            # only this ladder knows.
            organiser_token=config.organiser_token or secrets.token_urlsafe(32),
            limits=config.limits,
            admission=config.admission,
            bots=bots,
        )
    )
    if bots is None:
        target = f"127.0.0.1:{arena.port}" if wildcard else arena.address
        return arena, target, config.arena_public or arena.address, None
    own = f"{config.host}:{arena.bots_port}"
    return arena, arena.address, config.arena_public or own, arena.address
