"""``medina-arena web``: browse a records directory in a browser; and the ``--http`` option
that ``serve`` and ``match`` share (the viewer beside their gRPC server)."""

from __future__ import annotations

import argparse
import asyncio
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from medina.engine.stats import Z95
from medina.ladder.service import Ladder
from medina.ladder.standings import DEFAULT_MIN_GAMES
from medina.ladder.standings import standings as ladder_rows
from medina.rpc.common.admission import open_files_limit
from medina.rpc.common.limits import ClientSlots
from medina.rpc.common.serving import wait_for_signal
from medina.rpc.single.server import RunningServer
from medina.storage.ladder import LadderStore
from medina.storage.tournaments import GameRow, StoreError, TournamentStore
from medina.tournament.config import TournamentConfig
from medina.tournament.report import game_counted_ranks, game_number, left_out_note
from medina.tournament.runner import sprt_status, standings
from medina.web import (
    BotGame,
    HttpServer,
    LadderProbe,
    PerBot,
    RatingStep,
    StandingRow,
    Standings,
    StandingsProvider,
    build_app,
    records_viewer,
    serve_viewer,
)
from medina.web.remote import RemoteArena
from medina.web.server import client_pacing, connections_per_client
from medina.web.shelf import record_id_of
from medina.wire.shared.tls import ClientTls

from .errors import CommandError
from .options import (
    add_client_limit_options,
    add_client_tls_options,
    add_organiser_token_option,
    client_limits,
    client_tls_from_args,
    existing_database,
    is_loopback,
)
from .reach import tls_mismatch

log = logging.getLogger("medina.cli")

DEFAULT_WEB_PORT = 8080
#: Open files the viewer keeps free of connections (records read, logs, the gRPC channel).
WEB_FILES_KEPT = 64


def add_parser(sub: Any) -> None:
    """Register the command."""
    p: argparse.ArgumentParser = sub.add_parser(
        "web",
        help="follow live matches and browse records, replays and standings in a web "
        "browser (read-only)",
    )
    p.add_argument(
        "--records",
        default="records",
        help="directory of match records (with --server it may not exist yet: the server "
        "creates it with its first match), or one record file to replay",
    )
    p.add_argument("--host", default="127.0.0.1", help="listen address (default 127.0.0.1)")
    p.add_argument(
        "--http",
        type=int,
        default=DEFAULT_WEB_PORT,
        metavar="PORT",
        help=f"HTTP port (default {DEFAULT_WEB_PORT}; 0: any free port)",
    )
    p.add_argument(
        "--db",
        help="a tournament database (URL or SQLite file) whose standings /standings shows",
    )
    p.add_argument("--tournament", help="which tournament of --db (default: the newest)")
    p.add_argument(
        "--ladder-db",
        metavar="URL",
        help="a ladder database whose standings /standings shows instead (updated live)",
    )
    add_min_games_option(p, "with --ladder-db: ")
    p.add_argument(
        "--server",
        metavar="HOST:PORT",
        help="also list a running arena's matches and follow them live (as a spectator)",
    )
    add_organiser_token_option(p, "organiser token of --server, if it asks for one")
    add_client_tls_options(p, starts_bots=False)
    add_client_limit_options(p, "open live-page event streams")
    p.set_defaults(run=run)


