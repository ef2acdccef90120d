"""``medina-arena serve``: run the server until SIGTERM."""

from __future__ import annotations

import argparse
import dataclasses
import logging
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from medina.rpc.cluster.front import serve_front_forever
from medina.rpc.cluster.workers import WorkerStartError
from medina.rpc.common.admission import AdmissionLimits, open_files_limit
from medina.rpc.common.config import BotListener, ServerConfig
from medina.rpc.common.limits import Limits
from medina.rpc.single.server import RunningServer, serve_forever

from . import event_loop, open_files
from .errors import CommandError
from .options import (
    add_client_limit_options,
    add_organiser_token_option,
    add_records_reserve_option,
    add_server_tls_options,
    is_loopback,
    records_directory,
    server_tls,
)
from .web_cmd import add_http_options, start_viewer

log = logging.getLogger("medina.cli")


def add_parser(sub: Any) -> None:
    """Register the command."""
    p: argparse.ArgumentParser = sub.add_parser("serve", help="run the arena server")
    s = ServerConfig()
    p.add_argument("--host", default=s.host, help=f"listen address (default {s.host})")
    p.add_argument(
        "--port",
        type=int,
        default=s.port,
        help=f"listen port (default {s.port}; 0: any free port)",
    )
    p.add_argument(
        "--records",
        default=str(s.records_dir),
        help=f"directory for match records (default {s.records_dir})",
    )
    add_records_reserve_option(p)
    add_organiser_token_option(p, "require this bearer token for organiser calls")
    p.add_argument(
        "--open-admin",
        action="store_true",
        help="allow organiser calls without a token on a non-loopback address (unsafe)",
    )
    add_server_tls_options(p)
    p.add_argument(
        "--grace-s",
        type=float,
        default=s.shutdown_grace_s,
        help="seconds running matches get to end at shutdown, the rest are aborted "
        f"(default {s.shutdown_grace_s:g})",
    )
    d = Limits()
    p.add_argument(
        "--max-message-bytes",
        type=int,
        default=d.max_message_bytes,
        help=f"largest message accepted from a client (default {d.max_message_bytes})",
    )
    p.add_argument(
        "--handshake-timeout-s",
        type=float,
        default=d.handshake_timeout_s,
        help=f"seconds a new stream has to send Hello (default {d.handshake_timeout_s:g})",
    )
    add_client_limit_options(p, "open Play/Watch streams")
    p.add_argument(
        "--unsolicited-per-second",
        type=float,
        default=d.unsolicited_per_second,
        help="unsolicited messages (anything but the awaited reply) a stream may send per "
        f"second after a burst of {d.unsolicited_burst} (default {d.unsolicited_per_second:g})",
    )
    a = AdmissionLimits()
    p.add_argument(
        "--max-matches",
        type=int,
        default=a.max_matches,
        help="refuse CreateMatch while this many matches are waiting or running "
        "(default: no limit; the open-files limit always binds: each match may hold its "
        "record and a connection per bot, and the server refuses a match that could take it "
        "past `ulimit -n`, logging at start how many that is)",
    )
    p.add_argument(
        "--max-loop-lag-ms",
        type=int,
        default=a.max_loop_lag_ms,
        help="start no match while the server's event loop runs this late "
        f"(default {a.max_loop_lag_ms}); --no-lag-limit turns it off",
    )
    p.add_argument(
        "--max-lag-share",
        type=float,
        default=a.max_lag_share,
        help="start no match while the event loop runs this share of the shortest decision "
        f"clock in play late, at least {a.min_lag_ms} ms (default {a.max_lag_share:g}: 10 ms "
        "at 100 ms per decision), or takes that long from a bot's reply to the next request "
        "(99th percentile of the last seconds); --no-lag-limit turns it off",
    )
    p.add_argument(
        "--start-burst",
        type=int,
        default=a.start_burst,
        help="start no match while this many matches are starting (let start and not yet "
        "playing, or playing for under a second), or as many as already play if more, and "
        f"let the start queue grow the load by at most this many a second (a match that ends "
        f"gives its place at once; default {a.start_burst}); "
        "--no-lag-limit turns it off",
    )
    p.add_argument(
        "--no-lag-limit",
        action="store_true",
        help="never hold a match back for the server's latency (loop lag, turnaround, start burst)",
    )
    p.add_argument(
        "--max-queued",
        type=int,
        help="matches the server has no room for yet wait in a start queue, their bots "
        "connected and no clock running, and start when there is room; refuse CreateMatch "
        f"while this many wait to start, for their bots or for room (default {a.max_queued}); "
        "0: no queue, refuse CreateMatch "
        "whenever the server has no room (RESOURCE_EXHAUSTED with a retry hint); the "
        "open-files limit may refuse sooner (each match may hold its record and a connection "
        "per bot; logged at start)",
    )
    p.add_argument(
        "--workers",
        type=int,
        help="processes that run matches behind the one address (default: one less than the "
        f"cores, at least 1: {default_workers()} here; with --http, 1); 1 runs everything in "
        "this process",
    )
    p.add_argument(
        "--worker-ports",
        type=int,
        metavar="BASE",
        help="with several workers, worker N listens for bots on port BASE+N of --host "
        "(default: free ports; open them in a firewall); bots are redirected there",
    )
    # A worker of a multi-worker server: started by its front, never by hand.
    p.add_argument("--internal", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--bots-host", help=argparse.SUPPRESS)
    p.add_argument("--bots-port-base", type=int, help=argparse.SUPPRESS)
    add_http_options(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Serve until SIGTERM/SIGINT."""
    loop_name, factory = event_loop.loop_factory()  # a bad MEDINA_EVENT_LOOP: before anything
    if not args.internal:
        log.info("event loop: %s", loop_name)
    tls = server_tls(args)
    public = not is_loopback(args.host)
    if public and not args.organiser_token and not args.open_admin:
        raise CommandError(
            f"refusing to serve on {args.host} with organiser calls (create, abort) open to "
            "anyone: set --organiser-token or MEDINA_ORGANISER_TOKEN (or pass --open-admin)"
        )
    if public and not args.tls_cert:
        log.warning(
            "serving on %s without TLS: tokens travel in clear text (see docs/operations.md)",
            args.host,
        )
    try:
        limits = Limits(
            max_message_bytes=args.max_message_bytes,
            handshake_timeout_s=args.handshake_timeout_s,
            max_streams_per_client=args.max_streams_per_client,
            limit_loopback=args.limit_loopback,
            unsolicited_per_second=args.unsolicited_per_second,
        )
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    try:
        admission = AdmissionLimits(
            max_matches=args.max_matches,
            max_loop_lag_ms=None if args.no_lag_limit else args.max_loop_lag_ms,
            max_lag_share=None if args.no_lag_limit else args.max_lag_share,
            start_burst=None if args.no_lag_limit else args.start_burst,
            max_queued=AdmissionLimits().max_queued if args.max_queued is None else args.max_queued,
        )
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    if args.grace_s < 0:
        raise CommandError(f"--grace-s {args.grace_s:g}: must be 0 or more (0: abort at once)")
    if not args.records_reserve_mb >= 0:
        raise CommandError(f"--records-reserve-mb {args.records_reserve_mb}: must be 0 or more")
    config = ServerConfig(
        host=args.host,
        port=args.port,
        records_dir=records_directory(args.records),
        records_reserve_mb=args.records_reserve_mb,
        organiser_token=args.organiser_token or None,
        tls_cert=tls.cert,
        tls_key=tls.key,
        tls_client_ca=tls.client_ca,
        shutdown_grace_s=args.grace_s,
        limits=limits,
        admission=admission,
    )
    workers = _workers(args)
    if args.worker_ports is not None and not 1 <= args.worker_ports <= 65535 - workers:
        raise CommandError(
            f"--worker-ports {args.worker_ports}: the ports BASE..BASE+{workers - 1} must lie "
            "in 1..65535"
        )
    beside = None
    if args.http is not None:
        http_host = args.http_host or args.host

        async def beside(running: RunningServer) -> Callable[[], Awaitable[None]]:
            return await start_viewer(running, http_host, args.http)

    if not args.internal:  # a worker inherits its front's limit
        open_files.raise_open_files_limit()
    # Each process (a front, every worker) weighs the limit it runs under.
    admission = dataclasses.replace(admission, max_open_files=open_files_limit())
    config = dataclasses.replace(config, admission=admission)
    if not args.internal:  # the front speaks for its workers
        open_files.report_budget(
            admission, max_queued_given=args.max_queued is not None, workers=workers
        )
    try:
        if args.internal:
            event_loop.run(serve_forever(_internal(config, args), until_stdin_closes=True), factory)
        elif workers == 1:
            event_loop.run(serve_forever(config, beside), factory)
        else:
            argv = worker_argv(args)
            public_host = _nameable(args.host)
            event_loop.run(
                serve_front_forever(config, argv, workers, public_host=public_host), factory
            )
    except (OSError, WorkerStartError) as exc:
        raise CommandError(str(exc)) from None
    return 0


def default_workers() -> int:
    """Worker processes when --workers is not given: one less than the cores, at least 1.

    The front, the TLS and gRPC threads and the machine's other work need a core: on this
    project's 2-core reference machine one process beat a front with two workers on every
    capacity row (instant bots 2 217 vs 2 042 decisions/s; 256 thinking bots' server-added
    p99 45 vs 311 ms), so a 2-core machine runs everything in one process by default."""
    return max(1, (os.cpu_count() or 1) - 1)


def _workers(args: argparse.Namespace) -> int:
    """How many worker processes: --workers, else ``default_workers()``; the viewer (--http)
    reads the matches of one process, so it runs with one."""
    if args.workers is None:
        return 1 if args.http is not None else default_workers()
    workers: int = args.workers
    if workers < 1:
        raise CommandError(f"--workers must be at least 1, got {workers}")
    if workers > 1 and args.http is not None:
        raise CommandError(
            f"--http (the viewer) runs beside a one-process server, not --workers {workers}: "
            "use --workers 1, or `medina-arena web --server HOST:PORT --records DIR` beside it"
        )
    return workers


def _nameable(host: str) -> str | None:
    """``host`` as bots can be told it (an IPv6 address in brackets); None for a wildcard
    address, which names no host a bot could connect to."""
    bare = host.strip("[]")
    if bare in ("", "0.0.0.0", "::"):
        return None
    return f"[{bare}]" if ":" in bare else bare


def _internal(config: ServerConfig, args: argparse.Namespace) -> ServerConfig:
    """A worker's settings: its front reads the records and limits streams per client (every
    forwarded stream comes from the front, over one connection, in clear on 127.0.0.1); its
    own listener for bots (``--bots-host``) has the front's TLS and per-client limits."""
    if not config.organiser_token:
        raise CommandError("--internal is for worker processes started by a front")
    worker = os.environ.get("MEDINA_WORKER", "?")
    bots = None
    if args.bots_host is not None:
        port = 0
        if args.bots_port_base is not None:
            port = args.bots_port_base + int(os.environ.get("MEDINA_WORKER", "0"))
        bots = BotListener(
            host=args.bots_host,
            port=port,
            limits=config.limits,
            tls_cert=config.tls_cert,
            tls_key=config.tls_key,
            tls_client_ca=config.tls_client_ca,
        )
    for handler in logging.getLogger().handlers:
        handler.setFormatter(
            logging.Formatter(f"%(asctime)s %(levelname)s worker {worker} %(name)s: %(message)s")
        )
    return dataclasses.replace(
        config,
        scan_records=False,
        limits=dataclasses.replace(config.limits, max_streams_per_client=0),
        admission=dataclasses.replace(config.admission, max_matches=None),
        options=(("grpc.max_concurrent_streams", 1 << 20),),
        tls_cert=None,
        tls_key=None,
        tls_client_ca=None,
        bots=bots,
    )


def worker_argv(args: argparse.Namespace) -> list[str]:
    """The command line of a worker process: ``serve --internal`` on 127.0.0.1, a free port,
    the same records, limits and grace (the organiser secret comes in its environment)."""
    argv = [
        sys.executable,
        "-m",
        "medina.cli",
        "--log-level",
        logging.getLevelName(logging.getLogger().getEffectiveLevel()),
        "serve",
        "--internal",
        "--workers",
        "1",
        "--host",
        "127.0.0.1",
        "--port",
        "0",
        "--records",
        args.records,  # the worker runs in this directory: record paths read as here
        "--records-reserve-mb",
        repr(args.records_reserve_mb),
        "--grace-s",
        repr(args.grace_s),
        "--max-message-bytes",
        str(args.max_message_bytes),
        "--handshake-timeout-s",
        repr(args.handshake_timeout_s),
        "--unsolicited-per-second",
        repr(args.unsolicited_per_second),
        "--max-loop-lag-ms",
        str(args.max_loop_lag_ms),
        "--max-lag-share",
        repr(args.max_lag_share),
        "--start-burst",
        str(args.start_burst),
    ]
    if args.max_queued is not None:
        argv += ["--max-queued", str(args.max_queued)]
    if args.no_lag_limit:
        argv.append("--no-lag-limit")
    # Its own listener for bots, on the front's host, with the front's TLS and limits.
    argv += ["--bots-host", args.host]
    argv += ["--max-streams-per-client", str(args.max_streams_per_client)]
    if args.limit_loopback:
        argv.append("--limit-loopback")
    if args.worker_ports is not None:
        argv += ["--bots-port-base", str(args.worker_ports)]
    for option, path in (
        ("--tls-cert", args.tls_cert),
        ("--tls-key", args.tls_key),
        ("--tls-client-ca", args.tls_client_ca),
    ):
        if path:
            argv += [option, str(Path(path).resolve())]
    return argv
