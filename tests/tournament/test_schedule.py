"""Schedules: every group meets, every bot sits in every seat equally often, balanced samples,
the same file gives the same schedule."""

from __future__ import annotations

from collections import Counter

from medina.tournament.config import BotSpec, TournamentConfig, Variant
from medina.tournament.schedule import ScheduledGame, build, coverage, group_count, groups, rotation
from medina.tournament.sprt import SprtBounds


def cfg(n_bots: int, players: int, games: int, **kw: object) -> TournamentConfig:
    bots = tuple(BotSpec(f"b{i}", ("x",)) for i in range(n_bots))
    ruleset = "medina-v1-2p" if players == 2 else "medina-v2"
    return TournamentConfig(
        name="t",
        bots=bots,
        variants=(Variant(ruleset, players),),
        games=games,
        **kw,  # type: ignore[arg-type]
    )


def test_rotations_form_a_latin_square() -> None:
    group = ("a", "b", "c", "d")
    rows = [rotation(group, r) for r in range(4)]
    for seat in range(4):
        assert sorted(row[seat] for row in rows) == sorted(group)
    assert rows[0] == group


def test_paired_round_robin_meets_every_group_with_every_rotation() -> None:
    c = cfg(5, 4, 5 * 4 * 2)  # 5 groups of 4, two seeds each
    games = build(c)
    assert len(games) == 40 and [g.number for g in games] == list(range(40))
    assert Counter(tuple(sorted(g.seats)) for g in games) == Counter(
        {tuple(sorted(grp)): 8 for grp in groups(c, c.variants[0])}
    )
    for block in {g.block for g in games}:
        in_block = [g for g in games if g.block == block]
        assert len(in_block) == 4 and len({g.seed for g in in_block}) == 1
        for seat in range(4):
            assert len({g.seats[seat] for g in in_block}) == 4  # each bot in each seat once
    seats = Counter((g.seats[s], s) for g in games for s in range(4))
    assert set(seats.values()) == {8}  # every bot in every seat equally often
    assert build(c) == games  # deterministic


def test_a_sample_of_many_groups_stays_balanced() -> None:
    c = cfg(12, 4, 4 * 30)  # 495 groups, 30 blocks
    games = build(c)
    per_bot = Counter(b for g in games for b in g.seats)
    assert max(per_bot.values()) - min(per_bot.values()) <= 4  # within one block's worth
    assert len({tuple(g.seats) for g in games if g.rotation == 0}) == 30  # no group twice


def test_a_huge_field_is_sampled_without_listing_it() -> None:
    c = cfg(200, 4, 4 * 50)  # 64 million groups
    assert group_count(c, c.variants[0]) > 10**7
    games = build(c)
    per_bot = Counter(b for g in games for b in g.seats)
    assert len(per_bot) == 200 and max(per_bot.values()) == 4


def test_gauntlet_puts_a_candidate_in_every_game_and_splits_games_evenly() -> None:
    # 2 candidates, 3 field bots, 16 two-player games: 8 blocks for 6 groups. Whole rounds
    # first, then the rest balanced: 8 games each (the file order used to give 10 and 6).
    c = cfg(5, 2, 2 * 8, format="gauntlet", candidates=("b0", "b1"))
    games = build(c)
    assert all(len({"b0", "b1"} & set(g.seats)) >= 1 for g in games)
    per_bot = Counter(b for g in games for b in g.seats)
    assert per_bot["b0"] == per_bot["b1"] == 8
    assert sorted(per_bot[b] for b in ("b2", "b3", "b4")) == [4, 6, 6]
    firsts = Counter(g.seats for g in games if g.rotation == 0)
    assert len(firsts) == 6 and set(firsts.values()) == {1, 2}  # every group met
    assert not any({"b0", "b1"} <= set(g.seats) for g in games)  # candidates never meet
    # a prefix is fair too: the candidates alternate
    assert [g.seats[0] for g in games if g.rotation == 0][:6] == ["b0", "b1"] * 3


def test_blocks_left_over_after_whole_rounds_go_to_the_least_played() -> None:
    c = cfg(5, 2, 2 * 12)  # 10 pairs, 12 blocks: one whole round and 2 blocks more
    games = build(c)
    per_bot = Counter(b for g in games for b in g.seats)
    assert max(per_bot.values()) - min(per_bot.values()) <= 2  # one block's worth
    extra = [tuple(g.seats) for g in games if g.rotation == 0][10:]
    assert len(set(extra[0]) | set(extra[1])) == 4  # two different pairs of bots


