"""``medina-arena tournament``: run a tournament from a file, work on a shared one, and show
or export its standings and games."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
import signal
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from medina.boundary.stopping import STOP_SIGNALS, exit_code
from medina.rpc.single.server import RunningServer
from medina.sandbox import SandboxError, SandboxLimits
from medina.sandbox import check as sandbox_check
from medina.storage.tournaments import (
    Claim,
    StoreError,
    TournamentChanged,
    TournamentRow,
    TournamentStore,
)
from medina.tournament import config as tconfig
from medina.tournament import entry, report, schedule
from medina.tournament.play import PlayedGame
from medina.tournament.runner import (
    DEFAULT_LEASE_S,
    Runner,
    RunOptions,
    enter,
    install_signal_handlers,
    sprt_status,
    standings,
)
from medina.tournament.sprt import SprtTracker
from medina.tournament.standings import SeatResult, counted_ranks
from medina.wire.shared.tls import ClientTls

from . import backup_cmd
from .errors import CommandError
from .options import (
    add_client_tls_options,
    add_organiser_token_option,
    add_sandbox_options,
    client_tls_from_args,
    existing_database,
    sandbox_changes,
    sandbox_limits,
)
from .output import STDOUT
from .reach import unreachable
from .tournament_show import (
    DB_FILE,
    OUT_ROOT,
    export_cmd,
    games_cmd,
    load_file,
    out_dir,
    standings_cmd,
    verify_cmd,
)
from .web_cmd import start_viewer, tournament_standings

#: Games (entry games for ``create``) played at once unless --concurrency says.
DEFAULT_CONCURRENCY = min(4, os.cpu_count() or 1)
_CONCURRENCY_DEFAULT = f"default: the cores, at most 4: {DEFAULT_CONCURRENCY} here"
_LEASE_HELP = (
    "seconds a game being played stays claimed without a renewal (renewed every third of "
    "it); a runner or worker that dies gives its game back when the lease runs out, to be "
    f"played again (default {DEFAULT_LEASE_S:g})"
)


def add_parser(sub: Any) -> None:
    """Register ``tournament`` and its subcommands."""
    p: argparse.ArgumentParser = sub.add_parser(
        "tournament", help="many games between bot programs, with standings and ratings"
    )
    tsub = p.add_subparsers(dest="tournament_command", required=True)

    run = tsub.add_parser("run", help="play a tournament file (continues a stopped one)")
    run.add_argument("file", help="the tournament file (TOML)")
    _where(run)
    run.add_argument(
        "--concurrency",
        type=int,
        default=DEFAULT_CONCURRENCY,
        help=f"games at once ({_CONCURRENCY_DEFAULT})",
    )
    run.add_argument("--server", help="play on a running server at HOST:PORT (default: its own)")
    add_organiser_token_option(run, "organiser token of --server")
    add_client_tls_options(run)
    run.add_argument(
        "--until-separated",
        action="store_true",
        help="stop once the rating intervals of neighbours in the standings are apart "
        "(games in the file is then the maximum)",
    )
    run.add_argument("--lease-s", type=float, default=DEFAULT_LEASE_S, help=_LEASE_HELP)
    run.add_argument("--quiet", action="store_true", help="no progress, only the standings")
    run.add_argument(
        "--http",
        type=int,
        metavar="PORT",
        help="serve the web viewer of the games in play and the standings on this port "
        "(0: any free port; on 127.0.0.1 unless --http-host); read-only",
    )
    run.add_argument("--http-host", default="127.0.0.1", help="listen address of the viewer")
    _validation(run)
    add_sandbox_options(run, from_file=True)
    run.set_defaults(run=run_cmd)

    create = tsub.add_parser(
        "create", help="store a tournament and its schedule for workers (plays nothing)"
    )
    create.add_argument("file", help="the tournament file (TOML)")
    _where(create)
    create.add_argument(
        "--until-separated",
        action="store_true",
        help="the tournament stops once the rating intervals of neighbours in the standings "
        "are apart (games in the file is then the maximum)",
    )
    create.add_argument(
        "--concurrency",
        type=int,
        default=DEFAULT_CONCURRENCY,
        help=f"entry games at once ({_CONCURRENCY_DEFAULT})",
    )
    _validation(create)
    add_sandbox_options(create, from_file=True)
    create.set_defaults(run=create_cmd)

    work = tsub.add_parser(
        "worker", help="play games of the running tournaments of a shared database"
    )
    work.add_argument("--db", required=True, help="database URL (postgresql://...)")
    work.add_argument("--tournament", help="only this tournament (default: every running one)")
    work.add_argument(
        "--concurrency",
        type=int,
        default=DEFAULT_CONCURRENCY,
        help=f"games this worker plays at once ({_CONCURRENCY_DEFAULT})",
    )
    work.add_argument(
        "--records",
        help="where this worker's records go (default: with --tournament, that tournament's "
        "own, as run writes them: its file's records key, else tournaments/NAME/records; "
        "else ./records)",
    )
    work.add_argument("--server", help="play on a running server at HOST:PORT")
    add_organiser_token_option(work, "organiser token of --server")
    add_client_tls_options(work)
    work.add_argument("--lease-s", type=float, default=DEFAULT_LEASE_S, help=_LEASE_HELP)
    work.add_argument(
        "--poll-s",
        type=float,
        default=5.0,
        help="seconds between looks for new games when idle (default %(default)g)",
    )
    work.add_argument(
        "--forever",
        action="store_true",
        help="keep waiting for new tournaments (default: exit when no game is left)",
    )
    work.set_defaults(run=worker_cmd)

    for name, helptext, func in (
        ("standings", "the standings and head-to-head table", standings_cmd),
        ("games", "every game with its seats and status", games_cmd),
        ("export", "standings, games or head-to-head as CSV or JSON", export_cmd),
        (
            "verify",
            "check the schedule against the file's settings and every result against its "
            "record, replayed through the engine",
            verify_cmd,
        ),
    ):
        q = tsub.add_parser(name, help=helptext)
        q.add_argument("file", nargs="?", help="the tournament file (gives name and --out)")
        _where(q)
        q.add_argument("--tournament", help="tournament name (default: the file's, or newest)")
        if name == "verify":
            q.add_argument(
                "--records",
                help="where the records are, when not where the results say (a published copy: "
                "each found by its file name)",
            )
        if name == "export":
            q.add_argument("--format", choices=("csv", "json"), required=True, help="format")
            q.add_argument(
                "--table",
                choices=("standings", "games", "head-to-head", "rating-history", "all"),
                default=None,
                help="what to export (csv default standings; json default all)",
            )
            q.add_argument("-o", "--output", help=f"file to write ('{STDOUT}' or left out: stdout)")
        q.set_defaults(run=func)

    backup = tsub.add_parser(
        "backup",
        help="copy a tournament's database while it runs: one consistent snapshot, checked "
        "(SQLite; PostgreSQL: pg_dump)",
    )
    backup.add_argument("file", nargs="?", help="the tournament file (finds its database)")
    backup.add_argument("--db", help=f"database URL or SQLite file (default: OUT/{DB_FILE})")
    backup.add_argument(
        "--out",
        help="the tournament's output directory, where its database is (default: tournaments/NAME)",
    )
    backup_cmd.add_arguments(backup, DB_FILE)
    backup.set_defaults(run=_backup)


def _validation(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--validation",
        choices=tconfig.VALIDATION,
        help="before the first game each bot plays one quick game per variant against random "
        "players: a bot that fails it stops the run (stop), is left out with a warning (drop), "
        "or nothing is checked (off); default: the file's validation key, else stop",
    )


def _where(p: argparse.ArgumentParser) -> None:
    p.add_argument("--db", help=f"database URL or SQLite file (default: OUT/{DB_FILE})")
    p.add_argument("--out", help="output directory (default: tournaments/NAME)")


def _backup(args: argparse.Namespace) -> int:
    """``tournament backup``: the database the other commands would read, copied."""
    name = load_file(args.file).name if args.file else None
    db = args.db or str(out_dir(args, name) / DB_FILE)
    return backup_cmd.run(db, "tournament", args)


def _reach(args: argparse.Namespace) -> ClientTls | None:
    """The TLS settings of ``--tls-*`` (None: in clear), once ``--server`` (if given) was
    reached with them; CommandError naming what is wrong (docs/operations.md, 'In public')."""
    tls = client_tls_from_args(args)
    if args.server:
        why = asyncio.run(unreachable(args.server, tls))
        if why is not None:
            raise CommandError(why)
    return tls


class EntryFailed(Exception):
    """A bot failed its entry game and the tournament is set to stop (exit code 1)."""

    code = 1


class EntryStopped(EntryFailed):
    """SIGINT, SIGTERM or SIGHUP during entry validation: nothing was played or stored
    (the exit code of a run stopped so mid-play: 130, 143 or 129)."""

    def __init__(self, name: str, sig: signal.Signals) -> None:
        super().__init__(
            f"tournament {name}: runner stopped ({sig.name}) during entry validation; nothing "
            "was stored, run the same command to start"
        )
        self.code = 128 + sig.value


async def _validating(
    name: str, validation: Awaitable[list[entry.EntryResult]]
) -> list[entry.EntryResult]:
    """``validation``, or EntryStopped at a stop signal (its games are stopped)."""
    task = asyncio.ensure_future(validation)
    loop = asyncio.get_running_loop()
    stopped: list[signal.Signals] = []

    def stop(sig: signal.Signals) -> None:
        stopped.append(sig)
        task.cancel()

    for sig in STOP_SIGNALS:
        loop.add_signal_handler(sig, stop, sig)
    try:
        return await task
    except asyncio.CancelledError:
        if stopped:
            raise EntryStopped(name, stopped[0]) from None
        raise
    finally:
        for sig in STOP_SIGNALS:
            loop.remove_signal_handler(sig)


def _create(
    args: argparse.Namespace, cfg: tconfig.TournamentConfig, out: Path, records: Path
) -> tuple[
    TournamentStore, TournamentRow, bool, list[schedule.ScheduledGame], tconfig.TournamentConfig
]:
    """Create the tournament (after its entry validation) or find it as stored; the
    configuration as played (without the bots entry validation dropped)."""
    try:
        if not args.db:
            out.mkdir(parents=True, exist_ok=True)
        store = TournamentStore(args.db or str(out / DB_FILE))
        stored = next((t for t in store.tournaments() if t.name == cfg.name), None)
    except StoreError as exc:
        raise CommandError(str(exc)) from None
    except OSError as exc:
        raise CommandError(f"cannot use {out}: {exc.strerror}") from None
    try:
        if stored is not None:  # continuing: the bots dropped at the start stay dropped
            cfg = cfg.without(tconfig.TournamentConfig.from_json(stored.config).dropped)
        elif cfg.validation != "off":
            cfg = _validate(args, cfg, records)
    except tconfig.TournamentConfigError as exc:
        raise CommandError(f"{args.file}: {exc}") from None
    games = schedule.build(cfg)
    try:
        row, created = enter(store, cfg, games)
    except TournamentChanged as exc:
        differs = ", ".join(cfg.differences(exc.config))
        where = "--db URL" if args.db else "--out DIR"
        advice = f"give this one another name, or another {where}"
        raise CommandError(
            str(TournamentChanged(exc.name, exc.where, "", differs, advice))
        ) from None
    except StoreError as exc:
        raise CommandError(str(exc)) from None
    return store, row, created, games, cfg


def _validate(
    args: argparse.Namespace, cfg: tconfig.TournamentConfig, records: Path
) -> tconfig.TournamentConfig:
    """Every bot's entry game; the configuration without the bots that failed (drop), or
    EntryFailed naming them (stop)."""
    quiet = getattr(args, "quiet", False)
    if not quiet:
        games = len(cfg.bots) * len(cfg.variants)
        print(f"tournament {cfg.name}: entry validation, {games} games", flush=True)

    def show(result: entry.EntryResult) -> None:
        if not quiet or not result.passed:
            print(result.line(), flush=True)

    validation = entry.validate(
        cfg,
        records / "entry",
        concurrency=args.concurrency,
        on_result=show,
        hide=(records, *_hidden_from_bots(args, out_dir(args, cfg.name))),
    )
    results = asyncio.run(_validating(cfg.name, validation))
    failed = entry.failures(results)
    if not failed:
        return cfg
    if cfg.validation == "stop":
        lines = [f"bot {name!r} failed its entry game: {why}" for name, why in failed.items()]
        raise EntryFailed(
            "\n".join(lines) + f"\nnothing was played; fix the bot or its command in {args.file} "
            '(validation = "drop" plays without it, "off" skips the check)'
        )
    for name, why in failed.items():
        print(
            f"warning: bot {name!r} is dropped from the tournament: it failed its entry game: "
            f"{why}",
            file=sys.stderr,
            flush=True,
        )
    return cfg.without(list(failed.items()))


def _hidden_from_bots(args: argparse.Namespace, out: Path) -> tuple[Path, ...]:
    """What sandboxed bots must not see besides the records and the other bots'
    directories: this tournament's output directory (its database), the other tournaments'
    (the default root), the tournament file (the other bots' ``env``) and its directory
    (unless a bot runs there: then the file alone)."""
    return (out, OUT_ROOT, Path(args.file).parent, Path(args.file))


def _records(cfg: tconfig.TournamentConfig, out: Path, file: str) -> Path:
    """The records directory, made now: one that cannot be is the file's ``records`` key's
    fault (or ``--out``'s), said before any bot is started."""
    records = cfg.records_dir(out)
    try:
        records.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        where = f"{file}: records" if cfg.records else "--out"
        raise CommandError(
            f"{where}: cannot use {exc.filename or records}: {exc.strerror}"
        ) from None
    return records


def _configured(args: argparse.Namespace) -> tconfig.TournamentConfig:
    cfg = load_file(args.file)
    if args.until_separated:
        cfg = dataclasses.replace(cfg, until_separated=True)
    if args.validation is not None:
        cfg = dataclasses.replace(cfg, validation=args.validation)
    changes = sandbox_changes(args)
    if changes is not None:  # --sandbox: every bot, its own limits under the command line's
        cfg = dataclasses.replace(
            cfg,
            bots=tuple(
                dataclasses.replace(b, sandbox=sandbox_limits(args, b.sandbox or SandboxLimits()))
                for b in cfg.bots
            ),
        )
    if any(b.sandbox for b in cfg.bots):
        try:
            sandbox_check()
        except SandboxError as exc:
            raise CommandError(f"{args.file}: {exc}") from None
    return cfg


def create_cmd(args: argparse.Namespace) -> int:
    """Store the tournament and its schedule for workers, without playing."""
    cfg = _configured(args)
    out = out_dir(args, cfg.name)
    try:
        store, row, created, games, cfg = _create(args, cfg, out, _records(cfg, out, args.file))
    except EntryStopped as exc:
        print(exc, file=sys.stderr)
        return exc.code
    except EntryFailed as exc:
        print(f"medina-arena tournament create: {exc}", file=sys.stderr)
        return exc.code
    what = "created" if created else "already there"
    counts = ", ".join(f"{n} {s}" for s, n in sorted(store.counts(row.id).items()))
    print(f"tournament {cfg.name}: {what} in {store.safe_url}: {len(games)} games ({counts})")
    for note in schedule.coverage(cfg):
        print(f"tournament {cfg.name}: {note}")
    return 0


def run_cmd(args: argparse.Namespace) -> int:
    """Create (or continue) the tournament and play it to the end."""
    cfg = _configured(args)
    if args.concurrency < 1:
        raise CommandError(f"--concurrency must be at least 1, got {args.concurrency}")
    if args.lease_s <= 0:
        raise CommandError(f"--lease-s must be positive, got {args.lease_s}")
    tls = _reach(args)
    out = out_dir(args, cfg.name)
    records = _records(cfg, out, args.file)
    try:
        store, row, created, games, cfg = _create(args, cfg, out, records)
    except EntryStopped as exc:
        print(exc, file=sys.stderr)
        return exc.code
    except EntryFailed as exc:
        print(f"medina-arena tournament run: {exc}", file=sys.stderr)
        return exc.code
    counts = store.counts(row.id)
    done = counts.get("done", 0)
    if not args.quiet:
        verb = "starting" if created else "continuing"
        print(
            f"tournament {cfg.name}: {verb}, {len(games)} games "
            f"({done} done), database {store.safe_url}, records {records}",
            flush=True,
        )
        for note in schedule.coverage(cfg):
            print(f"tournament {cfg.name}: {note}", flush=True)
    opts = RunOptions(
        concurrency=args.concurrency,
        records=records,
        server=args.server,
        organiser_token=args.organiser_token,
        tls=tls,
        lease_s=args.lease_s,
        tournament_id=row.id,
        hide=_hidden_from_bots(args, out),
    )
    display = _Display(store, row.id, len(games), done, quiet=args.quiet, cfg=cfg)
    beside = None
    if args.http is not None:
        if args.server:
            raise CommandError("--http shows the runner's own server: not with --server")
        provider = tournament_standings(args.db or str(out / DB_FILE), cfg.name)

        async def beside(running: RunningServer) -> Callable[[], Awaitable[None]]:
            return await start_viewer(running, args.http_host, args.http, provider)

    runner = Runner(store, opts, on_game=display.game, beside=beside, on_note=display.note)
    code = asyncio.run(_run(runner, display))
    final = next(t for t in store.tournaments() if t.id == row.id)
    st = standings(store, row.id)
    title = f"{cfg.name}: {st.games} games"
    if final.status == "separated":
        title += f" (stopped early: the standings separated after block {final.stop_block})"
    if final.status.startswith("sprt-"):
        title += f" (stopped early: the SPRT reached its verdict at block {final.stop_block})"
    title += report.left_out_note(cfg.dropped)
    report.print_standings(st, title)
    if cfg.format == "sprt":
        print(sprt_status(store, row.id, cfg).line(), flush=True)
    if runner.stopping is not None:
        left = sum(n for s, n in store.counts(row.id).items() if s in ("pending", "running"))
        print(
            f"tournament {cfg.name}: {runner.stopping}; {left} games left, run the same "
            "command to continue",
            file=sys.stderr,
        )
    return code


async def _run(runner: Runner, display: _Display) -> int:
    install_signal_handlers(runner)
    with display:
        await runner.run()
    if runner.failed is not None:
        return 1
    if runner.stopping is None:
        return 0
    return exit_code(runner.signal or "SIGINT")


class _Display:
    """A live progress bar on a terminal; a line per game otherwise (none with --quiet)."""

    def __init__(
        self,
        store: TournamentStore,
        tid: int,
        total: int,
        done: int,
        quiet: bool,
        cfg: tconfig.TournamentConfig | None = None,
    ):
        self.store, self.tid, self.total, self.done = store, tid, total, done
        self.quiet = quiet
        #: An SPRT's test is shown after every game (its LLR in the bar's last column).
        self.sprt = cfg if cfg is not None and cfg.format == "sprt" else None
        self.tracker = SprtTracker(cfg.sprt) if cfg is not None and cfg.sprt else None
        self.started = time.monotonic()
        self.here = 0
        console = Console(stderr=True)
        self.live = console.is_terminal and not quiet
        self.progress = Progress(
            TextColumn("games"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"),
            TimeRemainingColumn(),
            TextColumn("leader {task.fields[leader]}"),
            console=console,
            disable=not self.live,
        )
        self.task = self.progress.add_task(
            "games", total=total, completed=done, rate="", leader="-"
        )

    def __enter__(self) -> _Display:
        self.progress.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.__exit__(None, None, None)

    def note(self, claim: Claim, text: str) -> None:
        """A line about a game in play (its match waits for a busy server), above the bar."""
        if self.quiet:
            return
        line = f"game {report.game_number(claim.number)}/{self.total}: {text}"
        if self.live:
            self.progress.console.print(line, markup=False, highlight=False)
        else:
            print(line, flush=True)

    def game(self, claim: Claim, played: PlayedGame) -> None:
        self.done += 1
        self.here += 1
        minutes = (time.monotonic() - self.started) / 60
        rate = self.here / minutes if minutes > 0 else 0.0
        leader = standings(self.store, self.tid).leader() or "-"
        test = sprt_status(self.store, self.tid, self.sprt, self.tracker) if self.sprt else None
        if test is not None:
            leader = (
                f"{leader}; LLR {test.llr:.2f} [{test.bounds.lower:.2f}, {test.bounds.upper:.2f}]"
            )
        self.progress.update(
            self.task, completed=self.done, rate=f"{rate:.1f} games/min", leader=leader
        )
        if not self.live and not self.quiet:
            outcome = played.outcome.seats
            counted = counted_ranks(
                [
                    SeatResult("", s.seat, s.total, s.rank, s.termination.name.lower())
                    for s in outcome
                ]
            )
            ranks = ", ".join(
                f"{claim.seats[s.seat]} {rank}"
                + ("" if s.termination.name == "NORMAL" else f" ({s.termination.name.lower()})")
                for s, rank in zip(outcome, counted, strict=True)
            )
            left = self.total - self.done
            eta = f", ETA {left / rate:.0f} min" if rate > 0 and left else ""
            print(
                f"game {report.game_number(claim.number)}/{self.total} ({self.done} done): "
                f"{ranks}; "
                f"{rate:.1f} games/min{eta}; leader {leader}",
                flush=True,
            )
            if test is not None:
                print(test.line(), flush=True)


def worker_cmd(args: argparse.Namespace) -> int:
    """Play games of the shared database until none is left (or forever)."""
    if args.concurrency < 1:
        raise CommandError(f"--concurrency must be at least 1, got {args.concurrency}")
    records = Path(args.records) if args.records is not None else Path("records")
    try:
        store = TournamentStore(existing_database(args.db))
        tid = None
        if args.tournament:
            row = store.tournament(args.tournament)
            tid = row.id
            if args.records is None:  # beside the tournament's own, where create made them
                cfg = tconfig.TournamentConfig.from_json(row.config)
                records = cfg.records_dir(Path("tournaments") / row.name)
        if not args.forever and not store.tournaments():  # --forever waits for one
            raise CommandError(
                f"no tournament in {store.safe_url}: store one first "
                "(medina-arena tournament create FILE --db URL)"
            )
    except StoreError as exc:
        raise CommandError(str(exc)) from None
    tls = _reach(args)
    opts = RunOptions(
        concurrency=args.concurrency,
        records=records,
        server=args.server,
        organiser_token=args.organiser_token,
        tls=tls,
        lease_s=args.lease_s,
        tournament_id=tid,
        poll_s=args.poll_s,
    )

    def line(claim: Claim, played: PlayedGame) -> None:
        print(
            f"{claim.tournament} game {report.game_number(claim.number)}: {played.ending} "
            f"({played.match_id})",
            flush=True,
        )

    def note(claim: Claim, text: str) -> None:
        print(f"{claim.tournament} game {report.game_number(claim.number)}: {text}", flush=True)

    runner = Runner(store, opts, on_game=line, on_note=note)

    async def go() -> int:
        install_signal_handlers(runner)
        while True:
            await runner.run()
            if runner.failed is not None:
                print(f"worker: {runner.failed}", file=sys.stderr)
                return 1
            if runner.stopping is not None:
                return exit_code(runner.signal or "SIGINT")
            if not args.forever:
                return 0
            await asyncio.sleep(args.poll_s)

    code = asyncio.run(go())
    t = runner.tally
    print(
        f"worker {runner.owner}: {t.played} games played, {t.given_back} given back, "
        f"{t.lost_leases} leases lost",
        flush=True,
    )
    return code
