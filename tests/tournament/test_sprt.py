"""The SPRT: its log-likelihood ratio, where it stops, pair scores for 2 and for 3-4 players,
and, on simulated bots of known strength, its error rates (seeded, so the counts are fixed)."""

from __future__ import annotations

import math
import random

import pytest
from medina.tournament.sprt import (
    SprtBounds,
    SprtConfigError,
    elo_to_score,
    llr,
    llr_of_counts,
    pair_scores,
    score_to_elo,
    status,
)
from medina.tournament.standings import GameResult, SeatResult


def test_elo_and_score_are_inverse() -> None:
    assert elo_to_score(0) == 0.5
    assert math.isclose(score_to_elo(elo_to_score(70)), 70)
    assert math.isclose(elo_to_score(400), 10 / 11)


def test_a_run_of_wins_is_worth_its_likelihood_and_no_more() -> None:
    # all pairs won: the most likely distributions put their mass on 1 and on 0, so each
    # pair weighs log(s1 / s0) -- not the infinity a variance of zero would give
    b = SprtBounds(elo0=0, elo1=50)
    per_pair = math.log(elo_to_score(50) / 0.5)
    assert math.isclose(llr([1.0] * 10, b), 10 * per_pair, rel_tol=1e-6)
    assert math.isclose(llr([0.0] * 4, b), 4 * math.log((1 - elo_to_score(50)) / 0.5), rel_tol=1e-6)
    first_h1 = math.ceil(b.upper / per_pair)
    st = status([1.0] * 40, b)
    assert st.verdict == "H1" and st.decided_at == first_h1 - 1 and st.pairs == first_h1
    assert st.los == 1.0


def test_the_llr_of_mixed_pairs_agrees_with_the_normal_approximation() -> None:
    rng = random.Random(4)
    b = SprtBounds(elo0=0, elo1=10)
    s0, s1 = elo_to_score(0), elo_to_score(10)
    # near the hypotheses (the approximation's domain): a mean close to 1/2
    scores = [rng.choice((0.0, 0.25, 0.5, 0.5, 0.5, 0.75, 1.0)) for _ in range(4000)]
    n = len(scores)
    mean = sum(scores) / n
    var = sum((x - mean) ** 2 for x in scores) / n
    normal = n * (s1 - s0) * (2 * mean - s0 - s1) / (2 * var)
    assert math.isclose(llr(scores, b), normal, rel_tol=0.02, abs_tol=0.05)
    counts: dict[float, float] = {}
    for x in scores:
        counts[x] = counts.get(x, 0.0) + 1
    assert llr_of_counts(counts, b) == llr(scores, b)


def test_the_verdict_stands_where_it_was_reached() -> None:
    b = SprtBounds(elo0=0, elo1=200)
    st = status([0.0] * 10 + [1.0] * 100, b)
    assert st.verdict == "H0" and st.pairs == st.decided_at + 1  # type: ignore[operator]
    assert st.llr <= b.lower and st.mean == 0.0


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"elo0": 5, "elo1": 0}, "elo0 must be less than elo1"),
        ({"alpha": 0.7}, "alpha must be between 0 and 0.5"),
        ({"beta": "x"}, "beta must be a number"),
        ({"elo2": 1}, "unknown key"),
    ],
)
def test_bounds_are_checked(table: dict[str, object], message: str) -> None:
    with pytest.raises(SprtConfigError, match=message):
        SprtBounds.from_table(table)


def seat(bot: str, rank: int, termination: str = "normal") -> SeatResult:
    return SeatResult(bot, 0, 0, rank, termination)


def test_two_player_pairs_score_the_candidates_games() -> None:
    games = [
        GameResult(0, 0, "medina-v2", 2, "complete", (seat("new", 1), seat("old", 2))),
        GameResult(1, 0, "medina-v2", 2, "complete", (seat("old", 1), seat("new", 2))),
        GameResult(2, 1, "medina-v2", 2, "complete", (seat("new", 1), seat("old", 1))),
        GameResult(3, 1, "medina-v2", 2, "complete", (seat("old", 2), seat("new", 1))),
        GameResult(4, 2, "medina-v2", 2, "complete", (seat("new", 1), seat("old", 2))),
    ]  # pair 2 is not whole yet
    assert pair_scores(games, "new", "old", 1) == [0.5, 0.75]
    # a double forfeit is a draw, whatever the referee's play-out ranked
    both = GameResult(5, 2, "medina-v2", 2, "complete",
                      (seat("old", 2, "timeout"), seat("new", 1, "crashed")))  # fmt: skip
    assert pair_scores([*games, both], "new", "old", 1) == [0.5, 0.75, 0.75]