def tournament_standings(db: str, name: str | None) -> StandingsProvider:
    """A standings provider reading a tournament database on each page view;
    CommandError when the database or the tournament cannot be opened."""
    existing_database(db)
    try:
        store = TournamentStore(db)
        store.tournament(name)
    except StoreError as exc:
        raise CommandError(str(exc) + _ladder_hint(db)) from None

    def provide() -> Standings:
        row = store.tournament(name)
        st = standings(store, row.id)
        counts = ", ".join(f"{n} {s}" for s, n in sorted(store.counts(row.id).items()))
        cfg = _stored_config(row.config)
        return Standings(
            title=f"Tournament {row.name}"
            + (left_out_note(cfg.dropped) if cfg is not None else ""),
            rows=tuple(
                StandingRow(
                    bot=r.bot,
                    rating=r.mu,
                    low=r.rating_interval[0],
                    high=r.rating_interval[1],
                    games=r.games,
                    terminations=dict(r.faults),
                    mean_rank=r.mean_rank if r.games else None,
                    win_share=r.win_share if r.games else None,
                    win_low=r.win_ci[0],
                    win_high=r.win_ci[1],
                    ordinal=r.ordinal,
                )
                for r in st.rows
            ),
            note=f"{st.games} games counted ({counts}); status {row.status}. Rating: openskill "
            "Plackett-Luce mu, interval mu -/+ 1.96 sigma; sorted by mu - 3 sigma."
            + _sprt_note(store, row.id, cfg),
            games=_games_by_bot(store.results(row.id)),
            head_to_head=st.head_to_head,
            history={
                r.bot: tuple(
                    RatingStep(
                        game_number(p.game),
                        p.mu,
                        p.mu - Z95 * p.sigma,
                        p.mu + Z95 * p.sigma,
                    )
                    for p in st.history_of(r.bot)
                )
                for r in st.rows
            },
        )

    return provide


def _ladder_hint(db: str) -> str:
    """What to add to "no tournament in DB" when DB is a ladder's ('' otherwise)."""
    try:
        store = LadderStore(db)
        try:
            accounts = store.accounts()
        finally:
            store.engine.dispose()
    except StoreError:
        return ""
    return f": it is a ladder's database (give it as --ladder-db {db})" if accounts else ""


def ladder_standings(db: str, min_games: int = DEFAULT_MIN_GAMES) -> StandingsProvider:
    """A standings provider reading a ladder database on each page view: one row per bot
    version (``name@version``; those with fewer than ``min_games`` rated games provisional,
    after the others), its games linked to their replays, its rating over time;
    CommandError when the database cannot be opened."""
    if "://" not in db and not Path(db).is_file():
        raise CommandError(f"no ladder database at {db}")
    try:
        store = LadderStore(db)
    except StoreError as exc:
        raise CommandError(str(exc)) from None

    def label(bot: str, version: str) -> str:
        return f"{bot}@{version}" if version else bot

    def provide() -> Standings:
        lines = store.lines()
        counts = store.counts()
        by_label = {label(x.bot, x.version): x for x in lines}

        def games(name: str) -> tuple[BotGame, ...]:
            x = by_label[name]
            out: list[BotGame] = []
            for m in store.matches(line_id=x.id, newest_first=True, limit=50):
                if m.status != "finished":
                    continue
                mine = next(s for s in m.seats if s[1] == x.bot and s[2] == x.version)
                out.append(
                    BotGame(
                        number=m.id - 1,
                        variant=f"{m.ruleset} {m.players}p",
                        seats=tuple(label(s[1], s[2]) for s in m.seats),
                        seat=mine[0],
                        rank=mine[4] or 0,
                        total=mine[3] or 0,
                        termination=mine[5] or "",
                        match_id=m.arena_match_id or "",
                    )
                )
            return tuple(out)

        def history(name: str) -> tuple[RatingStep, ...]:
            return tuple(
                RatingStep(n, mu, mu - Z95 * sigma, mu + Z95 * sigma)
                for n, (_mid, _at, mu, sigma) in enumerate(
                    store.history(by_label[name].id), start=1
                )
            )

        # A version's page is linked once it has played (rated or not).
        played = [name for name, x in by_label.items() if x.games or x.aborted]
        return Standings(
            title="Ladder",
            # The rows `ladder standings --all` prints (its ordinal, interval and status): the
            # page shows those that may play, as `ladder standings` does, and every one with
            # ?all=1 (standings_page).
            rows=tuple(
                StandingRow(
                    bot=label(r.line.bot, r.line.version),
                    rating=r.line.mu,
                    low=r.low,
                    high=r.high,
                    games=r.line.games,
                    terminations=dict(r.line.faults),
                    mean_rank=r.line.mean_rank if r.line.games else None,
                    ordinal=r.ordinal,
                    status=r.status,
                    provisional=r.provisional,
                )
                for r in ladder_rows(lines, include_inactive=True, min_games=min_games)
            ),
            note=f"{counts.get('finished', 0)} matches played, "
            f"{counts.get('running', 0) + counts.get('starting', 0)} in play, "
            f"{counts.get('aborted', 0)} aborted. One row per bot version. Rating: openskill "
            "Plackett-Luce mu, interval mu -/+ 1.96 sigma; sorted by mu - 3 sigma"
            + (
                f", versions with fewer than {min_games} rated games (provisional) last"
                if min_games
                else ""
            )
            + ". This page follows the ladder as it plays.",
            games=PerBot(played, games),
            history=PerBot(played, history),
            live=True,
            wins=False,  # the ladder keeps each version's rank sum, not its wins
        )

    return provide


