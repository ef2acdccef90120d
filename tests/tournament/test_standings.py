"""Standings: shares, intervals, ratings, faults, head-to-head, separation, order independence."""

from __future__ import annotations

import math
import random

from medina.engine.stats import wilson
from medina.tournament.standings import (
    GameResult,
    SeatResult,
    compute,
    counted_ranks,
    first_separated_block,
)


def game(
    number: int,
    ranks: dict[str, int],
    *,
    block: int | None = None,
    ending: str = "complete",
    faults: dict[str, str] | None = None,
) -> GameResult:
    faults = faults or {}
    return GameResult(
        number=number,
        block=number if block is None else block,
        ruleset="medina-v2",
        players=len(ranks),
        ending=ending,
        seats=tuple(
            SeatResult(
                bot=b, seat=i, total=40 - 10 * r, rank=r, termination=faults.get(b, "normal")
            )
            for i, (b, r) in enumerate(ranks.items())
        ),
    )


def test_shared_first_places_are_split_and_means_counted() -> None:
    st = compute(
        ["a", "b", "c"], [game(0, {"a": 1, "b": 1, "c": 3}), game(1, {"a": 1, "b": 2, "c": 3})]
    )
    rows = {r.bot: r for r in st.rows}
    assert rows["a"].wins == 1.5 and rows["b"].wins == 0.5 and rows["c"].wins == 0
    assert rows["a"].win_share == 0.75
    assert rows["b"].mean_rank == 1.5 and rows["c"].mean_score == 10
    assert [r.bot for r in st.rows] == ["a", "b", "c"]
    assert st.head_to_head["a"]["b"] == (0.75, 2)  # a tie counts half
    assert st.head_to_head["c"]["a"] == (0.0, 2)
    assert st.games == 2


def test_faults_are_charged_to_the_bot_and_never_help_it() -> None:
    results = [
        game(
            i,
            {"good": 2, "crashy": 3, "ok": 1} if i % 2 else {"good": 1, "crashy": 3, "ok": 2},
            faults={"crashy": "crashed"},
        )
        for i in range(10)
    ]
    st = compute(["good", "crashy", "ok"], results)
    assert st.rows[-1].bot == "crashy"
    assert st.rows[-1].faults == {"crashed": 10}
    assert all(r.faults == {} for r in st.rows[:-1])


def test_abandoned_games_count_only_as_faults() -> None:
    st = compute(
        ["a", "b"],
        [
            game(0, {"a": 1, "b": 2}),
            game(1, {"a": 1, "b": 1}, ending="abandoned", faults={"a": "no_show", "b": "no_show"}),
        ],
    )
    rows = {r.bot: r for r in st.rows}
    assert rows["a"].games == 1 and rows["a"].abandoned == 1 and rows["a"].faults == {"no_show": 1}
    assert st.games == 1


def test_the_order_games_finished_in_does_not_matter() -> None:
    rng = random.Random(3)
    results = []
    for i in range(30):
        order = ["a", "b", "c", "d"]
        rng.shuffle(order)
        results.append(game(i, {b: k + 1 for k, b in enumerate(order)}))
    shuffled = list(results)
    rng.shuffle(shuffled)
    a, b = compute("abcd", results), compute("abcd", shuffled)
    assert [(r.bot, r.mu, r.sigma) for r in a.rows] == [(r.bot, r.mu, r.sigma) for r in b.rows]


