"""Standings, head-to-head and games as tables (rich), CSV and JSON."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from rich.console import Console
from rich.table import Table

from medina.boundary.spreadsheet import csv_records
from medina.storage.tournaments import GameRow

from .config import TournamentConfig
from .standings import FAULTS, SeatResult, Standings, counted_ranks


def _num(x: float, digits: int = 2) -> str:
    return "-" if math.isnan(x) or math.isinf(x) else f"{x:.{digits}f}"


def standings_rows(st: Standings) -> list[dict[str, Any]]:
    """One plain dict per bot, best first (the CSV/JSON form)."""
    out = []
    for place, r in enumerate(st.rows, 1):
        lo, hi = r.rating_interval
        wlo, whi = r.win_ci
        out.append(
            {
                "place": place,
                "bot": r.bot,
                "games": r.games,
                "mean_rank": None if not r.games else round(r.mean_rank, 4),
                "mean_score": None if not r.games else round(r.mean_score, 4),
                "score_ci95": None if r.games < 2 else round(r.score_ci, 4),
                "win_share": None if not r.games else round(r.win_share, 4),
                "win_share_low": round(wlo, 4),
                "win_share_high": round(whi, 4),
                "mu": round(r.mu, 4),
                "sigma": round(r.sigma, 4),
                "ordinal": round(r.ordinal, 4),
                "rating_low": round(lo, 4),
                "rating_high": round(hi, 4),
                "strikes": r.strikes,
                "abandoned": r.abandoned,
                **{f: r.faults.get(f, 0) for f in FAULTS},
            }
        )
    return out


def standings_table(st: Standings, title: str) -> Table:
    """The standings as a rich table."""
    t = Table(title=title, title_justify="left")
    for col, just in (
        ("#", "right"),
        ("bot", "left"),
        ("games", "right"),
        ("mean rank", "right"),
        ("mean score ±95%", "right"),
        ("win share [95%]", "right"),
        ("rating mu ±1.96 sd", "right"),
        ("ordinal", "right"),
        ("faults", "left"),
    ):
        t.add_column(col, justify=just)  # type: ignore[arg-type]
    for place, r in enumerate(st.rows, 1):
        lo, hi = r.win_ci
        faults = ", ".join(f"{n} {f.replace('_', ' ')}" for f, n in sorted(r.faults.items()))
        if r.abandoned:
            faults = (faults + ", " if faults else "") + f"{r.abandoned} abandoned"
        t.add_row(
            str(place),
            r.bot,
            str(r.games),
            _num(r.mean_rank),
            f"{_num(r.mean_score, 1)} ±{_num(r.score_ci, 1)}",
            f"{_num(r.win_share * 100, 1)}% [{lo * 100:.0f}-{hi * 100:.0f}]",
            f"{r.mu:.2f} ±{1.959964 * r.sigma:.2f}",
            f"{r.ordinal:.2f}",
            faults or "-",
        )
    return t


def head_to_head_table(st: Standings) -> Table:
    """Row bot finished ahead of column bot in this share of the games both played."""
    t = Table(
        title="head to head: share of shared games the row bot finished ahead", title_justify="left"
    )
    names = [r.bot for r in st.rows]
    t.add_column("")
    for name in names:
        t.add_column(name, justify="right")
    for a in names:
        cells = []
        for b in names:
            if a == b:
                cells.append("")
                continue
            share, met = st.head_to_head.get(a, {}).get(b, (math.nan, 0))
            cells.append("-" if met == 0 else f"{share * 100:.0f}% ({met})")
        t.add_row(a, *cells)
    return t


def print_standings(st: Standings, title: str, console: Console | None = None) -> None:
    """Standings and head-to-head to the terminal (or stdout)."""
    console = console or Console(width=160)
    console.print(standings_table(st, title))
    console.print(head_to_head_table(st))


def game_counted_ranks(game: GameRow) -> list[int]:
    """The ranks the standings count for a stored game (``TournamentStore.results``), by
    seat: forfeits share last place (``standings.counted_ranks``)."""
    return list(
        counted_ranks(
            [SeatResult(s.bot, s.seat, s.total, s.rank, s.termination) for s in game.seats]
        )
    )


def game_number(number: int) -> int:
    """The number a game is shown with: games count from 1 in every output (progress lines,
    ``tournament games``, exports, the viewer); the database's ``games.number`` from 0."""
    return number + 1


