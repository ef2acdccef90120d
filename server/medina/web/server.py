"""Serving the viewer: uvicorn on the running event loop (beside the gRPC server), its socket
bound before it starts so the port (0: any free one) is known at once."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import struct
import time
from collections.abc import Iterator
from typing import Any

import uvicorn
from starlette.applications import Starlette
from uvicorn.protocols.http.h11_impl import H11Protocol

from medina.referee.view import MatchPhase
from medina.rpc.common.admission import files_reserve
from medina.rpc.common.limits import is_loopback
from medina.rpc.single.server import RunningServer

from .app import Viewer, build_app, stop_building
from .hosted import ArenaSource
from .metrics import ArenaProbe, LadderProbe, Metrics
from .pacing import (
    EVERYONE,
    SHARED_REQUEST_BURST,
    SHARED_REQUESTS_PER_S,
    Pacing,
    request_cost,
)
from .shelf import RecordShelf
from .standings import StandingsProvider

log = logging.getLogger("medina.web")

#: Seconds open connections (live pages' event streams) get to finish at shutdown.
SHUTDOWN_GRACE_S = 1
#: Seconds a connection has to send a request's head (line and headers), from when it
#: opens or its last response ended. uvicorn waits for a head without end, so clients that
#: open connections and send a header now and then (slowloris) would hold a socket each for
#: good, sharing the process's file descriptors with the bots' gRPC streams.
REQUEST_HEAD_S = 10.0
#: Seconds a connection's writes may stay paused (the client reads nothing: its socket and
#: our write buffer are full) before the connection is closed. A response waits for a
#: paused connection without end, so a client that opens a live page's event stream (or
#: a large download) and never reads would hold its connection, one of the viewer's
#: ``viewer_connections``, and what is queued for it for good.
WRITE_STALL_S = 30.0


#: What asyncio says when accept() finds the process out of files; it says it for every
#: connection waiting in the listen queue (up to the backlog, 2,048) at once.
ACCEPT_FAILED = "socket.accept() out of system resource"
#: Seconds between two log lines of failed accepts.
ACCEPT_FAILED_EVERY_S = 10.0


def quiet_accept_failures(loop: asyncio.AbstractEventLoop) -> None:
    """Log accept() failures for want of files once every ``ACCEPT_FAILED_EVERY_S`` with a
    count, instead of asyncio's traceback per connection waiting (2,016 of them for one
    burst past the open-files limit); other errors go to the handler there was."""
    previous = loop.get_exception_handler()
    last = -ACCEPT_FAILED_EVERY_S
    unsaid = 0

    def handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        nonlocal last, unsaid
        if context.get("message") != ACCEPT_FAILED:
            if previous is not None:
                previous(loop, context)
            else:
                loop.default_exception_handler(context)
            return
        unsaid += 1
        now = time.monotonic()
        if now - last >= ACCEPT_FAILED_EVERY_S:
            log.warning(
                "the viewer could not accept %d connection(s): %s (the process's open-files "
                "limit; see docs/operations.md)",
                unsaid,
                context.get("exception"),
            )
            last, unsaid = now, 0

    loop.set_exception_handler(handler)


class _Uvicorn(uvicorn.Server):
    """uvicorn without its own signal handlers: the command that runs it owns SIGINT/SIGTERM."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


#: Open files of the server's reserve (``admission.files_reserve``: what no match holds) left
#: to its listeners, logs, organisers and gRPC spectators; the viewer's connections may hold
#: the rest.
RESERVE_KEPT = 64


def viewer_connections(max_open_files: int | None) -> int | None:
    """The most connections the viewer keeps open beside a server whose admission control
    weighs ``max_open_files`` (None: not weighed, no limit): its share of the files kept
    for what no match holds, so that spectators never take the files matches were
    promised."""
    if max_open_files is None:
        return None
    return max(1, files_reserve(max_open_files) - RESERVE_KEPT)


#: Connections a browser opens to one host at once (6 over HTTP/1.1), and then some.
BROWSER_CONNECTIONS = 8


def connections_per_client(streams: int) -> int:
    """The HTTP connections a client address may keep open to the viewer when it may hold
    ``streams`` open streams (0: no limit): a live page's stream and a page load beside
    each, and what one browser opens to load a page."""
    return 0 if streams == 0 else 2 * streams + BROWSER_CONNECTIONS


