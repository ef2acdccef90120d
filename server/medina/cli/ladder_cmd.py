"""``medina-arena ladder`` (serve, standings, export, pairs, recompute, backup) and
``medina-arena bots`` (add, list, revoke, rotate, unsuspend, void): a standing arena where
bots with accounts are matched continuously and rated (docs/ladder.md)."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import logging
import os
import sys
import time
from pathlib import Path
from typing import Any

from medina.boundary.spreadsheet import csv_rows
from medina.boundary.stopping import stop_signals_caught
from medina.boundary.terminal import control_character, printable
from medina.ladder import accounts, pairs, ratings
from medina.ladder.house import (
    HouseBot,
    HouseNameTaken,
    check_house,
    drain_house,
    parse_house,
    start_house,
    stop_house,
)
from medina.ladder.matchmaker import Offer
from medina.ladder.recompute import compare, replay
from medina.ladder.serve import LadderServerConfig, start_ladder
from medina.ladder.service import LadderConfig
from medina.ladder.standings import as_csv, as_json, as_table
from medina.referee.config import LIMIT_MS, MatchSettings
from medina.referee.errors import ConfigError
from medina.rpc.common.admission import AdmissionLimits, open_files_limit
from medina.rpc.common.collector import Collector
from medina.storage.ladder import BotRevokedError, LadderStore, StoreError
from medina.wire.shared.addresses import host_port
from medina.wire.shared.tls import ClientTls, TlsFileError, client_tls, names, names_host

from . import backup_cmd, event_loop, ladder_demo, open_files
from .errors import CommandError
from .options import (
    add_client_limit_options,
    add_organiser_token_option,
    add_records_reserve_option,
    add_server_tls_options,
    client_limits,
    is_loopback,
    records_directory,
    seconds,
    server_tls,
)
from .output import STDOUT, write_output
from .reach import ARENA_FLAGS, tls_mismatch
from .web_cmd import (
    add_http_options,
    add_min_games_option,
    ladder_probe,
    ladder_standings,
    start_viewer,
)

DEFAULT_DB = "ladder.db"
#: The longest time a seconds option of `ladder serve` takes (an hour, as the arena's clocks).
LIMIT_S = LIMIT_MS / 1000

log = logging.getLogger("medina.cli")


def add_parser(sub: Any) -> None:
    """Register ``ladder`` and ``bots``."""
    ladder: argparse.ArgumentParser = sub.add_parser(
        "ladder", help="a standing ladder: bots connect with a key, are matched and rated"
    )
    lsub = ladder.add_subparsers(dest="ladder_command", required=True)

    serve = lsub.add_parser("serve", help="run a ladder server (lobby + arena)")
    _db(serve)
    s = LadderServerConfig(db=DEFAULT_DB)  # its defaults
    serve.add_argument("--host", default=s.host, help=f"listen address (default {s.host})")
    serve.add_argument(
        "--port", type=int, default=s.port, help=f"lobby port (default {s.port}; 0: any free port)"
    )
    serve.add_argument(
        "--arena-port",
        type=int,
        default=s.arena_port,
        help=f"the in-process arena's port (default {s.arena_port}; 0: any free)",
    )
    serve.add_argument(
        "--arena",
        metavar="HOST:PORT",
        help="drive this arena (a `medina-arena serve`) instead of one in this process",
    )
    serve.add_argument(
        "--arena-public",
        metavar="HOST:PORT",
        help="the arena address bots are told (default: the arena's own address)",
    )
    serve.add_argument(
        "--records",
        default=str(s.records_dir),
        help=f"records directory (in-process arena; default {s.records_dir})",
    )
    add_records_reserve_option(serve)
    add_server_tls_options(serve)
    serve.add_argument(
        "--arena-tls-ca",
        metavar="FILE",
        help="with --arena: the CA (PEM) of an arena that serves TLS",
    )
    serve.add_argument(
        "--arena-tls-cert",
        metavar="FILE",
        help="with --arena: this ladder's client certificate (PEM) for an arena with mutual TLS",
    )
    serve.add_argument(
        "--arena-tls-key", metavar="FILE", help="with --arena: the key of --arena-tls-cert"
    )
    add_organiser_token_option(serve, "bearer token for account calls and the arena")
    serve.add_argument(
        "--offer",
        action="append",
        metavar="RULESET:PLAYERS:DECISION_MS[:WEIGHT]",
        help="a kind of match to form (repeatable; default medina-v2:2:1000 and "
        "medina-v2:4:1000, equal weights)",
    )
    d = LadderConfig()
    serve.add_argument(
        "--exploration",
        type=float,
        default=d.exploration,
        help="chance of random opponents instead of the nearest in rating "
        f"(default {d.exploration})",
    )
    serve.add_argument(
        "--same-owner", action="store_true", help="let one owner's bots play each other"
    )
    serve.add_argument(
        "--max-matches-per-bot",
        type=int,
        default=d.max_matches_per_bot,
        help=f"matches at once per bot (default {d.max_matches_per_bot})",
    )
    serve.add_argument(
        "--max-matches-per-owner", type=int, help="matches at once per owner (default: no cap)"
    )
    serve.add_argument(
        "--suspend-after",
        type=int,
        default=d.suspend_after,
        help=f"faults among a version's last --suspend-window matches that suspend it "
        f"(default {d.suspend_after}; 0: never)",
    )
    serve.add_argument(
        "--suspend-window",
        type=int,
        default=d.suspend_window,
        help=f"matches --suspend-after counts over (default {d.suspend_window})",
    )
    serve.add_argument(
        "--heartbeat-s",
        type=seconds(LIMIT_S),
        default=d.heartbeat_interval_s,
        help=f"seconds between lobby heartbeats (default {d.heartbeat_interval_s:g}; a bot "
        "that misses three is no longer matched)",
    )
    serve.add_argument(
        "--lease-s",
        type=seconds(LIMIT_S),
        default=d.lease_s,
        help=f"seconds a silent ladder server keeps its matches and bots (default {d.lease_s:g}); "
        "after that another server aborts its unfinished matches",
    )
    serve.add_argument(
        "--hello-timeout-s",
        type=seconds(LIMIT_S),
        default=d.hello_timeout_s,
        help=f"seconds a lobby stream has to send LobbyHello (default {d.hello_timeout_s:g})",
    )
    serve.add_argument(
        "--connect-timeout-s",
        type=seconds(LIMIT_S),
        default=d.connect_timeout_s,
        help=f"seconds a matched bot has to join its match before it forfeits as a no-show "
        f"(a fault; default {d.connect_timeout_s:g})",
    )
    add_client_limit_options(
        serve, "open Play/Watch streams on the arena, and lobby streams not welcomed yet,"
    )
    serve.add_argument("--seed", type=int, help="seed of the matchmaker's randomness")
    serve.add_argument(
        "--house",
        action="append",
        metavar="[NAME=]BOT [OPTIONS]",
        help="a house bot the ladder runs itself, e.g. 'greedy' or 'boss=champion' "
        "(repeatable; account house-<bot> unless named; owner 'house')",
    )
    add_http_options(serve)
    add_min_games_option(serve, "GetStandings' and the --http page's standings: ")
    serve.add_argument(
        "--server-id",
        help="this server's name in the database (default HOST:PORT of the lobby: the same "
        "after a restart, so a restarted server takes its bots back at once)",
    )
    serve.set_defaults(run=_serve)

    standings = lsub.add_parser("standings", help="the standings")
    _db(standings)
    standings.add_argument(
        "--format", choices=("table", "csv", "json"), default="table", help="output format"
    )
    standings.add_argument(
        "--all", action="store_true", help="include suspended and revoked bots' lines"
    )
    add_min_games_option(standings)
    standings.add_argument(
        "--follow", type=float, metavar="SECONDS", help="print again every SECONDS until Ctrl-C"
    )
    standings.set_defaults(run=_standings)

    export = lsub.add_parser("export", help="the standings and every match, as CSV or JSON")
    _db(export)
    export.add_argument("--format", choices=("csv", "json"), default="json", help="format")
    export.add_argument("--out", help=f"file to write ('{STDOUT}' or left out: stdout)")
    add_min_games_option(export, "the standings: ")
    export.set_defaults(run=_export)

    pairs_cmd = lsub.add_parser(
        "pairs",
        help="head-to-head of the rating lines, flagging pairs that look like a rating farmed",
    )
    _db(pairs_cmd)
    pairs_cmd.add_argument(
        "--min-games",
        type=int,
        default=pairs.DEFAULT_MIN_GAMES,
        metavar="N",
        help="games together from which a pair is flagged, and listed without --all "
        f"(default {pairs.DEFAULT_MIN_GAMES})",
    )
    pairs_cmd.add_argument(
        "--format", choices=("table", "csv", "json"), default="table", help="output format"
    )
    pairs_cmd.add_argument(
        "--all", action="store_true", help="every pair that met, however few their games"
    )
    pairs_cmd.set_defaults(run=_pairs)

    ladder_demo.add_parser(lsub)

    recompute = lsub.add_parser(
        "recompute", help="check the stored ratings against a recomputation from the results"
    )
    _db(recompute)
    recompute.set_defaults(run=_recompute)

    backup = lsub.add_parser(
        "backup",
        help="copy the database while the ladder runs: one consistent snapshot, checked "
        "(SQLite; PostgreSQL: pg_dump)",
    )
    _db(backup)
    backup_cmd.add_arguments(backup, DEFAULT_DB)
    backup.set_defaults(run=lambda args: backup_cmd.run(args.db, "ladder", args))

    bots: argparse.ArgumentParser = sub.add_parser("bots", help="ladder bot accounts")
    bsub = bots.add_subparsers(dest="bots_command", required=True)
    add = bsub.add_parser("add", help="create an account and print its key (shown once)")
    _db(add)
    add.add_argument("name", help="the bot's name (letters, digits, . _ -)")
    add.add_argument("--owner", help="who runs it (default: the bot's name)")
    add.set_defaults(run=_bots_add)
    ls = bsub.add_parser("list", help="every account (never a key)")
    _db(ls)
    ls.set_defaults(run=_bots_list)
    revoke = bsub.add_parser("revoke", help="revoke a bot's key for good")
    _db(revoke)
    revoke.add_argument("name", help="the bot's name, as `bots list` shows it")
    revoke.set_defaults(run=_bots_revoke)
    rotate = bsub.add_parser("rotate", help="give a bot a new key (the old one stops at once)")
    _db(rotate)
    rotate.add_argument("name", help="the bot's name, as `bots list` shows it")
    rotate.set_defaults(run=_bots_rotate)
    unsuspend = bsub.add_parser(
        "unsuspend", help="let a suspended version of a bot play again (its rating goes on)"
    )
    _db(unsuspend)
    unsuspend.add_argument("name", help="the bot's name, as `bots list` shows it")
    unsuspend.add_argument("version", help="the suspended version, as `bots list` shows it")
    unsuspend.set_defaults(run=_bots_unsuspend)
    void = bsub.add_parser(
        "void",
        help="unrate every match a bot (one version of it) played and rerate every line "
        "without them (does not revoke it)",
    )
    _db(void)
    void.add_argument("name", help="the bot's name, as `bots list` shows it")
    void.add_argument("version", nargs="?", help="only this version (default: all of them)")
    void.add_argument(
        "--reason", required=True, help="why, kept with each match ('voided: REASON')"
    )
    void.set_defaults(run=_bots_void)


def _db(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--db",
        default=os.environ.get("MEDINA_LADDER_DB", DEFAULT_DB),
        help=f"database: a file (SQLite) or postgresql://... (default {DEFAULT_DB}, "
        "env MEDINA_LADDER_DB)",
    )


def _store(args: argparse.Namespace, *, create: bool = False) -> LadderStore:
    """The ladder's database; unless ``create`` (bots add, ladder serve), a database file that
    does not exist is refused instead of made empty (a mistyped --db read as no bots)."""
    if not create and "://" not in args.db and not Path(args.db).exists():
        raise CommandError(
            f"no ladder database at {args.db} (`bots add` or `ladder serve` creates it; "
            "--db or MEDINA_LADDER_DB names another)"
        )
    try:
        return LadderStore(args.db)
    except StoreError as exc:
        raise CommandError(str(exc)) from None


def parse_offer(text: str) -> Offer:
    """``RULESET:PLAYERS:DECISION_MS[:WEIGHT]`` as an Offer; CommandError naming the fault."""
    parts = text.split(":")
    if len(parts) not in (3, 4):
        raise CommandError(f"--offer {text!r}: expected RULESET:PLAYERS:DECISION_MS[:WEIGHT]")
    try:
        players, decision_ms = int(parts[1]), int(parts[2])
        weight = float(parts[3]) if len(parts) == 4 else 1.0
    except ValueError:
        raise CommandError(f"--offer {text!r}: PLAYERS and DECISION_MS are integers") from None
    if weight <= 0:
        raise CommandError(f"--offer {text!r}: the weight must be positive")
    try:
        MatchSettings(ruleset=parts[0], players=players, seed=0)
    except ConfigError as exc:
        raise CommandError(f"--offer {text!r}: {exc}") from None
    if decision_ms <= 0:
        raise CommandError(f"--offer {text!r}: DECISION_MS must be positive")
    return Offer(parts[0], players, decision_ms, weight)


def _serve(args: argparse.Namespace) -> int:
    if args.http is not None and args.arena is not None:
        raise CommandError(
            "--http serves the viewer of the ladder's own arena; with --arena, run "
            "`medina-arena web --server ARENA --ladder-db DB` beside it"
        )
    wildcard = args.host in ("0.0.0.0", "::")
    if args.arena is None and wildcard and not args.arena_public:
        raise CommandError(
            f"--host {args.host} listens everywhere: say which address bots reach the arena "
            "at with --arena-public HOST:PORT (and the arena's own port with --arena-port)"
        )
    if not args.organiser_token and not is_loopback(args.host):
        raise CommandError(
            "a ladder on a non-loopback address needs --organiser-token (its account calls "
            "hand out keys)"
        )
    if args.limit_loopback and not args.organiser_token:
        raise CommandError(
            "--limit-loopback needs --organiser-token: the ladder's own streams to its arena "
            "come from this machine too, and only the token tells them from a stranger's"
        )
    if args.arena is None and args.arena_public and args.arena_port == 0:
        raise CommandError(
            f"--arena-public {args.arena_public} is where bots dial the arena, but its own port "
            "is picked at random (--arena-port 0): give --arena-port the port that address "
            "reaches"
        )
    tls = server_tls(args)
    if tls.cert is not None and args.arena is None:
        _check_arena_name(tls.cert, args)
    arena_tls = _arena_tls(args)
    if tls.cert is None and not is_loopback(args.host):
        log.warning(
            "serving the ladder on %s without TLS: bot keys and seat tokens travel in clear "
            "text (--tls-cert and --tls-key; see docs/operations.md)",
            args.host,
        )
    offers = tuple(parse_offer(o) for o in args.offer) if args.offer else LadderConfig().offers
    try:
        house = tuple(parse_house(h) for h in args.house or ())
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    if house and arena_tls is not None:
        raise CommandError(
            "--house with --arena-tls-ca: house bots hold no certificate for a TLS arena; "
            "run them as ordinary bots (python -m medina_client --bot-key ... --tls-ca ...)"
        )
    if len({h.name for h in house}) != len(house):
        raise CommandError("--house: two house bots with one name; name them (NAME=BOT)")
    try:
        config = LadderConfig(
            offers=offers,
            exploration=args.exploration,
            same_owner=args.same_owner,
            max_matches_per_bot=args.max_matches_per_bot,
            max_matches_per_owner=args.max_matches_per_owner,
            suspend_after=args.suspend_after,
            suspend_window=args.suspend_window,
            heartbeat_interval_s=args.heartbeat_s,
            heartbeat_timeout_s=3 * args.heartbeat_s,
            lease_s=args.lease_s,
            hello_timeout_s=args.hello_timeout_s,
            connect_timeout_s=args.connect_timeout_s,
            seed=args.seed,
        )
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    if not args.records_reserve_mb >= 0:
        raise CommandError(f"--records-reserve-mb {args.records_reserve_mb}: must be 0 or more")
    limits = client_limits(args)
    server = LadderServerConfig(
        db=args.db,
        host=args.host,
        port=args.port,
        arena=args.arena,
        arena_port=args.arena_port,
        arena_public=args.arena_public,
        # an arena of its own writes the records here; a driven one keeps its own
        records_dir=Path(args.records) if args.arena else records_directory(args.records),
        records_reserve_mb=args.records_reserve_mb,
        organiser_token=args.organiser_token,
        ladder=config,
        limits=limits,
        server_id=args.server_id,
        tls_cert=tls.cert,
        tls_key=tls.key,
        tls_client_ca=tls.client_ca,
        arena_tls=arena_tls,
        min_games=args.min_games,
    )
    open_files.raise_open_files_limit()
    if args.arena is None:  # an arena of its own: its matches' open files are this process's
        server = dataclasses.replace(
            server, admission=AdmissionLimits(max_open_files=open_files_limit())
        )
        open_files.report_budget(server.admission, max_queued_given=False)
    http_host = args.http_host or args.host
    return event_loop.run(_run(server, args.http, http_host, house))


async def _run(
    config: LadderServerConfig,
    http: int | None,
    http_host: str,
    house: tuple[HouseBot, ...],
) -> int:
    if config.arena is not None:
        why = await tls_mismatch(config.arena, config.arena_tls, ARENA_FLAGS)
        if why is not None:
            raise CommandError(why)
    with stop_signals_caught() as stop:
        try:
            running = await start_ladder(config)
        except (StoreError, OSError) as exc:
            raise CommandError(str(exc)) from None
        try:
            await check_house(running.store, house)
        except HouseNameTaken as exc:
            await running.stop()
            raise CommandError(str(exc)) from None
        # A ladder with an arena of its own referees its matches here: collect as `serve` does.
        async with Collector():
            print(
                f"medina-arena ladder listening on {config.host}:{running.port} "
                f"(arena {running.arena_address}, database {running.store.safe_url})",
                flush=True,
            )
            stop_viewer = None
            if http is not None and running.arena is not None:
                stop_viewer = await start_viewer(
                    running.arena,
                    http_host,
                    http,
                    standings=ladder_standings(config.db, config.min_games),
                    ladder=ladder_probe(running.ladder),
                )
            near = "127.0.0.1" if config.host in ("0.0.0.0", "::") else config.host
            # With TLS the house bots use the lobby's loopback listener, in clear.
            lobby = f"127.0.0.1:{running.local_port}" if config.tls else f"{near}:{running.port}"
            procs = await start_house(running.store, lobby, house, config.records_dir / "house")
            await stop.wait()
            # At WARNING, the default level: what the stop does to the matches in play.
            log.warning(
                "%s: the ladder stops forming matches; %d in play%s",
                stop.first,
                len(running.ladder.running),
                f" (the house bots finish theirs first; {stop.first} again stops now)"
                if procs
                else "",
            )
            drain = asyncio.ensure_future(drain_house(running.ladder, procs))
            again = asyncio.ensure_future(stop.again.wait())
            await asyncio.wait([drain, again], return_when=asyncio.FIRST_COMPLETED)
            again.cancel()
            if not drain.done():
                drain.cancel()
                await stop_house(procs, 0)
            if running.ladder.running:
                log.warning(
                    "%d ladder match(es) still in play are aborted, not rated",
                    len(running.ladder.running),
                )
            if stop_viewer is not None:
                await stop_viewer()
            await running.stop()
    return 0


def _check_arena_name(cert: bytes, args: argparse.Namespace) -> None:
    """CommandError when the certificate does not name the host bots are told to play at
    (``--arena-public``'s, else ``--host``): every bot's TLS check would refuse it."""
    public = host_port(args.arena_public) if args.arena_public else None
    told = public[0] if public is not None else args.host
    try:
        if names_host(cert, told):
            return
        dns, ips = names(cert)
    except ValueError:
        raise CommandError(f"TLS certificate {args.tls_cert} is malformed") from None
    listed = ", ".join(dns + ips) or "nothing"
    raise CommandError(
        f"bots are told to play at {told}, which the TLS certificate {args.tls_cert} does not "
        f"name (it names {listed}): set --arena-public to a name it lists, with the arena's "
        "port (--arena-port), or use a certificate that names it"
    )


def _arena_tls(args: argparse.Namespace) -> ClientTls | None:
    """How the ladder dials ``--arena`` (None: in clear), checked as an organiser's
    ``--tls-*`` options are; CommandError naming a bad file or an option without --arena."""
    named = [o for o in ("tls_ca", "tls_cert", "tls_key") if getattr(args, f"arena_{o}")]
    if not named:
        return None
    if args.arena is None:
        raise CommandError("--arena-tls-ca/--arena-tls-cert/--arena-tls-key go with --arena")
    try:
        return client_tls(
            args.arena_tls_ca, args.arena_tls_cert, args.arena_tls_key, prefix="--arena-tls"
        )
    except TlsFileError as exc:
        raise CommandError(str(exc)) from None


def _standings(args: argparse.Namespace) -> int:
    store = _store(args)
    render = {"table": as_table, "csv": as_csv, "json": as_json}[args.format]
    while True:
        lines = store.lines()
        counts = store.counts()
        text = render(lines, include_inactive=args.all, min_games=args.min_games)
        if args.format == "table":
            text += (
                f"\n{counts.get('finished', 0)} matches finished, "
                f"{counts.get('running', 0) + counts.get('starting', 0)} in play, "
                f"{counts.get('aborted', 0)} aborted"
                + (f", {counts['voided']} voided" if counts.get("voided") else "")
            )
        print(text, flush=True)
        if args.follow is None:
            return 0
        try:
            time.sleep(args.follow)  # the refresh period the user asked for
        except KeyboardInterrupt:
            return 0
        print()


def _export(args: argparse.Namespace) -> int:
    import json

    store = _store(args)
    lines, matches = store.lines_and_matches()
    if args.format == "json":
        text = json.dumps(
            {
                "standings": json.loads(as_json(lines, min_games=args.min_games)),
                "matches": [
                    {
                        "id": m.id,
                        "server": m.server,
                        "ruleset": m.ruleset,
                        "players": m.players,
                        "decision_ms": m.decision_ms,
                        "seed": m.seed,
                        "status": m.status,
                        "ending": m.ending,
                        "arena_match_id": m.arena_match_id,
                        "record_path": m.record_path,
                        "created_at": m.created_at,
                        "finished_at": m.finished_at,
                        "rated_seq": m.rated_seq,
                        "detail": m.detail,
                        "seats": [
                            {
                                "seat": s[0],
                                "bot": s[1],
                                "version": s[2],
                                "total": s[3],
                                "rank": s[4],
                                "termination": s[5],
                                "mu_after": s[6],
                            }
                            for s in m.seats
                        ],
                    }
                    for m in matches
                ],
            },
            indent=2,
        )
    else:
        table = csv_rows(
            ["match", "status", "ending", "rated_seq", "ruleset", "players", "seat", "bot",
             "version", "total", "rank", "termination", "mu_after", "record_path", "detail"],
            (
                [m.id, m.status, m.ending, m.rated_seq, m.ruleset, m.players, *s[:7],
                 m.record_path, m.detail]
                for m in matches
                for s in m.seats
            ),
        )  # fmt: skip
        text = "# standings\n" + as_csv(lines, min_games=args.min_games) + "# matches\n" + table
    write_output(text + "\n", args.out, "--out")
    return 0


def _pairs(args: argparse.Namespace) -> int:
    if args.min_games < 1:
        raise CommandError(f"--min-games {args.min_games}: must be 1 or more")
    store = _store(args)
    results, lines = store.rated_state()
    found = pairs.pairs(results, lines, min_games=args.min_games)
    if not args.all:
        found = [p for p in found if p.games >= args.min_games]
    render = {"table": pairs.as_table, "csv": pairs.as_csv, "json": pairs.as_json}[args.format]
    text = render(found)
    if args.format == "table":
        flagged = sum(1 for p in found if p.suspicious)
        text += (
            f"\n{len(found)} pair(s) listed"
            + ("" if args.all else f" (those with {args.min_games} or more games together)")
            + f", {flagged} flagged, from {len(results)} rated matches"
        )
    print(text)
    return 0


def _recompute(args: argparse.Namespace) -> int:
    store = _store(args)
    n, diffs = compare(store)
    if not diffs:
        print(f"the stored ratings equal a recomputation from {n} rated matches")
        return 0
    for d in diffs:
        print(
            f"{d.bot} {d.version!r}: stored mu {d.stored[0]:.6f} sigma {d.stored[1]:.6f} "
            f"games {d.stored[2]}; recomputed {d.recomputed[0]:.6f} {d.recomputed[1]:.6f} "
            f"{d.recomputed[2]}"
        )
    print(f"{len(diffs)} line(s) differ from a recomputation from {n} rated matches")
    return 1


def _bots_add(args: argparse.Namespace) -> int:
    try:
        name = accounts.check_name(args.name)
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    try:
        owner = accounts.check_owner(args.owner or name, "--owner")
        accounts.check_not_house(name, owner)
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    store = _store(args, create=True)
    made = accounts.new_key()
    try:
        store.add_bot(name, owner, made.key_id, made.salt, made.digest)
    except StoreError as exc:
        raise CommandError(str(exc)) from None
    print(made.key)
    print(f"bot {name!r} (owner {owner!r}): the key above is shown once", file=sys.stderr)
    return 0


#: The newest versions `bots list` shows of each bot (the count of the older ones is said).
MAX_VERSIONS_LISTED = 10


#: `bots list` of a bot with no version (rating line) yet.
NO_VERSION_YET = "none yet"
#: `bots list` of the version line of a bot that names no version: '' is what `bots unsuspend`
#: takes for it.
NO_VERSION_NAMED = "'' (no version named)"


def _version_shown(version: str) -> str:
    """A version as `bots list` shows it: the bot's own text made printable, the empty one
    said in words."""
    return printable(version) or NO_VERSION_NAMED


def _bots_list(args: argparse.Namespace) -> int:
    store = _store(args)
    rows = store.accounts()
    if not rows:
        print("no bots")
        return 0
    for a in rows:
        # Versions are what bots said of themselves: any text, and any number of them.
        shown = [_version_shown(v) for v in a.versions[-MAX_VERSIONS_LISTED:]]
        more = len(a.versions) - len(shown)
        versions = (f"({more} older), " if more else "") + ", ".join(shown) or NO_VERSION_YET
        print(f"{a.name:<20} owner {a.owner:<16} {a.inactive or 'active':<10} versions: {versions}")
        for version, why in a.suspended.items():
            print(f"{'':<20} version {_version_shown(version)} suspended: {printable(why)}")
    return 0


def _bots_revoke(args: argparse.Namespace) -> int:
    store = _store(args)
    try:
        store.revoke(args.name)
    except StoreError as exc:
        raise CommandError(str(exc)) from None
    print(
        f"bot {args.name!r}: key revoked (its lobby streams end within a second, and its "
        "matches in play are called off unrated)"
    )
    return 0


#: The exit status of a command that had nothing to do (an unsuspend of a version not
#: suspended, or of a revoked bot's): a script sees the bot will not play (again).
NOTHING_DONE = 1


def _bots_unsuspend(args: argparse.Namespace) -> int:
    store = _store(args)
    try:
        lifted = store.unsuspend(args.name, args.version)
    except BotRevokedError as exc:
        print(str(exc), file=sys.stderr)
        return NOTHING_DONE
    except StoreError as exc:
        raise CommandError(str(exc)) from None
    shown = f"bot {args.name!r} version {printable(args.version)!r}"
    print(f"{shown}: may play again" if lifted else f"{shown} was not suspended: nothing done")
    return 0 if lifted else NOTHING_DONE


def _bots_void(args: argparse.Namespace) -> int:
    reason = args.reason.strip()
    if not reason:
        raise CommandError("--reason is empty: say why the matches are voided")
    if (found := control_character(reason)) is not None:
        raise CommandError(f"--reason {reason!r} holds a control character ({found})")
    store = _store(args)
    initial = (ratings.INITIAL.mu, ratings.INITIAL.sigma)
    try:
        done = store.void(args.name, args.version, reason, replay, initial)
    except StoreError as exc:
        raise CommandError(str(exc)) from None
    which = f"bot {args.name!r}" + (
        "" if args.version is None else f" version {printable(args.version)!r}"
    )
    print(f"{which}: {done.matches} rated match(es) voided ('voided: {printable(reason)}')")
    for bot, version, before, after in done.changed:
        print(
            f"  {printable(bot)} {printable(version)!r}: ordinal "
            f"{ratings.ordinal(*before[:2]):.2f} -> {ratings.ordinal(*after[:2]):.2f}, "
            f"games {before[2]} -> {after[2]}"
        )
    print(
        f"{len(done.changed)} line(s) rerated from the rated matches left. The bot is not "
        "revoked: `bots revoke` ends it. A running ladder matches on the new ratings from "
        "each bot's next connection or result."
    )
    return 0


def _bots_rotate(args: argparse.Namespace) -> int:
    store = _store(args)
    made = accounts.new_key()
    try:
        store.set_key(args.name, made.key_id, made.salt, made.digest)
    except StoreError as exc:
        raise CommandError(str(exc)) from None
    print(made.key)
    print(
        f"bot {args.name!r}: the old key stops working now; a lobby stream opened with it "
        "ends within a second",
        file=sys.stderr,
    )
    return 0