def test_unpaired_games_rotate_seats_and_seeds() -> None:
    c = cfg(4, 4, 8, paired=False)
    games = build(c)
    assert len({g.seed for g in games}) == 8
    assert Counter(g.seats[0] for g in games) == Counter({f"b{i}": 2 for i in range(4)})


def seat_spread(games: list[ScheduledGame]) -> int:
    """The most any bot sat in one seat beyond its least-used seat."""
    k = len(games[0].seats)
    sat = Counter((name, seat) for g in games for seat, name in enumerate(g.seats))
    names = {name for name, _ in sat}
    return max(max(sat[n, s] for s in range(k)) - min(sat[n, s] for s in range(k)) for n in names)


def test_unpaired_games_spread_every_bot_over_every_seat() -> None:
    # Rotating by the game's number alone seated b0 first in 20 of its 30 games here
    # (6 pairings a round, an even number), and 9 bots in 3-player games 252 times more in
    # one seat than another over 2,000 games.
    assert seat_spread(build(cfg(4, 2, 60, paired=False))) <= 1
    three = TournamentConfig(
        name="t",
        bots=tuple(BotSpec(f"b{i}", ("x",)) for i in range(9)),
        variants=(Variant("medina-v2", 3),),
        games=2000,
        paired=False,
    )
    assert seat_spread(build(three)) <= 3
    assert seat_spread(build(cfg(8, 4, 2800, paired=False))) <= 3
    games = build(cfg(12, 4, 3000, paired=False))  # six whole rounds and a sample
    assert max(seat_spread(games[:m]) for m in range(100, 3001, 100)) <= 4


def test_variants_interleave() -> None:
    c = TournamentConfig(
        name="t",
        bots=tuple(BotSpec(f"b{i}", ("x",)) for i in range(4)),
        variants=(Variant("medina-v2", 4), Variant("medina-v1-2p", 2)),
        games=8,
    )
    games = build(c)
    assert [g.variant.players for g in games[:6]] == [4, 4, 4, 4, 2, 2]
    assert Counter(g.variant.players for g in games) == {4: 8, 2: 8}


def sprt_cfg(players: int, games: int, field: int) -> TournamentConfig:
    names = ["new", "old", *(f"f{i}" for i in range(field))]
    return TournamentConfig(
        name="t",
        bots=tuple(BotSpec(n, ("x",)) for n in names),
        variants=(Variant("medina-v2", players),),
        format="sprt",
        candidates=("new",),
        baseline="old",
        games=games,
        sprt=SprtBounds(),
    )


def test_an_sprt_pairs_the_candidate_and_the_baseline_on_the_same_setups() -> None:
    duel = build(sprt_cfg(2, 8, 0))
    assert [g.seats for g in duel[:2]] == [("new", "old"), ("old", "new")]
    assert [g.block for g in duel] == [0, 0, 1, 1, 2, 2, 3, 3]
    assert len({g.seed for g in duel}) == 4
    four = build(sprt_cfg(4, 24, 4))  # 3 pairs of 8 games
    for p in range(3):
        cand = [g for g in four if g.block == 2 * p]
        base = [g for g in four if g.block == 2 * p + 1]
        assert len(cand) == len(base) == 4
        for c, b in zip(cand, base, strict=True):  # same setup, same field, same seats
            assert c.seed == b.seed and c.rotation == b.rotation
            assert [s if s != "new" else "old" for s in c.seats] == list(b.seats)
    assert len({tuple(sorted(g.seats)) for g in four if g.block % 2 == 0}) == 3  # groups turn


def test_a_schedule_that_leaves_groups_out_says_so() -> None:
    # 3 bots in 2-player games: 3 pairings, 2 games (one paired block) each.
    assert coverage(cfg(3, 2, 6)) == []
    assert coverage(cfg(3, 2, 12)) == []
    (short,) = coverage(cfg(3, 2, 4))
    assert short == (
        "medina-v1-2p 2p: 4 games meet 2 of the 3 pairings of bots; a multiple of 6 games "
        "plays every one equally often"
    )
    (uneven,) = coverage(cfg(5, 4, 4 * 7))  # 5 groups of 4, 7 blocks
    assert "each of the 5 groups of bots 1 or 2 times" in uneven
    assert "a multiple of 20 games" in uneven
    assert coverage(cfg(3, 2, 5, paired=False)) == [
        "medina-v1-2p 2p: 5 games meet each of the 3 pairings of bots 1 or 2 times; a "
        "multiple of 3 games plays every one equally often"
    ]