def client_pacing(streams: int) -> Pacing | None:
    """The requests' pace per client address, applied with the per-address limits (none
    when ``streams``, the streams an address may hold, is 0: no limit); an address is at
    most a request per connection it may hold in debt."""
    return Pacing(most_debt=connections_per_client(streams)) if streams else None


def shared_pacing(max_connections: int | None) -> Pacing:
    """The pace of all the requests of a viewer that shares the referee's event loop: at
    most a request per connection it may hold in debt (the wait it makes stays a few
    seconds, whatever the flood)."""
    most = max(SHARED_REQUEST_BURST, max_connections or 0)
    return Pacing(SHARED_REQUESTS_PER_S, SHARED_REQUEST_BURST, most_debt=most)


def refusal(limit: int) -> bytes:
    """What a connection past the viewer's ``limit`` is answered before it is closed."""
    body = (
        f"the viewer has its most open connections ({limit}: its share of the server's "
        "open-files limit); try again in a few seconds\n"
    ).encode()
    head = (
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n"
        f"retry-after: 5\r\nconnection: close\r\ncontent-length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


def client_refusal(client: str, limit: int) -> bytes:
    """What a connection past its address's ``limit`` is answered before it is closed."""
    body = (
        f"client {client} already has {limit} open connections to the viewer (the limit "
        f"is {limit}); close some before opening more\n"
    ).encode()
    head = (
        "HTTP/1.1 429 Too Many Requests\r\ncontent-type: text/plain; charset=utf-8\r\n"
        f"retry-after: 5\r\nconnection: close\r\ncontent-length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


def deadlines(
    head_s: float,
    write_s: float = WRITE_STALL_S,
    max_connections: int | None = None,
    open_now: set[H11Protocol] | None = None,
    per_client: int = 0,
    loopback_too: bool = False,
    pacing: Pacing | None = None,
    shared_pacing: Pacing | None = None,
) -> type[H11Protocol]:
    """uvicorn's h11 protocol closing a connection that has not sent a whole request head
    within ``head_s`` seconds of opening or of its last response (a response being written,
    such as a live page's event stream, is never cut for it), closing (aborting: what is
    unsent is dropped) a connection whose writes stay paused ``write_s`` seconds on end
    (the client reads nothing), and answering a connection past ``max_connections`` open
    ones with a 503 (``refusal``) and closing it. The connections open now are kept in
    ``open_now`` (a set of its own when None). A client address past ``per_client`` open
    connections (0: no limit; loopback ones only with ``loopback_too``) is answered 429 and
    closed: the shared limit alone let one address, reconnecting as it was closed, keep
    every other visitor out (``/metrics`` included). With ``pacing``, the same addresses'
    requests are paced: past its rate, a connection is not read (nor its next request
    handled) until the address's bucket has a request again; with ``shared_pacing``, every
    connection's requests together (loopback ones too), the same way."""
    tracked: set[H11Protocol] = open_now if open_now is not None else set()
    held: dict[str, int] = {}

    class DeadlineH11Protocol(H11Protocol):
        _deadline: asyncio.TimerHandle | None = None
        _stalled: asyncio.TimerHandle | None = None
        _paced: asyncio.TimerHandle | None = None
        _client = ""
        _limited = False

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            if max_connections is not None and len(tracked) >= max_connections:
                log.debug("refused an HTTP connection past the viewer's %d", max_connections)
                transport.write(refusal(max_connections))
                transport.close()
                return
            peer = transport.get_extra_info("peername")
            client = str(peer[0]) if isinstance(peer, tuple) and peer else ""
            self._limited = bool(client) and (loopback_too or not is_loopback(client))
            if per_client and self._limited and held.get(client, 0) >= per_client:
                log.debug("refused an HTTP connection of %s past its %d", client, per_client)
                transport.write(client_refusal(client, per_client))
                transport.close()
                return
            self._client = client
            held[client] = held.get(client, 0) + 1
            tracked.add(self)
            self._arm()
            # An address in debt is not read on a new connection either: pacing only the
            # requests after a connection's first let a connection per request through.
            now = self.loop.time()
            wait = pacing.wait(client, now) if pacing is not None and self._limited else 0.0
            if shared_pacing is not None:
                wait = max(wait, shared_pacing.wait(EVERYONE, now))
            if wait > 0:
                self._pace(wait)

        def data_received(self, data: bytes) -> None:
            if self._paced is not None:
                # uvicorn resumes reading after a pipelined request's response: not yet.
                self.transport.pause_reading()
            super().data_received(data)

        def handle_events(self) -> None:
            if self._paced is not None:
                return  # the address is past its rate: what is read waits for _unpace
            cycle = self.cycle
            super().handle_events()
            if self.cycle is not cycle:  # a request's head was read: its cycle began
                self._disarm()
                now = self.loop.time()
                cost = request_cost(self.scope["path"], self.scope["query_string"])
                wait = 0.0
                if pacing is not None and self._limited:
                    wait = pacing.take(self._client, now, cost)
                if shared_pacing is not None:
                    wait = max(wait, shared_pacing.take(EVERYONE, now, cost))
                if wait > 0:
                    self._pace(wait)

        def _pace(self, wait: float) -> None:
            """Read nothing more of this connection for ``wait`` seconds."""
            if self.transport.is_closing():
                return
            self.transport.pause_reading()
            # uvicorn's keep-alive timer would close a connection the pace keeps waiting.
            self._unset_keepalive_if_required()
            if self._paced is not None:
                self._paced.cancel()
            self._paced = self.loop.call_later(wait, self._unpace)

        def _unpace(self) -> None:
            self._paced = None
            if not self.transport.is_closing():
                self.transport.resume_reading()
                # A request already read (pipelined) is handled now, as it would have been.
                if self.cycle is None or self.cycle.response_complete:
                    self.handle_events()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing() and (
                self.cycle is None or self.cycle.response_complete
            ):
                self._arm()  # waiting for the next request's head (keep-alive)

        def pause_writing(self) -> None:
            super().pause_writing()
            self._watch_writes()

        def resume_writing(self) -> None:
            super().resume_writing()
            if self._stalled is not None:
                self._stalled.cancel()
                self._stalled = None

        def connection_lost(self, exc: Exception | None) -> None:
            if self in tracked:
                tracked.discard(self)
                left = held.get(self._client, 0) - 1
                if left > 0:
                    held[self._client] = left
                else:
                    held.pop(self._client, None)
            self._disarm()
            if self._stalled is not None:
                self._stalled.cancel()
                self._stalled = None
            if self._paced is not None:
                self._paced.cancel()
                self._paced = None
            super().connection_lost(exc)

        def _arm(self) -> None:
            self._disarm()
            self._deadline = self.loop.call_later(head_s, self._too_slow)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _too_slow(self) -> None:
            self._deadline = None
            if not self.transport.is_closing():
                log.debug("closed an HTTP connection that sent no request head in %g s", head_s)
                self.transport.close()
                if self.transport.get_write_buffer_size():
                    # Closing waits for the last response to be read: not without end.
                    self._watch_writes()

        def _watch_writes(self) -> None:
            if self._stalled is None:
                self._stalled = self.loop.call_later(write_s, self._stall)

        def _stall(self) -> None:
            self._stalled = None
            log.debug("closed an HTTP connection that read nothing for %g s", write_s)
            sock = self.transport.get_extra_info("socket")
            if sock is not None:
                # Reset, not closed: the kernel would hold what is unsent (up to its
                # send buffer, megabytes) for a client that never reads it.
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.transport.abort()

    return DeadlineH11Protocol


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port``; raises OSError naming the address."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise OSError(f"cannot listen for HTTP on {host}:{port}: {exc.strerror}") from None
    family, kind, proto, _name, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise OSError(f"cannot listen for HTTP on {host}:{port}: {exc.strerror}") from None
    sock.setblocking(False)
    return sock


class HttpServer:
    """The viewer app served by uvicorn as a task on the current event loop."""

    def __init__(
        self,
        app: Starlette,
        host: str = "127.0.0.1",
        port: int = 0,
        request_head_s: float = REQUEST_HEAD_S,
        max_connections: int | None = None,
        write_stall_s: float = WRITE_STALL_S,
        per_client: int = 0,
        loopback_too: bool = False,
        pacing: Pacing | None = None,
        shared_pacing: Pacing | None = None,
    ) -> None:
        self.app = app
        #: Connections one client address keeps open at most (0: no limit; loopback
        #: addresses only with ``loopback_too``); the next are answered 429.
        self.per_client = per_client
        self.loopback_too = loopback_too
        #: The requests' rate per client address (the same addresses), None: not paced.
        self.pacing = pacing
        #: The requests' rate of all clients together (loopback too), None: not paced.
        self.shared_pacing = shared_pacing
        self.request_head_s = request_head_s
        #: Seconds a connection's writes may stay paused before it is closed.
        self.write_stall_s = write_stall_s
        #: Connections kept open at most (None: no limit); the next are answered 503.
        self.max_connections = max_connections
        self.host = host
        self.requested_port = port
        self.port = 0
        self._open: set[H11Protocol] = set()
        self._server: _Uvicorn | None = None
        self._task: asyncio.Task[None] | None = None

    @property
    def url(self) -> str:
        """The base URL, e.g. ``http://127.0.0.1:8080``."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def connections(self) -> int:
        """How many HTTP connections are open now (refused ones are not counted)."""
        return len(self._open)

    async def start(self) -> None:
        """Bind and start serving; returns once the port is known."""
        sock = bind(self.host, self.requested_port)
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(
            self.app,
            # uvicorn's warnings are about clients (a malformed request, an upgrade it
            # cannot do), one line each: a client could fill the log with them.
            log_level="error",
            access_log=False,
            lifespan="off",
            # A client is its peer address: uvicorn trusts X-Forwarded-For from loopback
            # by default, so through a proxy on the same machine that passes the header on
            # a visitor could name any address, escaping the per-client stream limit or
            # filling another's (a bot author's, whose Play streams count there too).
            proxy_headers=False,
            timeout_graceful_shutdown=SHUTDOWN_GRACE_S,
            http=deadlines(
                self.request_head_s,
                self.write_stall_s,
                self.max_connections,
                self._open,
                self.per_client,
                self.loopback_too,
                self.pacing,
                self.shared_pacing,
            ),
        )
        self._server = _Uvicorn(config)
        loop = asyncio.get_running_loop()
        quiet_accept_failures(loop)
        self._task = loop.create_task(self._server.serve(sockets=[sock]))
        log.info("viewer on %s", self.url)

    async def stop(self) -> None:
        """Stop serving (open event streams get ``SHUTDOWN_GRACE_S``)."""
        if self._server is None or self._task is None:
            return
        # Requests waiting for a replay are answered 503 now, not cut off at the grace's end.
        stop_building(self.app)
        self._server.should_exit = True
        try:
            await asyncio.wait_for(self._task, SHUTDOWN_GRACE_S + 5)
        except TimeoutError:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task


def arena_viewer(
    running: RunningServer,
    standings: StandingsProvider | None = None,
    ladder: LadderProbe | None = None,
) -> Viewer:
    """A viewer of a running server's arena: its matches live, its records, its metrics (from
    every match created from now on; with ``ladder``, the ladder's too)."""
    arena = running.arena
    source = ArenaSource(arena)

    def queued() -> float:
        return float(0 if arena.queue is None else len(arena.queue))

    probe = ArenaProbe(
        running=lambda: float(source.count(MatchPhase.RUNNING)),
        waiting=lambda: float(source.count(MatchPhase.WAITING) - queued()),
        grpc_streams=lambda: float(sum(running.slots.open.values())),
        loop_lag_ms=lambda: running.lag.ms,
        turnaround_ms=arena.turnaround.p99_ms,
        refused=lambda: float(running.match_service.refused if running.match_service else 0),
        queued=queued,
        queued_total=lambda: float(0 if arena.queue is None else arena.queue.queued_total),
        records_unwritable=lambda: float(bool(arena.space.check())),
        records_failed=lambda: float(arena.space.failed_total),
    )
    metrics = Metrics(probe, ladder)
    arena.record_taps.append(metrics.tap)
    return Viewer(
        RecordShelf(arena.records_dir),
        sources=(source,),
        metrics=metrics,
        standings=standings,
        slots=running.slots,
    )


async def serve_viewer(
    running: RunningServer,
    host: str,
    port: int,
    standings: StandingsProvider | None = None,
    ladder: LadderProbe | None = None,
) -> HttpServer:
    """Start the viewer of ``running`` on ``host:port`` (with ``ladder``, the ladder's
    metrics too), keeping open at most the connections its share of the open-files limit
    holds (``viewer_connections``)."""
    limit = viewer_connections(running.config.admission.max_open_files)
    slots = running.slots
    http = HttpServer(
        build_app(arena_viewer(running, standings, ladder)),
        host,
        port,
        max_connections=limit,
        per_client=connections_per_client(slots.limit),
        loopback_too=slots.loopback,
        pacing=client_pacing(slots.limit),
        # The matches' event loop serves the pages: it gives them a bounded share.
        shared_pacing=shared_pacing(limit),
    )
    await http.start()
    return http
