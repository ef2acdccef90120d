"""``medina-arena match``: run one match between bot processes over gRPC and show it."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import shlex
import sys
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

import grpc

from medina.engine import GameFollower, GameState, render
from medina.launch.botlog import log_says
from medina.launch.botproc import BotProcess, BotStartError, reap, spawn_bot, watch_bot_exit
from medina.referee.config import DEFAULT_CONNECT_TIMEOUT_MS, MatchSettings
from medina.referee.errors import ConfigError
from medina.referee.outcome import MatchOutcome
from medina.rpc.common.auth import bearer_metadata
from medina.rpc.common.serving import wait_for_signal
from medina.rpc.organiser import (
    RETRY_REASONS,
    SeatForfeit,
    create_match,
    open_channel,
    report_queued,
    seat_forfeiter,
)
from medina.rpc.single.server import RunningServer, start_private_server
from medina.sandbox import SandboxSpec
from medina.v1 import admin_pb2, admin_pb2_grpc, game_pb2
from medina.web import serve_viewer
from medina.wire import convert
from medina.wire import matches as wire_matches
from medina.wire.shared.tls import ClientTls

from .errors import CommandError
from .options import (
    add_client_tls_options,
    add_match_options,
    add_organiser_token_option,
    add_sandbox_options,
    check_players,
    client_tls_from_args,
    records_directory,
    sandbox_changes,
    sandbox_limits,
    settings_from_args,
)
from .progress import Progress, scoreboard
from .reach import unreachable
from .web_cmd import add_http_options


def add_parser(sub: Any) -> None:
    """Register the command."""
    p: argparse.ArgumentParser = sub.add_parser(
        "match", help="play one match between bot processes over gRPC"
    )
    add_match_options(p)
    p.add_argument(
        "--bot",
        action="append",
        default=[],
        metavar="CMD",
        help="command of one bot process (repeat per seat, in seat order); it gets "
        "--server HOST:PORT appended (before a '--' word if there is one), or {server} "
        "in CMD filled in instead; the seat token is never on its command line but in "
        "the environment variable MEDINA_TOKEN (MEDINA_SERVER holds the address too); "
        "a leading 'python' means this interpreter; '-': an open seat, no process: its "
        "token is printed and you connect a bot yourself (under a debugger, say); with "
        "--tls-ca it gets --tls-ca (--tls-cert, --tls-key) FILE after --server too",
    )
    p.add_argument(
        "--connect-timeout-ms",
        type=int,
        default=DEFAULT_CONNECT_TIMEOUT_MS,
        help="how long the match waits for every bot before it starts without the absent "
        f"ones (default {DEFAULT_CONNECT_TIMEOUT_MS}; give an open seat more)",
    )
    p.add_argument("--server", help="use a running server at HOST:PORT instead of starting one")
    add_organiser_token_option(p, "organiser token of --server")
    add_client_tls_options(p)
    p.add_argument(
        "--records",
        default="records",
        help="record directory of the local server, and of the bots' logs "
        "(MATCH.seatN.log), with --server too",
    )
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    add_http_options(p, default_host="127.0.0.1")  # the local server's address
    p.add_argument(
        "--linger-s",
        type=float,
        default=0.0,
        metavar="S",
        help="with --http: keep the viewer up S seconds after the match for its replay "
        "(Ctrl-C ends it sooner; default 0)",
    )
    p.add_argument(
        "--stay",
        action="store_true",
        help="with --http: keep the viewer up after the match until Ctrl-C",
    )
    add_sandbox_options(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run the match; 0 when it was played to the end."""
    check_players(args)
    if len(args.bot) != args.players:
        raise CommandError(
            f"{args.players} players need {args.players} --bot commands, got {len(args.bot)}"
        )
    if sandbox_changes(args) is not None and OPEN_SEAT in args.bot:
        raise CommandError(
            "--sandbox runs the bots this command starts; an open seat ('-') has none"
        )
    # every bot in a sandbox: its directory is the current one; the records are hidden
    limits = sandbox_limits(args)
    args.sandbox_spec = (
        SandboxSpec(limits, Path.cwd(), hide=(Path(args.records),)) if limits else None
    )
    if args.http is not None and args.server:
        raise CommandError(
            "--http serves the viewer of the server this command starts; with --server, "
            "run the viewer there (medina-arena serve --http PORT)"
        )
    args.tls = client_tls_from_args(args)
    if args.linger_s < 0:
        raise CommandError(f"--linger-s must be 0 or more, got {args.linger_s:g}")
    settings = settings_from_args(args)
    try:
        settings = replace(settings, connect_timeout_ms=args.connect_timeout_ms)
    except ConfigError as exc:
        raise CommandError(f"--connect-timeout-ms: {exc}") from None
    if not args.server:  # the server this command starts writes the records
        records_directory(args.records)
    return asyncio.run(_run(args, settings))


