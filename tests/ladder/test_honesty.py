"""Keeping the ladder honest, on SQLite and on a real PostgreSQL: two owners' bots farming a
rating (one throwing its games to the other, or both playing only each other) are flagged by
the head-to-head (``ladder pairs``), an honest field is not, and voiding a bot's matches
(``bots void``) rerates every line exactly as a replay of the rated matches left would."""

from __future__ import annotations

import random

import pytest
from medina.ladder import pairs, ratings
from medina.ladder.recompute import compare, recompute, replay
from medina.storage.ladder import LadderStore, StoreError

from .test_store import add, finish, line, seats

INITIAL = (ratings.INITIAL.mu, ratings.INITIAL.sigma)


def play(store: LadderStore, lines: list[int], ranks: list[int]) -> int:
    """A rated match of ``lines`` (by seat) ending in ``ranks``; its id."""
    mid = store.new_match("s1", "medina-v2", len(lines), 1000, 1, lines)
    assert store.started(mid, "s1", f"arena-{mid}")
    outcome = seats(*((10 * (9 - r), r, "normal") for r in ranks))
    assert finish(store, mid, "s1", outcome) is not None
    return mid


def honest_field(store: LadderStore, rng: random.Random, rounds: int) -> list[int]:
    """Four bots of four owners, each pair meeting ``rounds`` times, winners at random."""
    field = [line(store, add(store, name)) for name in ("c", "d", "e", "f")]
    for _ in range(rounds):
        for i, x in enumerate(field):
            for y in field[i + 1 :]:
                play(store, [x, y], rng.sample([1, 2], 2))
    return field


def test_pairs_flag_a_farming_pair_and_not_an_honest_field(db_url: str) -> None:
    store = LadderStore(db_url)
    rng = random.Random(5)
    field = honest_field(store, rng, 25)
    farmer, thrower = line(store, add(store, "a")), line(store, add(store, "b"))
    for n in range(30):
        play(store, [farmer, thrower], [1, 2])  # b throws every game to a
        if n % 6 == 0:
            play(store, [farmer, field[0]], rng.sample([1, 2], 2))
            play(store, [thrower, field[1]], rng.sample([1, 2], 2))
    # Two bots only ever playing each other (a side ruleset nobody else asks for): even
    # results, but every game of each against the other.
    g, h = line(store, add(store, "g")), line(store, add(store, "h"))
    for n in range(24):
        play(store, [g, h], [1 + n % 2, 2 - n % 2])
    results, lines = store.rated_state()
    found = pairs.pairs(results, lines, min_games=20)
    flagged = {(p.a.bot, p.b.bot): p for p in found if p.suspicious}
    assert set(flagged) == {("a", "b"), ("g", "h")}
    assert [(p.a.bot, p.b.bot) for p in found[:2]] == [("a", "b"), ("g", "h")]  # flagged first
    ab = flagged["a", "b"]
    assert (ab.games, ab.a_ahead, ab.b_ahead, ab.a_games, ab.b_games) == (30, 30, 0, 35, 35)
    assert ab.suspicious == (
        "a@v1 played 30 of its 35 rated games against b@v1; "
        "b@v1 played 30 of its 35 rated games against a@v1; "
        "a@v1 finished ahead of b@v1 in 30 of 30 games"
    )
    assert flagged["g", "h"].suspicious == (
        "g@v1 played 24 of its 24 rated games against h@v1; "
        "h@v1 played 24 of its 24 rated games against g@v1"
    )
    honest = [p for p in found if {p.a.bot, p.b.bot} <= {"c", "d", "e", "f"}]
    assert len(honest) == 6 and all(p.games >= 25 for p in honest)
    # Below the threshold nothing is flagged: a farm of 30 games is not one of 31 or more.
    assert not [p for p in pairs.pairs(results, lines, min_games=31) if p.suspicious]
    with pytest.raises(ValueError, match="min_games 0: must be 1 or more"):
        pairs.pairs(results, lines, min_games=0)


def test_a_four_player_match_counts_each_pair_once(db_url: str) -> None:
    store = LadderStore(db_url)
    ids = [line(store, add(store, name)) for name in ("w", "x", "y", "z")]
    play(store, ids, [1, 2, 2, 4])
    results, lines = store.rated_state()
    found = {
        (p.a.bot, p.b.bot): (p.games, p.a_ahead, p.b_ahead) for p in pairs.pairs(results, lines)
    }
    assert found == {
        ("w", "x"): (1, 1, 0),
        ("w", "y"): (1, 1, 0),
        ("w", "z"): (1, 1, 0),
        ("x", "y"): (1, 0, 0),  # a tie: neither ahead
        ("x", "z"): (1, 1, 0),
        ("y", "z"): (1, 1, 0),
    }


