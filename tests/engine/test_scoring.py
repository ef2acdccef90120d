"""Scoring (docs/rules.md 8, 11, 12): palaces, walls, merchants, the well bonus, tiles and ranks."""

from __future__ import annotations

import random

import pytest
from medina.engine import (
    CONFIGURATIONS,
    apply_action,
    from_picture,
    new_game,
    ranks,
    result,
    scoring,
)
from medina.engine.scoring import Breakdown, PalaceScore
from medina.engine.state import GameState
from medina.strategies import gain_action, random_action

from .support import position

# The 2nd-edition rulebook's scoring example, built on one board (well at D7):
# grey (yellow) 3 buildings, 4 walls, 2 merchants = 9;
# orange (red) 4 buildings + 2 stables, 2 walls, 1 merchant = 9, + 4 for the stable on B7;
# purple (blue) 5 buildings, 1 merchant = 6, + 8 for D5 and F7 on well-bonus squares;
# brown (green) 5 buildings + 1 stable, 3 merchants, 3 walls = 12.
SCORING_EXAMPLE = """
   A  B  C  D  E  F  G  H  I  J  K  L  M  N  O  P  Q  R
 1 T1 ## ## ++ ++ ++ ++ ++ ++ ++ ++ ++ ## ## ## ## ## T3
 2 ## GY gY mm .. .. .. .. .. .. .. .. BG bG bG mm .. ++
 3 ## gY .. .. .. .. .. .. .. .. .. mm bG sG .. .. .. ++
 4 ++ mm .. .. .. .. .. .. .. .. .. .. bG .. .. .. .. ++
 5 ++ .. .. PB pB pB .. .. .. .. .. .. mm .. .. .. .. ++
 6 ++ .. .. .. .. pB .. .. .. .. .. .. .. .. .. .. .. ++
 7 ++ sR .. @@ .. pB MM .. .. .. .. .. .. .. .. .. .. ++
 8 ++ OR .. .. .. .. .. .. .. .. .. .. .. .. .. .. .. ++
 9 ## oR sR .. .. .. .. .. .. .. .. .. .. .. .. .. .. ++
10 ## oR oR mm .. .. .. .. .. .. .. .. .. .. .. .. .. ++
11 ## .. .. .. .. .. .. .. .. .. .. .. .. .. .. .. .. ++
12 ## .. .. .. .. .. .. .. .. .. .. .. .. .. .. .. .. ++
13 T4 ++ ++ ++ ++ ++ ++ ++ ++ ++ ++ ++ ++ ++ ++ ++ ++ T2
"""


def scores_by_colour(seat_palaces: tuple[PalaceScore, ...]) -> dict[int, tuple[int, int]]:
    """colour -> (points without the well bonus, well bonus)."""
    return {p.colour: (p.total - p.well_bonus, p.well_bonus) for p in seat_palaces}


def test_rulebook_scoring_example_section_11() -> None:
    s = from_picture(SCORING_EXAMPLE, "medina-v2", 4)
    r = result(s)
    b = r.breakdowns
    assert scores_by_colour(b[1].palaces) == {0: (9, 0)}  # grey
    assert scores_by_colour(b[0].palaces) == {3: (9, 4)}  # orange; its stable on B7
    assert scores_by_colour(b[2].palaces) == {1: (6, 8)}  # purple; D5 and F7
    assert scores_by_colour(b[3].palaces) == {2: (12, 0)}  # brown
    grey = b[1].palaces[0]
    assert (grey.buildings, grey.stables, grey.walls, grey.merchants) == (3, 0, 4, 2)
    orange = b[0].palaces[0]
    assert (orange.buildings, orange.stables, orange.walls, orange.merchants) == (4, 2, 2, 1)
    brown = b[3].palaces[0]
    assert (brown.buildings, brown.stables, brown.walls, brown.merchants) == (5, 1, 3, 3)
    # Tiles: each palace holds its colour's tile (D12: grey 1 .. orange 4); towers 1, 3, 4
    # are watched by grey, brown and orange (tower n is worth n).
    assert [x.palace_tiles for x in b] == [4, 1, 2, 3]
    assert [x.tower_tiles for x in b] == [4, 1, 0, 3]
    assert r.totals == (13 + 8, 9 + 2, 14 + 2, 12 + 6)
    assert r.ranks == (1, 4, 3, 2)


def test_stable_on_a_well_bonus_square_earns_four_section_11() -> None:
    s = position("medina-v2", 4, {"H4": "GR", "H5": "sR"}, well="H7")
    palace = result(s).breakdowns[0].palaces[0]
    assert palace.well_bonus == 4 and palace.total == 2 + 4


@pytest.mark.parametrize(
    ("marks", "merchants"),
    [
        ({"F6": "GR", "G6": "gR", "F7": "MM", "G7": "MM"}, 2),
        ({"F6": "GR", "G6": "gR", "G5": "MM", "F5": "MM"}, 2),
        ({"F6": "GR", "G6": "gR", "G7": "gR", "F7": "MM"}, 1),  # F7 borders F6 and G7: once
        ({"F6": "GR", "F7": "sR", "G7": "MM", "G8": "MM"}, 1),  # G7 borders the stable
        ({"F6": "GR", "G6": "gR", "F5": "MM", "E5": "MM"}, 1),  # E5 is only diagonal
    ],
)
def test_merchants_score_once_per_palace(marks: dict[str, str], merchants: int) -> None:
    s = position("medina-v2", 4, marks)
    assert result(s).breakdowns[0].merchants == merchants