def _stored_config(config: str) -> TournamentConfig | None:
    """A tournament's stored configuration; None when this version cannot read it (the
    standings themselves come from the results)."""
    try:
        return TournamentConfig.from_json(config)
    except (KeyError, TypeError, ValueError):
        return None


def _sprt_note(store: TournamentStore, tid: int, cfg: TournamentConfig | None) -> str:
    """The SPRT's line for an SPRT tournament ('' otherwise)."""
    if cfg is None or cfg.format != "sprt":
        return ""
    return f" {sprt_status(store, tid, cfg).line()}."


def _games_by_bot(results: list[GameRow]) -> dict[str, tuple[BotGame, ...]]:
    out: dict[str, list[BotGame]] = {}
    for g in results:
        names = tuple(s.bot for s in g.seats)
        for s, rank in zip(g.seats, game_counted_ranks(g), strict=True):
            out.setdefault(s.bot, []).append(
                BotGame(
                    number=g.number,
                    variant=f"{g.ruleset} {g.players}p",
                    seats=names,
                    seat=s.seat,
                    rank=rank,
                    total=s.total,
                    termination=s.termination,
                    match_id=g.match_id or "",
                )
            )
    return {bot: tuple(games) for bot, games in out.items()}


def _games(text: str) -> int:
    """An argparse ``type`` for a count of games: a whole number, 0 or more."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of games") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: must be 0 (no provisional rule) or more")
    return value


def add_min_games_option(p: argparse.ArgumentParser, where: str = "") -> None:
    """``--min-games N``: the rated games a ladder version plays before it is ranked among
    the established ones (``where``: what the option goes with, for the help)."""
    p.add_argument(
        "--min-games",
        type=_games,
        default=DEFAULT_MIN_GAMES,
        metavar="N",
        help=f"{where}a version with fewer rated games is provisional, listed after the "
        f"established ones (default {DEFAULT_MIN_GAMES}; 0: none is provisional)",
    )


def add_http_options(p: argparse.ArgumentParser, default_host: str = "--host") -> None:
    """``--http PORT`` and ``--http-host`` for commands that run a server; ``default_host``
    is what the help names as the viewer's address without ``--http-host`` (an option of the
    command, or the address itself for a command without ``--host``)."""
    p.add_argument(
        "--http",
        type=int,
        metavar="PORT",
        help="also serve the web viewer (matches, live pages, replays, /metrics) on this "
        "port (0: any free port); read-only",
    )
    p.add_argument("--http-host", help=f"listen address of the viewer (default: {default_host})")


def ladder_probe(ladder: Ladder) -> LadderProbe:
    """What the ladder's metrics read of ``ladder`` when scraped."""
    return LadderProbe(
        bots=lambda: float(len(ladder.sessions)),
        playing=lambda: float(len(ladder.running)),
        formed=lambda: float(ladder.formed),
        rated=lambda: float(ladder.rated),
        aborted=lambda: float(ladder.aborted),
        refused=lambda: dict(ladder.refusals.by_reason),
        database_unwritable=lambda: float(ladder.outage.problem is not None),
        held=lambda: float(len(ladder.held)),
    )