def test_voiding_a_bot_rerates_every_line_as_a_replay_without_its_matches(db_url: str) -> None:
    store = LadderStore(db_url)
    rng = random.Random(11)
    field = honest_field(store, rng, 3)
    farmer, thrower = line(store, add(store, "a")), line(store, add(store, "b"))
    thrower_v2 = line(store, store.account("b").id, "v2")
    voided: list[int] = []
    for n in range(12):
        voided.append(play(store, [thrower, farmer], [2, 1]))
        play(store, [farmer, field[n % 4]], rng.sample([1, 2], 2))
        voided.append(play(store, [field[(n + 1) % 4], thrower, field[(n + 2) % 4]], [1, 3, 2]))
        play(store, [field[n % 4], field[(n + 3) % 4]], rng.sample([1, 2], 2))
    kept_v2 = play(store, [thrower_v2, field[0]], [2, 1])  # another version: not voided
    before = {x.id: x for x in store.lines()}
    results = store.rated_results()
    left = [r for r in results if thrower not in {lid for lid, _ in r[1]}]
    assert len(left) == len(results) - len(voided)

    done = store.void("b", "v1", "threw its games to a", replay, INITIAL)

    assert done.matches == len(voided)
    expected = recompute(left)
    lines = {x.id: x for x in store.lines()}
    for lid, x in lines.items():
        mu, sigma, games = expected.get(lid, (*INITIAL, 0))
        assert (x.mu, x.sigma, x.games) == (mu, sigma, games), x.bot  # exactly the replay
        ranks = [rank for _, seats_ in left for seat_line, rank in seats_ if seat_line == lid]
        assert x.rank_sum == sum(ranks)
    assert (lines[thrower].mu, lines[thrower].games) == (ratings.INITIAL.mu, 0)
    changed = {(bot, version) for bot, version, _, _ in done.changed}
    assert changed == {
        (x.bot, x.version)
        for lid, x in lines.items()
        if (x.mu, x.sigma, x.games) != (before[lid].mu, before[lid].sigma, before[lid].games)
    }
    assert {("a", "v1"), ("b", "v1"), ("c", "v1")} <= changed  # the field lost what b gave
    # Each seat's rating after, as the history plot reads it, is the replay's.
    for lid in lines:
        steps = [(mu, sigma) for _, _, mu, sigma in store.history(lid)]
        assert steps == [
            after[i]
            for (_, seats_), after in zip(left, replay(left), strict=True)
            for i, (seat_line, _) in enumerate(seats_)
            if seat_line == lid
        ]
    matches = {m.id: m for m in store.matches()}
    for mid in voided:
        m = matches[mid]
        assert (m.status, m.ending, m.rated_seq, m.detail) == (
            "voided",
            "complete",
            None,
            "voided: threw its games to a",
        )
        assert all(s[6] is None for s in m.seats)  # no rating after: it is not rated
    assert matches[kept_v2].status == "finished" and matches[kept_v2].rated_seq is not None
    assert compare(store) == (len(left), [])
    # The next result is rated from the rewritten ratings, after the void.
    play(store, [farmer, field[1]], [1, 2])
    assert compare(store) == (len(left) + 1, [])
    # Nothing rated is left with b v1: voiding again changes nothing.
    again = store.void("b", "v1", "again", replay, INITIAL)
    assert (again.matches, again.changed) == (0, ())
    assert store.counts()["voided"] == len(voided)


def test_voiding_every_version_and_unknown_names(db_url: str) -> None:
    store = LadderStore(db_url)
    a, b = add(store, "a"), add(store, "b")
    la, lb1, lb2 = line(store, a), line(store, b), line(store, b, "v2")
    play(store, [la, lb1], [1, 2])
    play(store, [lb2, la], [1, 2])
    with pytest.raises(StoreError, match="no bot named 'nobody'"):
        store.void("nobody", None, "x", replay, INITIAL)
    with pytest.raises(StoreError, match="bot 'b' has no version 'v9'"):
        store.void("b", "v9", "x", replay, INITIAL)
    done = store.void("b", None, "farming", replay, INITIAL)
    assert done.matches == 2
    assert sorted((x.bot, x.games, x.mu) for x in store.lines()) == [
        ("a", 0, ratings.INITIAL.mu),
        ("b", 0, ratings.INITIAL.mu),
        ("b", 0, ratings.INITIAL.mu),
    ]
    assert compare(store) == (0, [])


def test_faults_in_voided_matches_still_count_towards_a_suspension(db_url: str) -> None:
    store = LadderStore(db_url)
    la, lb = line(store, add(store, "a")), line(store, add(store, "b"))
    for n in range(3):
        if n == 2:  # two crashes of b voided (a farm), then a third
            assert store.void("a", None, "farming", replay, INITIAL).matches == 2
        mid = store.new_match("s1", "medina-v2", 2, 1000, n, [la, lb])
        assert store.started(mid, "s1", f"arena-{mid}")
        assert finish(store, mid, "s1", seats((40, 1, "normal"), (0, 2, "crashed")))
    assert store.account("b").suspended == {
        "v1": "3 faults in the last 3 matches of version 'v1': 3 crashes; connect a new version"
    }
