"""The front of a multi-worker server (``serve --workers N``): one public address, matches run
in worker processes.

Play streams are routed on their first message (the Hello's seat token, looked up in the
routes filled from CreateMatch; an unknown token is offered to each worker in turn) and then
forwarded as raw bytes both ways, never decoded; the worker's status, details and trailing
metadata reach the bot unchanged, and cancelling either side cancels the other. Watch is
routed by match id and forwarded the same way. Organiser calls: ``common.match_service`` over
``worker_matches``. Health and reflection answer here.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc
from google.protobuf.message import DecodeError
from grpc_health.v1 import health

from medina.boundary.stopping import stop_signals_caught
from medina.v1 import admin_pb2, admin_pb2_grpc, arena_pb2
from medina.wire import play
from medina.wire.shared.protocol import REDIRECT

from ..common.admission import LoopLag
from ..common.auth import carries_token
from ..common.collector import Collector
from ..common.config import ServerConfig
from ..common.hello import first_message
from ..common.limits import ClientSlots, Limits, stream_slot
from ..common.match_service import MatchService
from ..common.serving import server_options, start_serving
from ..common.status import Reason, Refused, abort
from .routes import ROUTES_KEPT, Route, Routes
from .worker_matches import FrontCatalog, WorkerMatches, lost_under, pass_on, relay
from .workers import Worker, WorkerPool

Context = grpc.aio.ServicerContext[Any, Any]
log = logging.getLogger("medina.rpc")


class Forwarder:
    """ArenaService.Play and SpectatorService.Watch, forwarded to the worker holding the
    match."""

    def __init__(
        self,
        pool: WorkerPool,
        routes: Routes,
        matches: WorkerMatches,
        limits: Limits,
        organiser_token: str | None = None,
    ) -> None:
        self.pool = pool
        self.routes = routes
        self.matches = matches
        self.limits = limits
        self.slots = ClientSlots.for_limits(limits)
        #: Watch streams carrying it (a ladder's, a tournament runner's) hold no client slot.
        self.organiser_token = organiser_token
        #: Streams forwarded to a worker so far (bots at an endpoint are not counted here).
        self.plays = 0
        #: Streams answered with a Redirect to the worker's own address.
        self.redirects = 0
        self.watches = 0
        #: Tasks copying bots' messages to workers, until each ends with its call.
        self._pumps: set[asyncio.Task[None]] = set()

    def handlers(self) -> list[grpc.GenericRpcHandler]:
        """Generic handlers: requests and answers stay bytes (Watch requests are decoded to
        route them)."""
        play: grpc.RpcMethodHandler[bytes, bytes] = grpc.stream_stream_rpc_method_handler(
            self.play, request_deserializer=None, response_serializer=None
        )
        watch: grpc.RpcMethodHandler[admin_pb2.WatchRequest, bytes] = (
            grpc.unary_stream_rpc_method_handler(
                self.watch,
                request_deserializer=admin_pb2.WatchRequest.FromString,
                response_serializer=None,
            )
        )
        return [
            grpc.method_handlers_generic_handler("medina.v1.ArenaService", {"Play": play}),
            grpc.method_handlers_generic_handler("medina.v1.SpectatorService", {"Watch": watch}),
        ]

    async def play(self, requests: AsyncIterator[bytes], context: Context) -> AsyncIterator[bytes]:
        """One bot session, forwarded."""
        async with stream_slot(self.slots, context):
            first = await first_message(requests, self.limits.handshake_timeout_s)
            if isinstance(first, Refused):
                first.set_on(context)
                return
            redirect = self._redirect(first)
            if redirect is not None:
                self.redirects += 1
                yield redirect
                return
            opened = await self._open(first, context)
            if opened is None:
                return  # refused: its status is set
            worker, call, head = opened
            self.plays += 1
            pump = asyncio.get_running_loop().create_task(_pump(requests, call))
            self._pumps.add(pump)  # a strong reference until it ends on its own
            pump.add_done_callback(self._pumps.discard)
            try:
                try:
                    if isinstance(head, bytes):
                        yield head
                        while isinstance(message := await call.read(), bytes):
                            yield message
                except grpc.aio.AioRpcError as exc:
                    await relay(context, worker, exc)
                except asyncio.CancelledError as exc:
                    await lost_under(context, worker, exc)
                context.set_trailing_metadata(tuple(await call.trailing_metadata() or ()))
            finally:
                # The pump is not cancelled (cancelling a pending gRPC read leaks its state in
                # grpc.aio): once this handler returns, the bot's call ends and the pump's
                # read fails; a write to the cancelled worker call fails too.
                call.cancel()

    def _redirect(self, first: bytes) -> bytes | None:
        """A ``Redirect`` to the worker holding the seat, for a bot that asked for redirects
        (its Hello names the feature) and whose seat the front knows; None: forward."""
        hello = _hello(first)
        if hello is None or REDIRECT not in hello.features:
            return None
        found = self.routes.token(hello.token)
        if found is None:
            return None
        route = found[1]
        worker = self.pool.find(route.slot, route.generation)
        if worker is None or worker.bots_port is None:
            return None  # gone (the worker answers why) or without its own address
        return play.redirect_bytes(worker.bots_port)

    async def _open(
        self, first: bytes, context: Context
    ) -> tuple[Worker, grpc.aio.StreamStreamCall[bytes, bytes], object] | None:
        """The worker stream this session goes to, and the worker's first answer (or EOF);
        None when the worker refused the stream (its status is then this call's).

        A known token goes to its worker; an unknown one is offered to each worker in turn
        (a worker that does not know it refuses it with UNAUTHENTICATED at once); a first
        message that is not a Hello goes to any worker, which answers as a server does.
        """
        token = _token(first)
        candidates = self.pool.live()
        if token is not None:
            found = self.routes.token(token)
            if found is not None:
                match_id, route = found
                await self.matches.refuse_lost(match_id, context)
                worker = self.pool.find(route.slot, route.generation)
                assert worker is not None  # refuse_lost aborted otherwise
                candidates = [worker]
        else:
            candidates = candidates[:1]
        if not candidates:
            await abort(
                context,
                grpc.StatusCode.UNAVAILABLE,
                Reason.NO_WORKER,
                "no worker process is running; try again shortly",
            )
        for n, worker in enumerate(candidates):
            call = worker.play()
            try:
                await call.write(first)
                head = await call.read()
            except grpc.aio.AioRpcError as exc:
                call.cancel()
                last = n == len(candidates) - 1
                if exc.code() is grpc.StatusCode.UNAUTHENTICATED and not last:
                    continue  # not this worker's token
                if pass_on(context, worker, exc):
                    return None
                await relay(context, worker, exc)
            except asyncio.CancelledError as exc:
                call.cancel()
                await lost_under(context, worker, exc)
            except BaseException:
                call.cancel()
                raise
            if token is not None and len(candidates) > 1:
                log.debug("a seat token unknown to the front was found at %s", worker.name)
            return worker, call, head
        raise AssertionError("unreachable: the last candidate's error was relayed")

    async def watch(
        self, request: admin_pb2.WatchRequest, context: Context
    ) -> AsyncIterator[bytes]:
        """A spectator stream, forwarded."""
        organiser = carries_token(context, self.organiser_token)
        async with stream_slot(self.slots, context, exempt=organiser):
            worker = await self.matches.locate(request.match_id, context)
            call = worker.watch(request)
            self.watches += 1
            try:
                async for message in call:
                    yield message
            except grpc.aio.AioRpcError as exc:
                await relay(context, worker, exc)
            except asyncio.CancelledError as exc:
                await lost_under(context, worker, exc)
            finally:
                call.cancel()


def _hello(first: bytes) -> arena_pb2.Hello | None:
    """The Hello a stream opened with; None when the message is not a decodable Hello."""
    try:
        message = arena_pb2.PlayRequest.FromString(first)
    except DecodeError:
        return None
    return message.hello if message.HasField("hello") else None


def _token(first: bytes) -> str | None:
    """The seat token of a Hello; None when the message is not a decodable Hello."""
    hello = _hello(first)
    return None if hello is None else hello.token


async def _pump(requests: AsyncIterator[bytes], call: grpc.aio.StreamStreamCall[Any, Any]) -> None:
    """The bot's messages to the worker; the bot's half-close is passed on."""
    try:
        async for message in requests:
            await call.write(message)
        await call.done_writing()
    except (grpc.aio.AioRpcError, asyncio.InvalidStateError):
        return  # the worker's side ended: the reading side reports how
    except (grpc.aio.UsageError, grpc.aio.AbortError):
        return  # the bot's call is over: the session has already ended


@dataclass
class RunningFront:
    """A started front, its workers and what it routes."""

    server: grpc.aio.Server
    port: int
    pool: WorkerPool
    matches: WorkerMatches
    forwarder: Forwarder
    health: health.HealthServicer
    config: ServerConfig
    lag: LoopLag = field(default_factory=LoopLag)

    @property
    def address(self) -> str:
        """``host:port`` bots connect to."""
        return f"{self.config.host}:{self.port}"

    async def stop(self, grace_s: float | None = None, now: asyncio.Event | None = None) -> None:
        """Graceful shutdown: no new matches; every worker gives its running matches
        ``grace_s`` (until ``now`` is set: they are told again, and abort them) and stops;
        then the front stops."""
        grace = self.config.shutdown_grace_s if grace_s is None else grace_s
        self.health.enter_graceful_shutdown()
        self.matches.accepting = False
        await self.pool.stop(grace, now)
        await self.server.stop(1.0)
        await self.lag.stop()
        log.info(
            "forwarded %d bot stream(s) and %d spectator stream(s) to the workers; "
            "redirected %d bot stream(s)",
            self.forwarder.plays,
            self.forwarder.watches,
            self.forwarder.redirects,
        )


async def start_front(
    config: ServerConfig,
    worker_argv: Sequence[str],
    workers: int,
    *,
    public_host: str | None,
    routes_kept: int = ROUTES_KEPT,
) -> RunningFront:
    """Read the records, start ``workers`` worker processes (``worker_argv``: a ``serve
    --internal`` command line), then serve the public address; returns once it is bound.
    The newest ``routes_kept`` matches' routes are remembered; older ones are asked for."""
    records = FrontCatalog(config.records_dir)
    records.load()  # before any worker writes a record
    routes = Routes(routes_kept)

    tasks: set[asyncio.Task[None]] = set()

    async def listed(held: list[str], name: str) -> None:
        interrupted = await records.lost(held, name)
        # Most of the matches a worker ever held had ended: only those in play were lost.
        log.error(
            "%s died with %d match(es) waiting or in play, now listed as interrupted from "
            "their records (of the %d match(es) it held)",
            name,
            interrupted,
            len(held),
        )

    def lost(worker: Worker) -> None:
        held = routes.held_by(Route(worker.slot, worker.generation))
        task = asyncio.get_running_loop().create_task(listed(held, worker.name))
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    pool = WorkerPool(worker_argv, workers, secrets.token_hex(24), on_death=lost)
    await pool.start()
    try:
        return await _serve(config, pool, routes, records, public_host)
    except BaseException:
        await pool.stop(0.0)
        raise


async def _serve(
    config: ServerConfig,
    pool: WorkerPool,
    routes: Routes,
    records: FrontCatalog,
    public_host: str | None,
) -> RunningFront:
    server = grpc.aio.server(options=server_options(config))
    lag = LoopLag()
    matches = WorkerMatches(pool, routes, records, public_host=public_host)
    admin_pb2_grpc.add_MatchServiceServicer_to_server(
        MatchService(matches, config.organiser_token, config.admission, lag), server
    )
    forwarder = Forwarder(pool, routes, matches, config.limits, config.organiser_token)
    server.add_generic_rpc_handlers(forwarder.handlers())
    health_servicer, port = await start_serving(server, config)
    log.info(
        "listening on %s:%d, %s, with %d workers (records in %s)",
        config.host,
        port,
        "TLS" if config.tls_cert is not None else "in clear (no TLS)",
        pool.count,
        config.records_dir,
    )
    lag.start()
    return RunningFront(server, port, pool, matches, forwarder, health_servicer, config, lag)


async def serve_front_forever(
    config: ServerConfig, worker_argv: Sequence[str], workers: int, *, public_host: str | None
) -> None:
    """Run a front and its workers until SIGTERM or SIGINT, then shut down gracefully."""
    with stop_signals_caught() as stop:
        running = await start_front(config, worker_argv, workers, public_host=public_host)
        async with Collector():
            print(f"medina-arena listening on {running.address}", flush=True)
            with contextlib.suppress(asyncio.CancelledError):
                await stop.wait()
            log.warning(
                "%s: shutting down %d worker(s); their running matches have up to %g s to end "
                "(%s again ends them now)",
                stop.first,
                workers,
                config.shutdown_grace_s,
                stop.first,
            )
            await running.stop(now=stop.again)
