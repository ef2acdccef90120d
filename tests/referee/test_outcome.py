"""Ranks with forfeits: shared ranks among those who played on, forfeited seats after them."""

from __future__ import annotations

import pytest
from medina.engine import ranks
from medina.referee.outcome import ranks_with_forfeits

F, P = True, False  # forfeited, played on

# name, totals, forfeited, expected ranks
TABLE = [
    ("docs/rules.md example", (18, 14, 16, 18), (P, P, P, P), (1, 4, 3, 1)),
    ("all equal", (10, 10, 10), (P, P, P), (1, 1, 1)),
    ("2p, no forfeit", (30, 31), (P, P), (2, 1)),
    ("2p, the winner forfeits", (40, 10), (F, P), (2, 1)),
    ("2p, the loser forfeits", (10, 40), (F, P), (2, 1)),
    ("forfeit ranks last despite the best total", (18, 14, 16, 30), (P, P, P, F), (1, 3, 2, 4)),
    ("docs/rules.md totals, seat 0 forfeits", (18, 14, 16, 18), (F, P, P, P), (4, 3, 2, 1)),
    ("two forfeits tie with each other", (5, 5, 1, 9), (F, F, P, P), (3, 3, 2, 1)),
    ("forfeits ordered by total among themselves", (7, 3, 9), (F, F, P), (2, 3, 1)),
    ("everyone forfeits", (7, 3, 7), (F, F, F), (1, 3, 1)),
    ("3p, tie among those who played on", (12, 12, 50), (P, P, F), (1, 1, 3)),
]


@pytest.mark.parametrize(
    ("name", "totals", "forfeited", "expected"), TABLE, ids=[t[0] for t in TABLE]
)
def test_ranks_with_forfeits(
    name: str,
    totals: tuple[int, ...],
    forfeited: tuple[bool, ...],
    expected: tuple[int, ...],
) -> None:
    assert ranks_with_forfeits(totals, forfeited) == expected, name


@pytest.mark.parametrize("totals", [(18, 14, 16, 18), (0, 0), (3, 9, 1), (5, 4, 5, 4)], ids=str)
def test_without_forfeits_ranks_are_the_engine_ranks(totals: tuple[int, ...]) -> None:
    assert ranks_with_forfeits(totals, (False,) * len(totals)) == ranks(totals)


def test_lengths_must_match() -> None:
    with pytest.raises(ValueError):
        ranks_with_forfeits((1, 2, 3), (False, False))