def test_a_merchant_scores_for_every_palace_it_borders() -> None:
    s = position("medina-v2", 4, {"F6": "GR", "H6": "BY", "G6": "MM"})
    totals = result(s).totals
    assert totals[0] == 1 + 1 + 1  # building + merchant + grey tile
    assert totals[1] == 1 + 1 + 3  # building + merchant + brown tile


def test_a_wall_scores_once_even_beside_two_pieces() -> None:
    s = position("medina-v2", 4, {"B1": "##", "A2": "##", "B2": "GR"})
    palace = result(s).breakdowns[0].palaces[0]
    assert palace.walls == 2  # B1 and A2 both border B2


def test_neutral_palaces_score_for_nobody() -> None:
    s = position("medina-v2", 3, {"F6": "GG", "G6": "gG", "G5": "MM"})  # green is neutral
    assert result(s).totals == (0, 0, 0)


def test_blocked_palaces_score_nothing_v1_2p() -> None:
    s = position("medina-v1-2p", 2, {"F6": "GR", "G6": "gR", "G5": "MM"})  # red blocks
    assert result(s).totals == (0, 0)
    s = position("medina-v1-2p", 2, {"F6": "GY", "G6": "gY", "G5": "MM"})  # yellow scores
    assert result(s).totals == (2 + 1 + 1, 0)


def test_unclaimed_palaces_score_nothing() -> None:
    s = position("medina-v2", 4, {"F6": "g.", "G6": "g.", "G5": "MM"})
    assert result(s).totals == (0, 0, 0, 0)


def test_ranks_are_shared_section_12_d10() -> None:
    assert ranks((18, 14, 16, 18)) == (1, 4, 3, 1)
    assert ranks((5, 5)) == (1, 1)
    assert ranks((1, 2, 3)) == (3, 2, 1)
    assert ranks((7, 7, 7, 0)) == (1, 1, 1, 4)


def test_breakdown_adds_up() -> None:
    s = from_picture(SCORING_EXAMPLE, "medina-v2", 4)
    for b, total in zip(result(s).breakdowns, result(s).totals, strict=True):
        assert b.total == total
        parts = b.buildings + b.stables + b.walls + b.merchants + b.well_bonus
        assert parts == sum(p.total for p in b.palaces)
        assert b.total == parts + b.palace_tiles + b.tower_tiles


def test_scores_are_the_same_whatever_the_memo_holds(monkeypatch: pytest.MonkeyPatch) -> None:
    """The scores found by identity (scoring._PALACES, _SEATS) are those computed afresh:
    over seeded games, with the memo kept, emptied at every state, and nearly too small to
    hold anything."""

    def afresh(s: GameState) -> tuple[Breakdown, ...]:
        scoring._PALACES.clear()
        scoring._SEATS.clear()
        return scoring._breakdowns(s)

    for ruleset, players in (("medina-v2", 4), ("medina-v1-2p", 2), ("medina-v1", 3)):
        for seed in range(3):
            rng = random.Random(seed)
            states = [new_game(ruleset, players, seed)]
            while not states[-1].over:
                states.append(apply_action(states[-1], random_action(states[-1], rng)))
            expected = [afresh(x) for x in states]
            assert [scoring._breakdowns(x) for x in states] == expected
            monkeypatch.setattr(scoring._PALACES, "kept", 1)
            monkeypatch.setattr(scoring._SEATS, "kept", 1)
            assert [scoring._breakdowns(x) for x in states] == expected
            monkeypatch.undo()
            assert any(b.total for b in expected[-1])  # a game that scored something


@pytest.mark.parametrize(("ruleset", "players"), CONFIGURATIONS)
def test_scores_reused_from_a_known_state_are_the_scores(ruleset: str, players: int) -> None:
    """``breakdowns(s, known)`` reuses the known state's scores only when they are the
    state's: at every decision of seeded games (one seat playing for points, so palaces are
    claimed, walls and merchants score and tiles change hands), with the state before as
    known, with states of another game (its start, and its end, where palaces score that
    this game does not have), and with one whose scores were never asked."""
    reused = 0
    for seed in range(4):
        rng = random.Random(seed)
        other = new_game(ruleset, players, seed + 100)
        ended = other
        while not ended.over:
            ended = apply_action(ended, random_action(ended, rng))
        scoring.breakdowns(other)
        scoring.breakdowns(ended)
        s, before = new_game(ruleset, players, seed), None
        fresh_before: tuple[Breakdown, ...] = ()
        while True:
            fresh = scoring._breakdowns(s)
            assert scoring.breakdowns(s.copy(), other) == fresh
            assert scoring.breakdowns(s.copy(), ended) == fresh
            assert scoring.breakdowns(s.copy(), s.copy()) == fresh  # nothing known
            got = scoring.breakdowns(s, before)
            assert got == fresh, f"{ruleset}/{players} seed {seed} decision {s.decisions}"
            reused += before is not None and got is before.score_cache
            if before is not None:  # and back: a palace the known state scores is gone
                assert scoring.breakdowns(before.copy(), s) == fresh_before
            if s.over:
                break
            strategy = gain_action if s.to_move == 0 else random_action
            s, before, fresh_before = apply_action(s, strategy(s, rng)), s, fresh
        assert any(b.total for b in fresh)  # a game that scored something
    assert reused > 0
