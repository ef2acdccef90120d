"""``medina-arena tournament standings|games|export``: a tournament's standings, games and
SPRT as tables, CSV and JSON; and the helpers every tournament command uses to find its file,
output directory and database."""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from medina.storage.tournaments import StoreError, TournamentStore
from medina.tournament import config as tconfig
from medina.tournament import report
from medina.tournament.audit import audit
from medina.tournament.runner import sprt_status, standings

from .errors import CommandError
from .options import existing_database
from .output import write_output

DB_FILE = "tournament.db"


def load_file(path: str) -> tconfig.TournamentConfig:
    try:
        return tconfig.load(path)
    except tconfig.TournamentConfigError as exc:
        raise CommandError(str(exc)) from None


#: Where tournaments write by default, one directory each (``--out`` chooses another).
OUT_ROOT = Path("tournaments")


def out_dir(args: argparse.Namespace, name: str | None) -> Path:
    if args.out:
        return Path(args.out)
    if name is None:
        raise CommandError("which tournament? give its file, --out DIR or --db URL")
    return OUT_ROOT / name


def open_store(args: argparse.Namespace, name: str | None) -> TournamentStore:
    url = args.db or str(out_dir(args, name) / DB_FILE)
    if not args.db and not Path(url).exists():
        where = "" if Path(url).is_absolute() else f" under {Path.cwd()}"
        raise CommandError(
            f"no tournament database at {url}{where} (run the tournament first; `tournament "
            "run` writes under the directory it runs in, so run this from there, or give "
            "--out DIR)"
        )
    existing_database(url)
    try:
        return TournamentStore(url)
    except StoreError as exc:
        raise CommandError(str(exc)) from None


def pick(args: argparse.Namespace) -> tuple[TournamentStore, int, str]:
    name = args.tournament
    if args.file:
        cfg = load_file(args.file)
        name = name or cfg.name
        if not args.out and not args.db:
            args.out = str(Path("tournaments") / cfg.name)
    store = open_store(args, name)
    try:
        row = store.tournament(name)
    except StoreError as exc:
        raise CommandError(str(exc)) from None
    return store, row.id, row.name


def standings_cmd(args: argparse.Namespace) -> int:
    """Print the standings."""
    store, tid, name = pick(args)
    st = standings(store, tid)
    counts = store.counts(tid)
    status = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
    cfg = tconfig.TournamentConfig.from_json(store.tournament(name).config)
    title = f"{name}: {st.games} games counted ({status}){report.left_out_note(cfg.dropped)}"
    report.print_standings(st, title)
    if cfg.format == "sprt":
        print(sprt_status(store, tid, cfg).line())
    return 0


def games_cmd(args: argparse.Namespace) -> int:
    """Print every game."""
    store, tid, name = pick(args)
    results = {g.number: g for g in store.results(tid)}
    t = Table(title=f"{name}: games", title_justify="left")
    for col in (
        "game",
        "block",
        "variant",
        "seed",
        "status",
        "seats (counted rank, termination)",
        "record",
    ):
        t.add_column(col)
    for g in store.schedule(tid):
        r = results.get(g.number)
        if r is not None:
            seats = ", ".join(
                f"{s.bot} {rank}" + ("" if s.termination == "normal" else f" ({s.termination})")
                for s, rank in zip(r.seats, report.game_counted_ranks(r), strict=True)
            )
            status = r.ending if r.ending != "complete" else "done"
        else:
            seats = ", ".join(g.seats)
            status = g.status
        t.add_row(
            str(report.game_number(g.number)),
            str(g.block),
            f"{g.ruleset} {g.players}p",
            str(g.seed),
            status,
            seats,
            (r.record_path if r is not None else None) or "",
        )
    Console(width=200).print(t)
    return 0


def stored_config(store: TournamentStore, tid: int) -> tconfig.TournamentConfig:
    """The configuration tournament ``tid`` was entered with."""
    row = next(t for t in store.tournaments() if t.id == tid)
    return tconfig.TournamentConfig.from_json(row.config)


def sprt_json(store: TournamentStore, tid: int) -> dict[str, Any]:
    """``{"sprt": {...}}`` for an SPRT tournament, else ``{}``."""
    cfg = stored_config(store, tid)
    if cfg.format != "sprt" or cfg.sprt is None:
        return {}
    test = sprt_status(store, tid, cfg)
    b = test.bounds
    return {
        "sprt": {
            "candidate": cfg.candidates[0],
            "baseline": cfg.baseline,
            "elo0": b.elo0,
            "elo1": b.elo1,
            "alpha": b.alpha,
            "beta": b.beta,
            "lower": round(b.lower, 4),
            "upper": round(b.upper, 4),
            "pairs": test.pairs,
            "llr": round(test.llr, 4),
            "verdict": test.verdict,
            "mean_pair_score": round(test.mean, 4),
            "elo": round(test.elo, 2) if math.isfinite(test.elo) else None,
            "elo_ci95": round(test.elo_ci, 2) if math.isfinite(test.elo_ci) else None,
            "los": round(test.los, 4),
        }
    }


def export_cmd(args: argparse.Namespace) -> int:
    """Write standings, games or head-to-head as CSV or JSON."""
    store, tid, name = pick(args)
    st = standings(store, tid)
    table = args.table or ("all" if args.format == "json" else "standings")
    if args.format == "csv" and table == "all":
        raise CommandError(
            "CSV holds one table: choose --table standings, games, head-to-head or rating-history"
        )
    parts = {
        "standings": lambda: report.standings_rows(st),
        "games": lambda: report.games_rows(store.results(tid)),
        "head-to-head": lambda: report.head_to_head_rows(st),
        "rating-history": lambda: report.rating_history_rows(st),
    }
    if args.format == "csv":
        text = report.to_csv(parts[table]())
    elif table == "all":
        text = report.to_json(
            {
                "tournament": name,
                "settings": report.settings_json(stored_config(store, tid)),
                "games_counted": st.games,
                "standings": report.standings_rows(st),
                "head_to_head": report.head_to_head_rows(st),
                "games": report.games_json(store.results(tid)),
                "rating_history": report.rating_history_rows(st),
                **sprt_json(store, tid),
            }
        )
    else:
        text = report.to_json(parts[table]())
    write_output(text, args.output, "-o/--output")
    return 0


def verify_cmd(args: argparse.Namespace) -> int:
    """Check the stored schedule and every result against its record; exit 1 naming each
    problem."""
    store, tid, name = pick(args)
    records = None
    if args.records is not None:
        records = Path(args.records)
        if not records.is_dir():
            raise CommandError(f"--records: no such directory: {args.records}")
    found = audit(store, tid, records, out_dir(args, name))
    for finding in found.findings:
        print(finding.line())
    for note in found.notes:
        print(f"note: {note}")
    status = ", ".join(f"{n} {s}" for s, n in sorted(found.counts.items()))
    if found.ok:
        print(
            f"tournament {name}: OK: the schedule is the file's, and {found.checked} results "
            f"match their records, each replayed through the engine ({status})"
        )
        return 0
    print(
        f"tournament {name}: {len(found.findings)} problem(s) in {found.checked} results "
        f"and the schedule ({status})"
    )
    return 1
