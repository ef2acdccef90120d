"""Head-to-head of the ladder's rating lines (``ladder pairs``): for each two lines that met
in rated matches, how often, who finished ahead, and how much of each line's rated games
that was; flagged when it looks like two owners farming a rating (one throwing its games
to the other, or both playing only each other), which the ladder does not prevent by
itself (it keeps one owner's bots apart, not two owners who agree)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace

from medina.boundary.spreadsheet import csv_records
from medina.boundary.terminal import printable
from medina.storage.ladder import LineRow

__all__ = ["COLUMNS", "DEFAULT_MIN_GAMES", "Pair", "as_csv", "as_json", "as_table", "pairs"]

#: Games together from which a pair can be flagged.
DEFAULT_MIN_GAMES = 20
#: A line playing more than this share of its rated games against one partner is flagged.
MAX_SHARE = 0.5
#: A line finishing ahead of one partner in more than this share of their games is flagged.
MAX_AHEAD = 0.9

COLUMNS = (
    "bot_a",
    "version_a",
    "bot_b",
    "version_b",
    "games",
    "a_ahead",
    "b_ahead",
    "ties",
    "share_a",
    "share_b",
    "suspicious",
)


@dataclass(frozen=True, slots=True)
class Pair:
    """Two rating lines that met in rated matches; ``a`` finished ahead at least as often
    as ``b``."""

    a: LineRow
    b: LineRow
    games: int
    a_ahead: int
    b_ahead: int
    #: Each line's rated games (with anyone).
    a_games: int
    b_games: int
    #: Empty, or why the pair looks like a rating farmed ("; " between reasons).
    suspicious: str

    @property
    def share_a(self) -> float:
        """The share of ``a``'s rated games played against ``b``."""
        return self.games / self.a_games

    @property
    def share_b(self) -> float:
        """The share of ``b``'s rated games played against ``a``."""
        return self.games / self.b_games


def _label(x: LineRow) -> str:
    return f"{x.bot}@{x.version}" if x.version else x.bot


def _why(pair: Pair, min_games: int) -> str:
    if pair.games < min_games:
        return ""
    reasons = []
    sides = (
        (pair.a, pair.b, pair.a_games, pair.a_ahead),
        (pair.b, pair.a, pair.b_games, pair.b_ahead),
    )
    for x, y, total, _ahead in sides:
        if pair.games > MAX_SHARE * total:
            reasons.append(
                f"{_label(x)} played {pair.games} of its {total} rated games against {_label(y)}"
            )
    for x, y, _total, ahead in sides:
        if ahead > MAX_AHEAD * pair.games:
            reasons.append(
                f"{_label(x)} finished ahead of {_label(y)} in {ahead} of {pair.games} games"
            )
    return "; ".join(reasons)


def pairs(
    results: Sequence[tuple[int, list[tuple[int, int]]]],
    lines: Sequence[LineRow],
    *,
    min_games: int = DEFAULT_MIN_GAMES,
) -> list[Pair]:
    """Every pair of lines that met in ``results`` (``store.rated_state()``: read with
    ``lines`` in one snapshot), flagged first, then most games together first."""
    if min_games < 1:
        raise ValueError(f"min_games {min_games}: must be 1 or more")
    by_id = {x.id: x for x in lines}
    played: dict[int, int] = {}
    met: dict[tuple[int, int], list[int]] = {}  # (low id, high id) -> games, low ahead, high ahead
    for _mid, seats in results:
        for lid, _ in seats:
            played[lid] = played.get(lid, 0) + 1
        for i, (x, rx) in enumerate(seats):
            for y, ry in seats[i + 1 :]:
                (lo, rlo), (hi, rhi) = sorted(((x, rx), (y, ry)))
                counts = met.setdefault((lo, hi), [0, 0, 0])
                counts[0] += 1
                counts[1] += rlo < rhi
                counts[2] += rhi < rlo
    out = []
    for (lo, hi), (games, lo_ahead, hi_ahead) in met.items():
        a, b, a_ahead, b_ahead = by_id[lo], by_id[hi], lo_ahead, hi_ahead
        if (b_ahead, _label(a)) > (a_ahead, _label(b)):
            a, b, a_ahead, b_ahead = b, a, b_ahead, a_ahead
        pair = Pair(a, b, games, a_ahead, b_ahead, played[a.id], played[b.id], "")
        out.append(replace(pair, suspicious=_why(pair, min_games)))
    out.sort(key=lambda p: (not p.suspicious, -p.games, _label(p.a), _label(p.b)))
    return out


def _records(found: Sequence[Pair]) -> list[dict[str, object]]:
    return [
        {
            "bot_a": p.a.bot,
            "version_a": p.a.version,
            "bot_b": p.b.bot,
            "version_b": p.b.version,
            "games": p.games,
            "a_ahead": p.a_ahead,
            "b_ahead": p.b_ahead,
            "ties": p.games - p.a_ahead - p.b_ahead,
            "share_a": round(p.share_a, 3),
            "share_b": round(p.share_b, 3),
            "suspicious": p.suspicious,
        }
        for p in found
    ]


def as_json(found: Sequence[Pair]) -> str:
    """The pairs as a JSON list of rows (shares as fractions, 0 to 1)."""
    return json.dumps(_records(found), indent=2)


def as_csv(found: Sequence[Pair]) -> str:
    """The pairs as CSV."""
    return csv_records(COLUMNS, _records(found))


def as_table(found: Sequence[Pair]) -> str:
    """The pairs as a table for a terminal (names and versions shown printable)."""
    head = ("a", "b", "games", "a ahead", "b ahead", "share of a's", "of b's", "suspicious")
    rows = [
        (
            printable(_label(p.a)),
            printable(_label(p.b)),
            str(p.games),
            str(p.a_ahead),
            str(p.b_ahead),
            f"{100 * p.share_a:.0f} %",
            f"{100 * p.share_b:.0f} %",
            printable(p.suspicious) or "-",
        )
        for p in found
    ]
    widths = [max(len(row[i]) for row in (head, *rows)) for i in range(len(head))]
    widths[-1] = 0  # the last column is not padded
    return "\n".join(
        " ".join(
            f"{cell:<{w}}" if i < 2 or i == len(head) - 1 else f"{cell:>{w}}"
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        ).rstrip()
        for row in (head, *rows)
    )
