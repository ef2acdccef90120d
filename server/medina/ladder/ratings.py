"""Ladder ratings: openskill's Plackett-Luce model, one update per rated match, in the
order results were stored (``ladder_matches.rated_seq``), so a recomputation from the stored
results gives the stored ratings exactly.

The ranks counted are the tournament's (``tournament.standings.counted_ranks``): a seat
that forfeited ranks last, tied with every other forfeit."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from openskill.models import PlackettLuce

__all__ = ["MODEL", "Rating", "interval", "ordinal", "rate"]

MODEL = PlackettLuce()


@dataclass(frozen=True, slots=True)
class Rating:
    """A rating line's skill estimate."""

    mu: float
    sigma: float

    @property
    def ordinal(self) -> float:
        """mu - 3 sigma: the conservative estimate standings sort by."""
        return ordinal(self.mu, self.sigma)


#: A version's rating before its first game.
INITIAL = Rating(float(MODEL.mu), float(MODEL.sigma))


def ordinal(mu: float, sigma: float) -> float:
    """mu - 3 sigma."""
    return mu - 3.0 * sigma


def interval(mu: float, sigma: float) -> tuple[float, float]:
    """The 95 % interval of mu."""
    return (mu - 1.96 * sigma, mu + 1.96 * sigma)


def rate(before: Sequence[Rating], ranks: Sequence[int]) -> list[Rating]:
    """Every seat's rating after one match (``ranks``: 1 is first, equal ranks tie)."""
    if len(before) != len(ranks):
        raise ValueError(f"{len(before)} ratings for {len(ranks)} ranks")
    teams = [[MODEL.rating(mu=r.mu, sigma=r.sigma)] for r in before]
    after = MODEL.rate(teams, ranks=[float(r) for r in ranks])
    return [Rating(float(t[0].mu), float(t[0].sigma)) for t in after]