def settings_json(cfg: TournamentConfig) -> dict[str, Any]:
    """What decided the games, as the JSON export gives it: the format, variants, number of
    games, seeds, seating, clock, policies and the bots by name (with any sandbox limits),
    and the digest ``tournament`` commands check a file against. Not the bots' commands,
    directories or environments: they may hold paths and secrets of the organiser's."""
    return {
        "digest": cfg.digest,
        "format": cfg.format,
        "variants": [{"ruleset": v.ruleset, "players": v.players} for v in cfg.variants],
        "games_per_variant": cfg.games,
        "paired": cfg.paired,
        "seed": cfg.seed,
        "until_separated": cfg.until_separated,
        "min_games": cfg.min_games,
        "time": asdict(cfg.time),
        "policies": {**asdict(cfg.policies), "on_timeout": cfg.policies.on_timeout.name},
        "bots": [
            {
                "name": b.name,
                "sandbox": None if b.sandbox is None else asdict(b.sandbox),
            }
            for b in cfg.bots
        ],
        "candidates": list(cfg.candidates),
        "dropped": [{"name": n, "reason": r} for n, r in cfg.dropped],
    }


def games_json(results: Sequence[GameRow]) -> list[dict[str, Any]]:
    """Finished games as the JSON export gives them: ``game`` numbered from 1 (as everywhere
    games are shown) in place of the database's ``number``, and each seat's
    ``counted_rank``."""
    out = []
    for g in results:
        counted = game_counted_ranks(g)
        rest = {k: v for k, v in asdict(g).items() if k not in ("number", "seats")}
        seats = [
            {**asdict(s), "counted_rank": rank} for s, rank in zip(g.seats, counted, strict=True)
        ]
        out.append({"game": game_number(g.number), **rest, "seats": seats})
    return out


def games_rows(results: Sequence[GameRow]) -> list[dict[str, Any]]:
    """One row per seat of every finished game (``game`` numbered from 1): ``rank`` is the
    match's, ``counted_rank`` the one the standings count (forfeited seats share last
    place)."""
    out = []
    for g in results:
        counted = game_counted_ranks(g)
        for s, standing_rank in zip(g.seats, counted, strict=True):
            out.append(
                {
                    "game": game_number(g.number),
                    "block": g.block,
                    "ruleset": g.ruleset,
                    "players": g.players,
                    "seed": g.seed,
                    "ending": g.ending,
                    "match_id": g.match_id,
                    "record": g.record_path,
                    "seat": s.seat,
                    "bot": s.bot,
                    "total": s.total,
                    "rank": s.rank,
                    "counted_rank": standing_rank,
                    "termination": s.termination,
                    "strikes": s.strikes,
                }
            )
    return out


def rating_history_rows(st: Standings) -> list[dict[str, Any]]:
    """One row per bot and complete game: its rating right after that game was rated (games
    in number order, numbered from 1)."""
    return [
        {
            "game": game_number(p.game),
            "bot": p.bot,
            "games": p.games,
            "mu": round(p.mu, 4),
            "sigma": round(p.sigma, 4),
            "ordinal": round(p.ordinal, 4),
        }
        for p in st.history
    ]


def head_to_head_rows(st: Standings) -> list[dict[str, Any]]:
    """One row per ordered pair of bots that met."""
    return [
        {"bot": a, "opponent": b, "ahead_share": round(share, 4), "games": n}
        for a in (r.bot for r in st.rows)
        for b, (share, n) in sorted(st.head_to_head.get(a, {}).items())
    ]


def left_out_note(dropped: Sequence[tuple[str, str]]) -> str:
    """The standings' title's note of the bots entry validation left out ("" for none)."""
    return f" (left out at entry: {', '.join(name for name, _ in dropped)})" if dropped else ""


def to_csv(rows: Sequence[dict[str, Any]]) -> str:
    """Rows as CSV text (header from the first row); text cells safe to open in a
    spreadsheet (``boundary.spreadsheet``)."""
    return csv_records(list(rows[0]), rows) if rows else ""


def to_json(data: Any) -> str:
    """Indented JSON."""
    return json.dumps(data, indent=2, sort_keys=False) + "\n"