def test_four_player_pairs_compare_rank_scores_on_the_same_setups() -> None:
    # block 0: the candidate with the field over 4 rotations; block 1: the baseline
    games = []
    for r, rank in enumerate((1, 2, 1, 1)):  # the candidate's ranks
        games.append(
            GameResult(
                r,
                0,
                "medina-v2",
                4,
                "complete",
                (seat("new", rank), seat("a", 2), seat("b", 3), seat("c", 4)),
            )
        )
    for r, rank in enumerate((3, 4, 2, 3)):  # the baseline's
        games.append(
            GameResult(
                4 + r,
                1,
                "medina-v2",
                4,
                "complete",
                (seat("old", rank), seat("a", 1), seat("b", 3), seat("c", 4)),
            )
        )
    rc = sum((4 - r) / 3 for r in (1, 2, 1, 1)) / 4
    rb = sum((4 - r) / 3 for r in (3, 4, 2, 3)) / 4
    assert pair_scores(games, "new", "old", 2) == [pytest.approx((1 + rc - rb) / 2)]
    assert pair_scores(games[:7], "new", "old", 2) == []  # the baseline's block is not whole


# -- simulated bots of known strength -------------------------------------------------------


def run_sprt(rng: random.Random, b: SprtBounds, pair: object, max_pairs: int = 20_000) -> str:
    """One test on pairs drawn by ``pair(rng)``, to its verdict."""
    counts: dict[float, float] = {}
    for _ in range(max_pairs):
        x = pair(rng)  # type: ignore[operator]
        counts[x] = counts.get(x, 0.0) + 1
        value = llr_of_counts(counts, b)
        if value >= b.upper:
            return "H1"
        if value <= b.lower:
            return "H0"
    return "none"


def duel_pair(elo: float) -> object:
    """Two 2-player games of a candidate `elo` stronger (no shared places)."""
    p = elo_to_score(elo)

    def draw(rng: random.Random) -> float:
        return ((rng.random() < p) + (rng.random() < p)) / 2

    return draw


def four_player_pair(strength: float) -> object:
    """A 4-player pair: the candidate (Plackett-Luce strength ``strength`` against 1 for
    everyone else) and the baseline (1) each play 4 games with three field bots."""

    def rank_score(rng: random.Random, mine: float) -> float:
        total = 0.0
        for _ in range(4):
            weights = [mine, 1.0, 1.0, 1.0]
            place = 1
            while True:  # Plackett-Luce: draw the finishing order one place at a time
                pick = rng.random() * sum(weights)
                i = 0
                while pick >= weights[i]:
                    pick -= weights[i]
                    i += 1
                if i == 0:
                    break
                weights[i] = 0.0
                place += 1
            total += (4 - place) / 3
        return total / 4

    def draw(rng: random.Random) -> float:
        return (1 + rank_score(rng, strength) - rank_score(rng, 1.0)) / 2

    return draw


RUNS = 300


def rate(verdicts: list[str], of: str) -> float:
    return verdicts.count(of) / len(verdicts)


@pytest.mark.timeout(300)
def test_two_players_equal_bots_accept_h0_at_the_configured_rate() -> None:
    b = SprtBounds(elo0=0, elo1=40, alpha=0.05, beta=0.05)
    rng = random.Random(11)
    verdicts = [run_sprt(rng, b, duel_pair(0)) for _ in range(RUNS)]
    # false positives within alpha (3 standard errors of RUNS runs)
    assert rate(verdicts, "H1") <= b.alpha + 3 * math.sqrt(b.alpha * (1 - b.alpha) / RUNS)
    assert rate(verdicts, "H0") >= 1 - b.alpha - 3 * math.sqrt(b.alpha * (1 - b.alpha) / RUNS)


@pytest.mark.timeout(300)
def test_two_players_a_stronger_candidate_is_found_at_the_configured_power() -> None:
    b = SprtBounds(elo0=0, elo1=40, alpha=0.05, beta=0.05)
    rng = random.Random(12)
    verdicts = [run_sprt(rng, b, duel_pair(40)) for _ in range(RUNS)]
    assert rate(verdicts, "H0") <= b.beta + 3 * math.sqrt(b.beta * (1 - b.beta) / RUNS)


@pytest.mark.timeout(300)
def test_four_players_equal_bots_keep_false_positives_within_alpha() -> None:
    b = SprtBounds(elo0=0, elo1=40, alpha=0.05, beta=0.05)
    rng = random.Random(13)
    verdicts = [run_sprt(rng, b, four_player_pair(1.0)) for _ in range(RUNS // 2)]
    n = len(verdicts)
    assert rate(verdicts, "H1") <= b.alpha + 3 * math.sqrt(b.alpha * (1 - b.alpha) / n)
    stronger = [run_sprt(rng, b, four_player_pair(2.0)) for _ in range(RUNS // 6)]
    assert rate(stronger, "H1") >= 0.9  # a bot twice as strong is found


@pytest.mark.parametrize(
    ("scores", "elo"),
    [([], "elo 0.0 "), ([0.5, 0.5], "elo 0.0 "), ([0.5, 0.4999], "elo 0.0 "),
     ([0.5, 0.49], "elo -3.5 "), ([0.5, 0.51], "elo +3.5 ")],
)  # fmt: skip
def test_the_line_shows_an_even_score_as_elo_0_not_minus_0(scores: list[float], elo: str) -> None:
    # at 0 pairs the line read "elo -0.0"
    assert elo in status(scores, SprtBounds()).line()
