"""The ladder's standings: one row per bot version, best conservative rating first; as
protobuf rows (GetStandings), a table, CSV and JSON.

A version is *provisional* until it has played ``min_games`` rated games: the provisional
ones are listed after the established ones (in rating order among themselves), as rating
sites do. A fresh version's rating is mostly its prior: one forfeited game left a throwaway
version (ordinal about -0.4) above established weak bots (random at -2 after 1,846 games),
and an account may make many versions."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from medina.boundary.spreadsheet import csv_records
from medina.boundary.terminal import printable
from medina.storage.ladder import LineRow
from medina.v1 import ladder_pb2
from medina.wire import ladder as wire_ladder

from . import ratings

__all__ = [
    "DEFAULT_MIN_GAMES",
    "Standing",
    "as_csv",
    "as_json",
    "as_table",
    "standing_rows",
    "standings",
]

#: Rated games a version plays before it is ranked among the established ones (0: none is
#: provisional).
DEFAULT_MIN_GAMES = 10

COLUMNS = (
    "rank",
    "bot",
    "version",
    "owner",
    "ordinal",
    "mu",
    "mu_low",
    "mu_high",
    "sigma",
    "games",
    "mean_rank",
    "faults",
    "aborted",
    "last_seen",
    "inactive",
    "provisional",
)


def _active(lines: Sequence[LineRow], include_inactive: bool) -> list[LineRow]:
    return [x for x in lines if include_inactive or not x.inactive]


def standing_rows(
    lines: Sequence[LineRow], *, include_inactive: bool = False, min_games: int = DEFAULT_MIN_GAMES
) -> list[ladder_pb2.StandingRow]:
    """GetStandings rows, in the order and with the marks of ``standings``."""
    return [
        wire_ladder.standing_row(row.line, row.ordinal, (row.low, row.high), row.provisional)
        for row in standings(lines, include_inactive=include_inactive, min_games=min_games)
    ]


@dataclass(frozen=True)
class Standing:
    """One row of the standings as every view shows it: the command's table, CSV and JSON,
    and the viewer's page (``medina-arena web --ladder-db``, ``ladder serve --http``)."""

    rank: int
    line: LineRow
    #: mu - 3 sigma: what the rows are sorted by.
    ordinal: float
    #: The 95 % interval of mu.
    low: float
    high: float
    #: Fewer rated games than the standings' ``min_games``: listed after the established.
    provisional: bool = False

    @property
    def status(self) -> str:
        """``active``, or why the version may not play (``suspended: ...``, ``revoked``)."""
        return self.line.inactive or "active"


def standings(
    lines: Sequence[LineRow],
    *,
    include_inactive: bool = False,
    min_games: int = DEFAULT_MIN_GAMES,
) -> list[Standing]:
    """The rows of ``lines``, ranked from 1: the versions with ``min_games`` rated games or
    more, then the provisional ones, each in the store's order (best ordinal first, lines
    without a rated game last); the inactive ones too when ``include_inactive``."""
    shown = _active(lines, include_inactive)
    # A stable sort: the store's order holds within each group.
    ordered = sorted(shown, key=lambda x: x.games < min_games)
    out: list[Standing] = []
    for i, x in enumerate(ordered, 1):
        low, high = ratings.interval(x.mu, x.sigma)
        provisional = x.games < min_games
        out.append(Standing(i, x, ratings.ordinal(x.mu, x.sigma), low, high, provisional))
    return out


def _records(
    lines: Sequence[LineRow], include_inactive: bool, min_games: int
) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for row in standings(lines, include_inactive=include_inactive, min_games=min_games):
        x = row.line
        out.append(
            {
                "rank": row.rank,
                "bot": x.bot,
                "version": x.version,
                "owner": x.owner,
                "ordinal": round(row.ordinal, 3),
                "mu": round(x.mu, 3),
                "mu_low": round(row.low, 3),
                "mu_high": round(row.high, 3),
                "sigma": round(x.sigma, 3),
                "games": x.games,
                # None (JSON null, an empty CSV cell) before a rated game: no mean.
                "mean_rank": round(x.mean_rank, 3) if x.games else None,
                "faults": dict(sorted(x.faults.items())),
                "aborted": x.aborted,
                "last_seen": round(x.last_seen, 3),
                "inactive": x.inactive,
                "provisional": row.provisional,
            }
        )
    return out


def as_json(
    lines: Sequence[LineRow],
    *,
    include_inactive: bool = True,
    min_games: int = DEFAULT_MIN_GAMES,
) -> str:
    """The standings as a JSON list of rows."""
    return json.dumps(_records(lines, include_inactive, min_games), indent=2)


def as_csv(
    lines: Sequence[LineRow],
    *,
    include_inactive: bool = True,
    min_games: int = DEFAULT_MIN_GAMES,
) -> str:
    """The standings as CSV (faults as ``kind:n;kind:n``)."""
    records = []
    for r in _records(lines, include_inactive, min_games):
        faults = r["faults"]
        assert isinstance(faults, dict)
        records.append(r | {"faults": ";".join(f"{k}:{v}" for k, v in faults.items())})
    return csv_records(COLUMNS, records)


def as_table(
    lines: Sequence[LineRow],
    *,
    include_inactive: bool = False,
    min_games: int = DEFAULT_MIN_GAMES,
) -> str:
    """The standings as a table for a terminal (names and versions bots chose shown
    printable: ``medina.boundary.terminal``). The text columns are as wide as their widest
    cell: cut to a fixed width, versions ``release-2026-11-29a`` and ``...b`` were one."""
    records = _records(lines, include_inactive, min_games)
    rows = []
    for r in records:
        faults = r["faults"]
        assert isinstance(faults, dict)
        mean_rank = r["mean_rank"]
        rows.append(
            (
                f"{r['rank']:>3}",
                printable(str(r["bot"])),
                printable(str(r["version"])) or "-",
                f"{r['ordinal']:>7.2f} {_interval(r):>22} {r['games']:>5} "
                + (f"{mean_rank:>9.2f}" if isinstance(mean_rank, float) else f"{'-':>9}"),
                ",".join(f"{k}:{v}" for k, v in faults.items()) or "-",
                str(r["inactive"] or "active") + (", provisional" if r["provisional"] else ""),
            )
        )
    head = (
        "#",
        "bot",
        "version",
        f"{'rating':>7} {'mu (95% interval)':>22} {'games':>5} {'mean rank':>9}",
        "faults",
        "status",
    )
    # The fixed widths the table had, as the least: a ladder of short names keeps its look.
    least = (3, 18, 10, 0, 16, 0)
    widths = [max(n, *(len(row[i]) for row in (head, *rows))) for i, n in enumerate(least)]
    widths[-1] = 0  # the last column is not padded
    return "\n".join(
        " ".join(
            f"{cell:>{w}}" if i == 0 else f"{cell:<{w}}"
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        ).rstrip()
        for row in (head, *rows)
    )


def _interval(r: dict[str, object]) -> str:
    return f"{r['mu']:.1f} ({r['mu_low']:.1f}..{r['mu_high']:.1f})"
