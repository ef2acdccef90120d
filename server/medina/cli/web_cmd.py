"""``medina-arena web``: browse a records directory in a browser; and the ``--http`` option
that ``serve`` and ``match`` share (the viewer beside their gRPC server)."""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from medina.rpc.server import RunningServer, wait_for_signal
from medina.web import HttpServer, build_app, records_viewer, serve_viewer

from .errors import CommandError

DEFAULT_WEB_PORT = 8080


def add_parser(sub: Any) -> None:
    """Register the command."""
    p: argparse.ArgumentParser = sub.add_parser(
        "web", help="browse match records in a web browser (replays; read-only)"
    )
    p.add_argument("--records", default="records", help="directory of match records")
    p.add_argument("--host", default="127.0.0.1", help="listen address (default 127.0.0.1)")
    p.add_argument(
        "--http",
        type=int,
        default=DEFAULT_WEB_PORT,
        metavar="PORT",
        help=f"HTTP port (default {DEFAULT_WEB_PORT}; 0: any free port)",
    )
    p.set_defaults(run=run)


def add_http_options(p: argparse.ArgumentParser) -> None:
    """``--http PORT`` and ``--http-host`` for commands that run a server."""
    p.add_argument(
        "--http",
        type=int,
        metavar="PORT",
        help="also serve the web viewer (matches, live pages, replays, /metrics) on this "
        "port (0: any free port); read-only",
    )
    p.add_argument("--http-host", help="listen address of the viewer (default: --host)")


def check_http(args: argparse.Namespace) -> None:
    """Refuse a port out of range, naming it."""
    port = getattr(args, "http", None)
    if port is not None and not 0 <= port <= 65535:
        raise CommandError(f"--http must be a port from 0 to 65535, got {port}")


async def start_viewer(
    running: RunningServer, host: str, port: int
) -> Callable[[], Awaitable[None]]:
    """Start the viewer beside ``running``, print its URL, and return how to stop it."""
    try:
        http = await serve_viewer(running, host, port)
    except OSError as exc:
        await running.stop(1)
        raise CommandError(str(exc)) from None
    print(f"medina-arena viewer on {http.url}/", flush=True)
    return http.stop


def run(args: argparse.Namespace) -> int:
    """Serve the records until SIGTERM/SIGINT."""
    check_http(args)
    records = Path(args.records)
    if not records.is_dir():
        raise CommandError(f"no records directory {records} (set --records DIR)")
    return asyncio.run(_serve(records, args.host, args.http))


async def _serve(records: Path, host: str, port: int) -> int:
    http = HttpServer(build_app(records_viewer(records)), host, port)
    try:
        await http.start()
    except OSError as exc:
        raise CommandError(str(exc)) from None
    print(f"medina-arena viewer on {http.url}/ (records in {records})", flush=True)
    try:
        await wait_for_signal()
    finally:
        await http.stop()
    return 0
