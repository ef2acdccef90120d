"""The matchmaker's promises, over seeded random pools."""

from __future__ import annotations

import random

import pytest
from medina.ladder.matchmaker import Candidate, Offer, accepts, plan

OFFERS = (Offer("medina-v2", 2, 1000), Offer("medina-v2", 4, 1000), Offer("medina-v1", 3, 500))


def pool(rng: random.Random, n: int) -> list[Candidate]:
    out = []
    for i in range(n):
        out.append(
            Candidate(
                bot_id=i,
                name=f"b{i}",
                owner=f"o{rng.randrange(max(1, n // 2))}",
                line_id=100 + i,
                ordinal=rng.uniform(-5, 30),
                free=rng.randint(0, 3),
                idle_since=rng.uniform(0, 100),
                rulesets=frozenset(rng.sample(["medina-v2", "medina-v1"], rng.randint(0, 2))),
                players=frozenset(rng.sample([2, 3, 4], rng.randint(0, 3))),
                min_decision_ms=rng.choice([None, 400, 800]),
                max_decision_ms=rng.choice([None, 600, 2000]),
                seat_counts=tuple(rng.randint(0, 9) for _ in range(4)),
            )
        )
    return out


@pytest.mark.parametrize("seed", range(40))
def test_every_plan_keeps_every_rule(seed: int) -> None:
    rng = random.Random(seed)
    bots = pool(rng, rng.randint(0, 14))
    same_owner = seed % 3 == 0
    cap = None if seed % 2 else 2
    plans = plan(bots, OFFERS, random.Random(seed), same_owner=same_owner, max_per_owner=cap)
    used: dict[int, int] = {}
    per_owner: dict[str, int] = {}
    for p in plans:
        assert len(p.seats) == p.offer.players
        ids = [b.bot_id for b in p.seats]
        assert len(set(ids)) == len(ids), "nobody plays itself"
        if not same_owner:
            owners = [b.owner for b in p.seats]
            assert len(set(owners)) == len(owners), "one owner's bots do not meet"
        for b in p.seats:
            assert accepts(b, p.offer)
            used[b.bot_id] = used.get(b.bot_id, 0) + 1
        for owner in {b.owner for b in p.seats}:
            per_owner[owner] = per_owner.get(owner, 0) + 1
    for b in bots:
        assert used.get(b.bot_id, 0) <= b.free, "no bot beyond its free slots"
    if cap is not None:
        assert all(n <= cap for n in per_owner.values())


def test_without_exploration_the_nearest_rating_is_chosen() -> None:
    bots = [
        Candidate(i, f"b{i}", f"o{i}", i, ordinal=r, free=1, idle_since=float(i))
        for i, r in enumerate([10.0, 50.0, 11.0, -20.0])
    ]
    (p,) = plan(bots, (Offer("medina-v2", 2, 1000),), random.Random(1), exploration=0.0)[:1]
    assert {b.bot_id for b in p.seats} == {0, 2}


def test_the_longest_waiting_bot_is_served_first() -> None:
    bots = [
        Candidate(i, f"b{i}", f"o{i}", i, ordinal=0.0, free=1, idle_since=t)
        for i, t in enumerate([5.0, 1.0, 3.0])
    ]
    plans = plan(bots, (Offer("medina-v2", 2, 1000),), random.Random(1), exploration=0.0)
    assert len(plans) == 1 and 1 in {b.bot_id for b in plans[0].seats}


def test_seats_even_out_each_bots_history() -> None:
    a = Candidate(1, "a", "x", 1, 0.0, 1, 0.0, seat_counts=(9, 0, 0, 0))
    b = Candidate(2, "b", "y", 2, 0.0, 1, 0.0, seat_counts=(0, 9, 0, 0))
    for seed in range(10):
        (p,) = plan([a, b], (Offer("medina-v2", 2, 1000),), random.Random(seed))
        assert [s.name for s in p.seats] == ["b", "a"]


def test_offers_a_bot_does_not_accept_are_not_formed() -> None:
    picky = [
        Candidate(i, f"b{i}", f"o{i}", i, 0.0, 1, 0.0, players=frozenset({4})) for i in range(3)
    ]
    assert plan(picky, (Offer("medina-v2", 2, 1000),), random.Random(1)) == []
    assert plan(picky, (Offer("medina-v2", 4, 1000),), random.Random(1)) == []