async def _run(args: argparse.Namespace, settings: MatchSettings) -> int:
    local: RunningServer | None = None
    if args.server:
        address = args.server
        why = await unreachable(address, args.tls)
        if why is not None:
            raise CommandError(why)
    else:
        local = await start_private_server(Path(args.records))
        address = local.address
    stop_viewer = None
    viewer_url = None
    try:
        if local is not None and args.http is not None:
            http = await serve_viewer(local, args.http_host or "127.0.0.1", args.http)
            stop_viewer = http.stop
            viewer_url = http.url
        metadata = (
            local.organiser_metadata if local is not None else bearer_metadata(args.organiser_token)
        )
        code = await _play(args, settings, address, metadata, Path(args.records), viewer_url)
        if viewer_url is not None and (args.stay or args.linger_s > 0):
            await _linger(None if args.stay else args.linger_s)
        return code
    except OSError as exc:
        raise CommandError(str(exc)) from None
    finally:
        if stop_viewer is not None:
            await stop_viewer()
        if local is not None:
            await local.stop(grace_s=5)


async def _linger(seconds: float | None) -> None:
    """Keep serving for ``seconds`` (None: until SIGINT/SIGTERM), ending early on either."""
    how_long = "until Ctrl-C" if seconds is None else f"{seconds:g} s more (Ctrl-C ends it)"

    def ready() -> None:
        print(f"the viewer stays up {how_long}", flush=True)

    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(wait_for_signal(ready), seconds)


#: The reason an interrupted ``match`` gives its match (kept in the record).
INTERRUPTED = "interrupted: the match command was stopped (Ctrl-C)"


async def _play(
    args: argparse.Namespace,
    settings: MatchSettings,
    address: str,
    metadata: tuple[tuple[str, str], ...],
    logs: Path,
    viewer_url: str | None = None,
) -> int:
    async with open_channel(address, args.tls) as channel:
        matches = admin_pb2_grpc.MatchServiceStub(channel)
        try:
            created = await create_match(
                matches,
                wire_matches.create_request(settings),
                metadata=metadata,
                timeout_s=10,
                # The records' disk is the operator's, who is here: said at once.
                retry_reasons=RETRY_REASONS - {"RECORD_UNWRITABLE"},
            )
        except grpc.aio.AioRpcError as exc:
            raise CommandError(f"cannot create the match at {address}: {exc.details()}") from None
        match_id = created.match_id
        spectator = admin_pb2_grpc.SpectatorServiceStub(channel)
        watch = spectator.Watch(wire_matches.watch_request(match_id))
        logs.mkdir(parents=True, exist_ok=True)
        procs: dict[int, BotProcess] = {}
        # A multi-worker server names the process holding the match: bots go there directly.
        bot_address = created.endpoint if created.HasField("endpoint") else address
        try:
            for cmd, tok in zip(args.bot, created.tokens, strict=True):
                if cmd == OPEN_SEAT:
                    line = open_seat_line(tok.seat, bot_address, tok.token, args.tls)
                    print(line, flush=True)
                    continue
                log = logs / f"{match_id}.seat{tok.seat}.log"
                procs[tok.seat] = await _spawn(
                    cmd, bot_address, tok.token, log, args.sandbox_spec, args.tls
                )
        except BotStartError:
            for proc in procs.values():
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                await proc.wait()
            await matches.AbortMatch(
                wire_matches.abort_request(match_id, "a bot did not start"),
                metadata=metadata,
                timeout=10,
            )
            raise
        print(
            f"match {match_id}: {settings.ruleset}, {settings.players} players, "
            f"seed {settings.seed}"
        )
        if viewer_url is not None:
            print(f"watch it live: {viewer_url}/live/{match_id}", flush=True)
        logs_of = [logs / f"{match_id}.seat{tok.seat}.log" for tok in created.tokens]
        forfeit = seat_forfeiter(matches, match_id, metadata)
        watchers = [
            asyncio.create_task(_report_exit(seat, proc, logs_of[seat], forfeit))
            for seat, proc in procs.items()
        ]
        if not args.quiet:  # a busy server holds the match: say so rather than go silent
            watchers.append(
                asyncio.create_task(report_queued(matches, match_id, _say, metadata=metadata))
            )
        view = Spectator(settings.new_game(), quiet=args.quiet)
        grace_s = 10.0  # a played match's bots get this long to exit as they please
        try:
            async for message in watch:
                view.message(message)
        except grpc.aio.AioRpcError as exc:
            grace_s = 0.0  # no server left to play on: the bots are stopped at once
            raise CommandError(_server_lost(match_id, address, exc)) from None
        except asyncio.CancelledError:  # Ctrl-C: the operator ends the match
            if view.result is None:
                # Aborted before its bots are stopped: stopping them first had the match
                # play on without them and its record read as a finished game that every
                # started bot lost by crashing.
                with contextlib.suppress(grpc.aio.AioRpcError):
                    await matches.AbortMatch(
                        wire_matches.abort_request(match_id, INTERRUPTED),
                        metadata=metadata,
                        timeout=5,
                    )
            raise
        finally:
            for watcher in watchers:
                watcher.cancel()
            await reap(list(procs.values()), grace_s)
        view.progress.flush()
        state = view.game.state
        result = view.result
        print(render(state))
        if result is None:
            raise CommandError("the spectator stream ended without a result")
        print(scoreboard(state, result))
        try:
            summary = await matches.GetMatch(
                wire_matches.get_request(match_id), metadata=metadata, timeout=10
            )
            record = summary.match.record_path
        except grpc.aio.AioRpcError as exc:
            # The match has its result: a server that stopped since (a shutdown aborted the
            # match) is no lost match, only an unanswered question of where its record is.
            _say(
                f"match {match_id}: the server at {address} did not answer after the match "
                f"ended ({exc.code().name})"
            )
            record = f"{match_id}.jsonl in the server's records directory"
        if viewer_url is not None:
            print(f"replay: {viewer_url}/replay/{match_id}")
        print(f"record: {record}", flush=True)
        return 0 if result.complete else 1