def test_a_clear_order_separates_and_a_coin_does_not() -> None:
    clear = [game(i, {"a": 1, "b": 2, "c": 3}, block=i // 3) for i in range(90)]
    block = first_separated_block(["a", "b", "c"], clear, min_games=0)
    assert block is not None and block < 29
    assert compute(["a", "b", "c"], clear).separated()
    rng = random.Random(1)
    coin = []
    for i in range(90):
        order = ["a", "b", "c"]
        rng.shuffle(order)
        coin.append(game(i, {x: k + 1 for k, x in enumerate(order)}, block=i // 3))
    assert first_separated_block(["a", "b", "c"], coin, min_games=0) is None
    # min_games holds the stop back
    assert first_separated_block(["a", "b", "c"], clear, min_games=60) == 19


def test_intervals() -> None:
    lo, hi = wilson(5, 10)
    assert 0.2 < lo < 0.5 < hi < 0.8
    assert wilson(0, 0) == (0.0, 1.0)
    st = compute(["a", "b"], [game(0, {"a": 1, "b": 2})])
    assert math.isinf(st.rows[0].score_ci)  # one game: no interval yet


def test_a_double_forfeit_in_two_player_games_rewards_neither_forfeiter() -> None:
    # crashy forfeits all four games; in two of them its opponent forfeits too (the referee
    # ranked crashy 1st there, by the totals of its random play-out). steady plays on.
    results = [
        game(0, {"crashy": 1, "slow": 2}, faults={"crashy": "crashed", "slow": "timeout"}),
        game(1, {"slow": 1, "crashy": 2}, faults={"crashy": "crashed", "slow": "timeout"}),
        game(2, {"crashy": 2, "steady": 1}, faults={"crashy": "crashed"}),
        game(3, {"steady": 1, "crashy": 2}, faults={"crashy": "crashed"}),
        game(4, {"slow": 2, "steady": 1}, faults={"slow": "timeout"}),
    ]
    st = compute(["crashy", "slow", "steady"], results)
    rows = {r.bot: r for r in st.rows}
    assert rows["crashy"].wins == 0 and rows["crashy"].win_share == 0
    assert rows["crashy"].mean_rank == 2.0  # last in every game
    assert rows["slow"].wins == 0  # its only games: two double forfeits and a forfeit
    assert rows["steady"].wins == 3 and rows["steady"].mean_rank == 1.0
    # no forfeiter ever finished ahead of a seat that played on ...
    assert st.head_to_head["crashy"]["steady"] == (0.0, 2)
    assert st.head_to_head["slow"]["steady"] == (0.0, 1)
    # ... and two forfeiters tie: neither gains on the other
    assert st.head_to_head["crashy"]["slow"] == (0.5, 2)
    assert st.rows[0].bot == "steady"


def test_every_forfeit_ranks_last_tied_in_four_player_games() -> None:
    # two seats forfeit: their play-out totals (and who forfeited first) do not order them
    g = game(
        0,
        {"a": 2, "b": 3, "c": 1, "d": 4},
        faults={"b": "crashed", "d": "stalled"},
    )
    assert counted_ranks(g.seats) == (2, 4, 1, 4)
    st = compute("abcd", [g])
    rows = {r.bot: r for r in st.rows}
    assert rows["b"].mean_rank == rows["d"].mean_rank == 4
    assert st.head_to_head["b"]["d"] == (0.5, 1)
    assert st.head_to_head["a"]["b"] == (1.0, 1)
    everyone = game(1, {"a": 1, "b": 2}, faults={"a": "timeout", "b": "crashed"})
    assert counted_ranks(everyone.seats) == (2, 2)  # nobody won


def test_the_rating_history_has_a_point_per_bot_and_game_in_game_order() -> None:
    rng = random.Random(5)
    results = []
    for i in range(12):
        order = ["a", "b", "c"]
        rng.shuffle(order)
        results.append(game(i, {x: k + 1 for k, x in enumerate(order)}))
    results.append(game(12, {"a": 1, "b": 1}, ending="abandoned"))  # not rated
    shuffled = list(results)
    rng.shuffle(shuffled)
    st = compute("abc", shuffled)
    assert len(st.history) == 12 * 3
    assert [p.game for p in st.history] == sorted(p.game for p in st.history)
    for r in st.rows:  # the last point of each bot is its standing
        points = st.history_of(r.bot)
        assert [p.games for p in points] == list(range(1, 13))
        assert (points[-1].mu, points[-1].sigma) == (r.mu, r.sigma)
    assert compute("abc", results).history == st.history  # the finishing order is irrelevant
