"""A candidate tested to a verdict: the sequential probability ratio test fishtest runs for
chess engines, on pairs of games, for 2 to 4 players. Pure: scores in, verdict out.

A *pair* is what the test counts as one observation, its *score* x in [0, 1]:

- 2 players: one setup seed played in both seat orders by the candidate against the
  baseline; x is the candidate's mean game score over the two (a win 1, a shared first
  place 1/2, a loss 0) -- fishtest's pentanomial pairs.
- 3 or 4 players: one setup seed and one group of the field, played over every seat
  rotation once with the candidate and once with the baseline in the same seat; the
  candidate's and the baseline's mean rank scores r = (k - rank) / (k - 1) (1 first, 0
  last, forfeits last) give x = (1 + r_candidate - r_baseline) / 2: 1/2 when they placed
  alike, the same form as a 2-player score.

The hypotheses are about the mean pair score, given as logistic Elo (H0: elo0, H1: elo1,
s = 1 / (1 + 10^(-elo/400))): for 2 players the usual Elo of the candidate against the
baseline; for 3-4 players the *Elo equivalent* of its rank-score advantage over the
baseline on the same setups (x = 0.6 is +70 in either case). The log-likelihood ratio is
the generalized SPRT's: the observed pair scores' likelihood under the most likely
distribution with mean s1 over that with mean s0 (Van den Bergh's GSPRT, as fishtest
computes it for its pentanomial pairs; ``llr``).

The test stops at LLR >= log((1 - beta) / alpha) (H1 accepted: the candidate is better by
about elo1 or more) or LLR <= log(beta / (1 - alpha)) (H0 accepted: not better than elo0).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

from .standings import GameResult, counted_ranks

#: Weight of a pair score at the edges (0 and 1) not observed yet: keeps them in the support
#: of the most likely distributions (as fishtest regularises its empty counts).
PSEUDO_COUNT = 1e-3


class SprtConfigError(ValueError):
    """An SPRT setting is wrong; ``key`` names it."""

    def __init__(self, message: str, key: str) -> None:
        super().__init__(message)
        self.key = key


def elo_to_score(elo: float) -> float:
    """The expected score of a logistic Elo advantage."""
    return 1.0 / (1.0 + math.pow(10.0, -elo / 400.0))


def score_to_elo(score: float) -> float:
    """The logistic Elo advantage of an expected score (+-inf at 1 and 0)."""
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


@dataclass(frozen=True, slots=True)
class SprtBounds:
    """The test's hypotheses (logistic Elo) and error rates; validated."""

    elo0: float = 0.0
    elo1: float = 5.0
    alpha: float = 0.05
    beta: float = 0.05

    def __post_init__(self) -> None:
        for key in ("elo0", "elo1", "alpha", "beta"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise SprtConfigError(f"{key} must be a number, got {value!r}", key)
        if not -1000 < self.elo0 < self.elo1 < 1000:
            raise SprtConfigError(
                f"elo0 must be less than elo1 (within +-1000), got {self.elo0} and {self.elo1}",
                "elo1",
            )
        for key in ("alpha", "beta"):
            if not 0 < getattr(self, key) < 0.5:
                raise SprtConfigError(
                    f"{key} must be between 0 and 0.5, got {getattr(self, key)}", key
                )

    @classmethod
    def from_table(cls, raw: Mapping[str, Any]) -> SprtBounds:
        """From a ``[sprt]`` table (SprtConfigError naming an unknown key or a bad value)."""
        known = {"elo0", "elo1", "alpha", "beta"}
        unknown = sorted(set(raw) - known)
        if unknown:
            raise SprtConfigError(
                f"unknown key(s) {', '.join(unknown)}; known: alpha, beta, elo0, elo1", unknown[0]
            )
        return cls(**dict(raw))

    @property
    def lower(self) -> float:
        """The LLR at which H0 is accepted."""
        return math.log(self.beta / (1 - self.alpha))

    @property
    def upper(self) -> float:
        """The LLR at which H1 is accepted."""
        return math.log((1 - self.beta) / self.alpha)


def _mle(counts: Mapping[float, float], s: float) -> dict[float, float]:
    """The most likely distribution over the support of ``counts`` whose mean is ``s``
    (0 < s < 1; the support holds 0 and 1): p_x = n_x / (N (1 + lam (x - s))), with lam
    the root of f(lam) = sum n_x (x - s) / (1 + lam (x - s)) in (-1 / (1 - s), 1 / s),
    where f falls from +inf to -inf: Newton's method, kept inside the bracket."""
    total = sum(counts.values())
    terms = [(x - s, n) for x, n in counts.items()]
    lo, hi = -1 / (1 - s), 1 / s
    lam = 0.0
    for _ in range(200):
        f = df = 0.0
        for d, n in terms:
            q = 1 + lam * d
            f += n * d / q
            df -= n * d * d / (q * q)
        if f > 0:
            lo = lam
        else:
            hi = lam
        step = lam - f / df if df else (lo + hi) / 2
        if not lo < step < hi:
            step = (lo + hi) / 2
        if abs(step - lam) < 1e-13:
            lam = step
            break
        lam = step
    return {x: n / (total * (1 + lam * (x - s))) for x, n in counts.items()}


def llr(scores: Sequence[float], bounds: SprtBounds) -> float:
    """The log-likelihood ratio of H1 against H0 after ``scores`` (pair scores in [0, 1]):
    the generalized SPRT with each hypothesis' most likely distribution over the observed
    scores (fishtest's method for its pentanomial pairs). The extremes 0 and 1 are always
    in the support (with a tiny weight when not observed), so that a run of identical
    scores counts as what it is: no more evidence than its likelihood gives."""
    counts: dict[float, float] = {}
    for x in scores:
        counts[x] = counts.get(x, 0.0) + 1.0
    return llr_of_counts(counts, bounds)


def llr_of_counts(counts: Mapping[float, float], bounds: SprtBounds) -> float:
    """``llr`` from how many pairs scored each value."""
    if not counts:
        return 0.0
    support = dict(counts)
    for edge in (0.0, 1.0):
        support.setdefault(edge, PSEUDO_COUNT)
    p0 = _mle(support, elo_to_score(bounds.elo0))
    p1 = _mle(support, elo_to_score(bounds.elo1))
    return sum(n * math.log(p1[x] / p0[x]) for x, n in counts.items())


@dataclass(frozen=True, slots=True)
class SprtStatus:
    """Where the test stands after ``pairs`` pairs (in order)."""

    bounds: SprtBounds
    pairs: int
    llr: float
    #: "H1" (the candidate is better), "H0" (it is not), or None (go on).
    verdict: str | None
    #: The pair at which the verdict was reached (0-based), or None.
    decided_at: int | None
    mean: float  # mean pair score
    #: Elo (for 3-4 players, its equivalent) of the mean pair score, and the half-width of
    #: its 95 % interval.
    elo: float
    elo_ci: float
    #: Likelihood of superiority: the probability that the candidate is better at all
    #: (mean pair score above 1/2), normal approximation.
    los: float

    def line(self) -> str:
        """One line for people: ``SPRT: LLR 1.23 [-2.94, 2.94] ...``."""
        b = self.bounds
        text = (
            f"SPRT elo0 {b.elo0:g} elo1 {b.elo1:g} (alpha {b.alpha:g}, beta {b.beta:g}): "
            f"LLR {self.llr:.2f} [{b.lower:.2f}, {b.upper:.2f}] after {self.pairs} pairs; "
            f"elo {_signed(self.elo)} +-{self.elo_ci:.1f}, LOS {self.los * 100:.1f}%"
        )
        if self.verdict == "H1":
            text += "; H1 accepted: the candidate is better"
        elif self.verdict == "H0":
            text += "; H0 accepted: the candidate is not better"
        return text


def _signed(x: float) -> str:
    """``x`` to a tenth with its sign, and 0.0 unsigned: an even score gives -0.0 Elo (and a
    tiny negative rounds to it), which read as "slightly worse"."""
    if not math.isfinite(x):
        return "+inf" if x > 0 else "-inf"
    tenth = round(x, 1) + 0.0  # -0.0 + 0.0 is 0.0
    return f"{tenth:+.1f}" if tenth else "0.0"


class SprtTracker:
    """The test followed pair by pair: ``status`` with the scores seen so far only extended
    (each LLR is computed once), as a runner calls it after every game."""

    def __init__(self, bounds: SprtBounds) -> None:
        self.bounds = bounds
        self._start()

    def _start(self) -> None:
        self.seen: list[float] = []
        self.counts: dict[float, float] = {}
        self.value = 0.0
        self.verdict: str | None = None
        self.decided_at: int | None = None

    def feed(self, scores: Sequence[float]) -> SprtStatus:
        """The test after ``scores`` (which extend the ones fed before; otherwise it starts
        over), stopped at the first pair where a bound was crossed."""
        if list(scores[: len(self.seen)]) != self.seen:
            self._start()
        b = self.bounds
        for x in scores[len(self.seen) :]:
            if self.verdict is not None:
                break
            self.seen.append(x)
            self.counts[x] = self.counts.get(x, 0.0) + 1.0
            self.value = llr_of_counts(self.counts, b)
            if self.value >= b.upper or self.value <= b.lower:
                self.verdict = "H1" if self.value >= b.upper else "H0"
                self.decided_at = len(self.seen) - 1
        return _summary(self.seen, b, self.value, self.verdict, self.decided_at)


def status(scores: Sequence[float], bounds: SprtBounds) -> SprtStatus:
    """The test after ``scores``, stopped at the first pair where a bound was crossed
    (later pairs are not counted: the verdict stands where it was reached)."""
    return SprtTracker(bounds).feed(scores)


def _summary(
    counted: Sequence[float],
    bounds: SprtBounds,
    value: float,
    verdict: str | None,
    decided_at: int | None,
) -> SprtStatus:
    n = len(counted)
    mean = sum(counted) / n if n else 0.5
    var = sum((x - mean) ** 2 for x in counted) / n if n else 0.0
    se = math.sqrt(var / n) if n else math.inf
    if not n or se == 0:
        los = 0.5 if not n or mean == 0.5 else 1.0 if mean > 0.5 else 0.0
    else:
        los = NormalDist().cdf((mean - 0.5) / se)
    elo = score_to_elo(mean)
    z = NormalDist().inv_cdf(0.975)
    lo, hi = score_to_elo(mean - z * se), score_to_elo(mean + z * se)
    ci = (hi - lo) / 2 if n and math.isfinite(hi - lo) else math.inf
    return SprtStatus(bounds, n, value, verdict, decided_at, mean, elo, ci, los)


def pair_scores(
    results: Sequence[GameResult], candidate: str, baseline: str, pair_blocks: int
) -> list[float]:
    """The scores of the whole pairs from the first on, in order (a pair is ``pair_blocks``
    consecutive blocks: 1 for 2 players, 2 for 3-4; a block is one game per seat
    rotation). The first pair with a game still missing ends the list; a pair with an
    abandoned game (nobody played) is passed over."""
    by_block: dict[int, list[GameResult]] = {}
    for g in results:
        by_block.setdefault(g.block, []).append(g)
    out: list[float] = []
    for pair in range(len(by_block) // pair_blocks + 1):
        games: list[GameResult] = []
        for i in range(pair_blocks):
            block = by_block.get(pair * pair_blocks + i, [])
            if not block or len(block) != block[0].players:
                return out
            games += block
        if all(g.ending == "complete" for g in games):
            out.append(_pair_score(games, candidate, baseline, pair_blocks == 1))
    return out


def _pair_score(games: Sequence[GameResult], candidate: str, baseline: str, duel: bool) -> float:
    """One pair's score for the candidate (see the module's docstring)."""
    if duel:
        points = []
        for g in games:
            ranks = dict(zip((s.bot for s in g.seats), counted_ranks(g.seats), strict=True))
            c, b = ranks[candidate], ranks[baseline]
            points.append(1.0 if c < b else 0.5 if c == b else 0.0)
        return sum(points) / len(points)
    mean: dict[str, list[float]] = {candidate: [], baseline: []}
    for g in games:
        k = g.players
        for s, rank in zip(g.seats, counted_ranks(g.seats), strict=True):
            if s.bot in mean:
                mean[s.bot].append((k - rank) / (k - 1))
    rc = sum(mean[candidate]) / len(mean[candidate])
    rb = sum(mean[baseline]) / len(mean[baseline])
    return (1.0 + rc - rb) / 2.0