class Spectator:
    """The match as the console follows it from the spectator stream: a local copy of the
    game and the progress lines.

    Every history entry is shown once, in index order, from entry 0: the snapshot's history
    comes first (it holds what happened before the subscription, at least the start seat's
    first ``TurnStarted``, emitted at setup), then the updates' new entries.
    """

    def __init__(self, start: GameState, quiet: bool = False) -> None:
        self.game = GameFollower(start)
        self.progress = Progress(start, quiet=quiet)
        self.next_index = 0  # the first history entry not shown yet
        self.result: MatchOutcome | None = None

    def message(self, message: admin_pb2.WatchResponse) -> None:
        """Take one message of the spectator stream."""
        which = message.WhichOneof("message")
        if which == "snapshot":
            self.events(message.snapshot.events)
        elif which == "update":
            self.events(message.update.events)
        elif which == "result":
            self.result = convert.outcome_from_proto(message.result)

    def events(self, events: Iterable[game_pb2.Event]) -> None:
        """Show and follow the entries not seen yet."""
        for event in events:
            if event.index < self.next_index:
                continue
            self.progress.event(convert.event_from_proto(event))
            self.game.feed(
                event.index, convert.action_of_event(event), str(event.WhichOneof("event"))
            )
            self.progress.state = self.game.state
            self.next_index = event.index + 1


def _server_lost(match_id: str, address: str, exc: grpc.aio.AioRpcError) -> str:
    """What ``match`` says when the server stops answering mid-match, in one line (the
    error's own text spans lines, with gRPC's debug string)."""
    problem = f"{exc.code().name}: {exc.details() or 'no details'}"
    if exc.code() is grpc.StatusCode.UNAVAILABLE:
        return f"match {match_id}: the server at {address} went away ({problem})"
    return f"match {match_id}: the server at {address} answered {problem}"


#: A ``--bot`` that starts nothing: the seat is left for a bot the user connects.
OPEN_SEAT = "-"


def open_seat_line(seat: int, address: str, token: str, tls: ClientTls | None = None) -> str:
    """What ``match`` says of an open seat: where and how to connect its bot (over TLS with
    the organiser's files, when ``tls``)."""
    options = "".join(f" {shlex.quote(o)}" for o in tls.options()) if tls is not None else ""
    return (
        f"seat {seat} is open: connect a bot to {address} with the seat token {token} "
        f"(e.g. MEDINA_SERVER={address} MEDINA_TOKEN={token} ./my-bot{options})"
    )


def _say(text: str) -> None:
    print(text, flush=True)


async def _report_exit(
    seat: int, proc: BotProcess, log: Path, forfeit: Callable[[int, str], Awaitable[SeatForfeit]]
) -> None:
    """Forfeit a seat at once when its bot exits before the match is over (on this
    process's server or another alike: ``watch_bot_exit``), and say so, with where its
    log is."""
    said = await watch_bot_exit(proc, seat, forfeit)
    if said.ended:
        return  # the match is over: exiting is what the bot should do
    says = log_says(log)
    ends = says.ends(log)
    print(
        f"seat {seat}'s bot"
        + says.exited(f"exited with code {proc.returncode}", said.when)
        + (f" ({proc.limit_hit()})" if proc.limit_hit() else "")
        + f"; its log: {log}"
        + (f"; {ends}" if ends else ""),
        file=sys.stderr,
        flush=True,
    )


async def _spawn(
    command: str,
    address: str,
    token: str,
    log_path: Path,
    sandbox: SandboxSpec | None,
    tls: ClientTls | None,
) -> BotProcess:
    argv = shlex.split(command)
    if not argv:
        raise CommandError("empty --bot command")
    return await spawn_bot(argv, address, token, log_path, sandbox=sandbox, tls=tls)
