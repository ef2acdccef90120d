"""Walls (docs/rules.md 6.1): arms grow from the towers and every side keeps its gate."""

from __future__ import annotations

import pytest
from medina.engine import Supply, legal_moves, new_game

from .support import act, illegal, legal, position, sides, squares_named

TOP_WALLS_T1 = {f"{c}1": "##" for c in "BCDEFGHI"}  # T1's arm along the top, B1..I1
TOP_WALLS_T3 = {f"{c}1": "##" for c in "KLMNOPQ"}  # T3's arm along the top, K1..Q1


@pytest.mark.parametrize(
    ("ruleset", "players", "sites"),
    [
        ("medina-v2", 4, {"B1", "A2", "Q1", "R2", "Q13", "R12", "B13", "A12"}),
        ("medina-v2", 2, {"B1", "A2", "O1", "P2", "O12", "P11", "B12", "A11"}),
        ("medina-v1-2p", 2, {"B1", "A2", "Q1", "R2", "Q13", "R12", "B13", "A12"}),
    ],
)
def test_first_walls_go_next_to_a_tower(ruleset: str, players: int, sites: set[str]) -> None:
    s = position(ruleset, players, {"H7": "MM"})
    assert squares_named(s, legal_moves(s).wall) == sites


@pytest.mark.parametrize(
    ("marks", "text", "rule", "named"),
    [
        ({}, "wall C1", "wall-arm", "C1"),
        ({}, "wall A5", "wall-arm", "A5"),
        ({}, "wall A1", "wall-space", "A1"),
        ({}, "wall R13", "wall-space", "R13"),
        ({}, "wall C3", "wall-space", "C3"),
        ({"B1": "##"}, "wall B1", "occupied", "B1"),
        ({"B1": "##"}, "wall D1", "wall-arm", "D1"),
        (TOP_WALLS_T1 | TOP_WALLS_T3, "wall J1", "wall-gate", "J1"),
        (
            {"A2": "##", "A3": "##"} | {f"A{r}": "##" for r in range(5, 13)},
            "wall A4",
            "wall-gate",
            "A4",
        ),
        ({"B1": "##"}, "merchant B1", "city-square", "B1"),
        ({}, "grey A5", "city-square", "A5"),
    ],
)
def test_illegal_walls(marks: dict[str, str], text: str, rule: str, named: str) -> None:
    illegal(position("medina-v2", 4, marks), text, rule, named)


def test_wall_extends_the_end_of_an_arm() -> None:
    s = position("medina-v2", 4, {"B1": "##", "C1": "##"})
    assert {"D1", "A2"} <= squares_named(s, legal_moves(s).wall)
    assert "B1" not in squares_named(s, legal_moves(s).wall)
    s = act(s, "wall D1")
    assert squares_named(s, s.arms[0]) == {"B1", "C1", "D1"}


def test_the_last_gap_of_a_side_is_the_gate() -> None:
    marks = TOP_WALLS_T1 | {f"{c}1": "##" for c in "LMNOPQ"}
    s = position("medina-v2", 4, marks)
    assert legal(s, "wall J1") and legal(s, "wall K1")
    t = act(s, "wall J1")  # T1's arm now reaches J1 and K1 is the gate
    assert squares_named(t, t.arms[0]) == {f"{c}1" for c in "BCDEFGHIJ"}
    illegal(t, "wall K1", "wall-gate", "K1")
    u = act(s, "wall K1")  # or T3's arm reaches K1 and J1 is the gate
    assert "K1" in squares_named(u, u.arms[2])
    illegal(u, "wall J1", "wall-gate", "J1")


def test_a_wall_belongs_to_the_tower_at_the_root_of_its_arm() -> None:
    s = position("medina-v2", 4, {"R2": "##", "R3": "##", "B13": "##"})
    s = act(s, "wall R4", "wall C13")
    assert squares_named(s, s.arms[2]) == {"R2", "R3", "R4"}  # tower 3 (top right)
    assert squares_named(s, s.arms[3]) == {"B13", "C13"}  # tower 4 (bottom left)
    assert s.arms[0] == s.arms[1] == 0


def test_no_wall_without_a_wall_in_supply() -> None:
    no_walls = Supply((5, 5, 5, 5), 0b1111, 0, 0, 3, 6, 0)
    s = position("medina-v2", 4, supplies={0: no_walls})
    assert legal_moves(s).wall == 0
    illegal(s, "wall B1", "no-supply")


def test_all_walls_of_a_game_fit_with_the_gates_open() -> None:
    s = act(new_game("medina-v1-2p", 2, seed=1), "start H7")  # 2 x 16 walls, the most of any
    while (sites := legal_moves(s).wall) and s.walls.bit_count() < 32:
        s = act(s, "wall " + sorted(squares_named(s, sites))[0])
    assert s.walls.bit_count() == 32
    for side in sides(s.rules.geometry):
        assert side & ~s.walls, "every side keeps its gate"