async def start_viewer(
    running: RunningServer,
    host: str,
    port: int,
    standings: StandingsProvider | None = None,
    ladder: LadderProbe | None = None,
) -> Callable[[], Awaitable[None]]:
    """Start the viewer beside ``running`` (with ``ladder``, the ladder's metrics too), print
    its URL, and return how to stop it."""
    try:
        http = await serve_viewer(running, host, port, standings=standings, ladder=ladder)
    except OSError as exc:
        await running.stop(1)
        raise CommandError(str(exc)) from None
    print(f"medina-arena viewer on {http.url}/", flush=True)
    if not is_loopback(host):
        # Said once it listens: with --http 0 the port is known only then.
        log.warning(
            "the viewer on %s is plain HTTP: anyone who reaches it sees every match as a "
            "spectator does (it is read-only); use a TLS proxy in front of it",
            http.url,
        )
    return http.stop


def run(args: argparse.Namespace) -> int:
    """Serve the records until SIGTERM/SIGINT."""
    records = Path(args.records)
    if not records.exists() and not args.server:
        raise CommandError(
            f"--records {records} does not exist (give a records directory or a record file)"
        )
    if records.exists() and not (records.is_dir() or records.is_file()):
        raise CommandError(f"--records {records} is neither a directory nor a record file")
    if args.db and args.ladder_db:
        raise CommandError("--db (a tournament) and --ladder-db: /standings shows one; give one")
    slots = ClientSlots.for_limits(client_limits(args))
    provider = (
        ladder_standings(args.ladder_db, args.min_games)
        if args.ladder_db
        else tournament_standings(args.db, args.tournament)
        if args.db
        else None
    )
    tls = client_tls_from_args(args)
    return asyncio.run(
        _serve(
            records, args.host, args.http, provider, args.server, args.organiser_token, tls, slots
        )
    )


async def _serve(
    records: Path,
    host: str,
    port: int,
    provider: StandingsProvider | None = None,
    server: str | None = None,
    organiser_token: str | None = None,
    tls: ClientTls | None = None,
    slots: ClientSlots | None = None,
) -> int:
    # A server that is down may come up later (its matches are listed then); one that is
    # dialled the wrong way (TLS or not, a certificate refused) never would.
    why = await tls_mismatch(server, tls) if server else None
    if why is not None:
        raise CommandError(why)
    remote = RemoteArena(server, organiser_token, tls) if server else None
    # The open-files limit bounds the connections (past it, a 503 rather than a process
    # that cannot accept and logs so at every turn of its loop); what is kept below it is
    # for the records a page reads, the logs and the channel to --server.
    limit = open_files_limit()
    http = HttpServer(
        build_app(records_viewer(records, standings=provider, remote=remote, slots=slots)),
        host,
        port,
        max_connections=None if limit is None else max(1, limit - WEB_FILES_KEPT),
        per_client=0 if slots is None else connections_per_client(slots.limit),
        loopback_too=slots is not None and slots.loopback,
        pacing=None if slots is None else client_pacing(slots.limit),
    )
    try:
        await http.start()
    except OSError as exc:
        raise CommandError(str(exc)) from None
    if records.is_file():
        where = f"record {records}"
    else:
        where = f"records in {records}" + ("" if records.is_dir() else " (none yet)")
    where += f", matches of {server}" if server else ""
    print(f"medina-arena viewer on {http.url}/ ({where})", flush=True)
    if records.is_file():
        print(f"replay: {http.url}/replay/{record_id_of(records)}", flush=True)
    try:
        await wait_for_signal()
    finally:
        await http.stop()
        if remote is not None:
            await remote.close()
    return 0
