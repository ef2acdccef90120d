"""Ratings recomputed from the stored results alone, to check the stored ratings (and to
rebuild them): every rated match in the order it was rated, from every line's initial
rating."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from medina.storage.ladder import LadderStore

from . import ratings

__all__ = ["Difference", "compare", "recompute", "replay"]


@dataclass(frozen=True, slots=True)
class Difference:
    """A line whose stored rating differs from the recomputed one."""

    bot: str
    version: str
    stored: tuple[float, float, int]
    recomputed: tuple[float, float, int]


def replay(
    results: Sequence[tuple[int, list[tuple[int, int]]]],
) -> list[list[tuple[float, float]]]:
    """Each seat's (mu, sigma) after each of ``results`` (``store.rated_results()``), every
    line starting at the initial rating: what ``finish`` stored, match by match."""
    state: dict[int, ratings.Rating] = {}
    out: list[list[tuple[float, float]]] = []
    for _mid, seats in results:
        before = [state.get(lid, ratings.INITIAL) for lid, _ in seats]
        after = ratings.rate(before, [rank for _, rank in seats])
        for (lid, _), r in zip(seats, after, strict=True):
            state[lid] = r
        out.append([(r.mu, r.sigma) for r in after])
    return out


def recompute(
    results: Sequence[tuple[int, list[tuple[int, int]]]],
) -> dict[int, tuple[float, float, int]]:
    """Each line's (mu, sigma, rated games) after ``results`` (``store.rated_results()``)."""
    state: dict[int, tuple[float, float, int]] = {}
    for (_mid, seats), after in zip(results, replay(results), strict=True):
        for (lid, _), (mu, sigma) in zip(seats, after, strict=True):
            state[lid] = (mu, sigma, state.get(lid, (0.0, 0.0, 0))[2] + 1)
    return state


def compare(store: LadderStore, tolerance: float = 1e-9) -> tuple[int, list[Difference]]:
    """(rated matches replayed, the lines whose stored rating differs), read in one
    snapshot: right against a ladder that is playing."""
    results, lines = store.rated_state()
    got = recompute(results)
    diffs = []
    for x in lines:
        mu, sigma, games = got.get(x.id, (ratings.INITIAL.mu, ratings.INITIAL.sigma, 0))
        if abs(mu - x.mu) > tolerance or abs(sigma - x.sigma) > tolerance or games != x.games:
            diffs.append(Difference(x.bot, x.version, (x.mu, x.sigma, x.games), (mu, sigma, games)))
    return len(results), diffs
