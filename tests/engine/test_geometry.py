"""Board geometry (docs/rules.md section 2): sizes, ring, towers, edge ring, adjacency."""

from __future__ import annotations

import pytest
from medina.engine import get_ruleset, square_name, squares
from medina.engine.geometry import TOWER_NUMBERS, geometry

BOARDS = [
    # ruleset, players, cols, rows, city squares, wall spaces, inner squares
    ("medina-v2", 2, 16, 12, 14 * 10, 2 * (14 + 10), 12 * 8),
    ("medina-v2", 3, 18, 13, 16 * 11, 2 * (16 + 11), 14 * 9),
    ("medina-v2", 4, 18, 13, 16 * 11, 2 * (16 + 11), 14 * 9),
    ("medina-v1", 3, 18, 13, 16 * 11, 2 * (16 + 11), 14 * 9),
    ("medina-v1", 4, 18, 13, 16 * 11, 2 * (16 + 11), 14 * 9),
    ("medina-v1-2p", 2, 18, 13, 16 * 11, 2 * (16 + 11), 14 * 9),
]


@pytest.mark.parametrize(("ruleset", "players", "cols", "rows", "city", "walls", "inner"), BOARDS)
def test_board_sizes(
    ruleset: str, players: int, cols: int, rows: int, city: int, walls: int, inner: int
) -> None:
    g = get_ruleset(ruleset, players).geometry
    assert (g.cols, g.rows) == (cols, rows)
    assert g.city.bit_count() == city
    assert g.wall_spaces.bit_count() == walls
    assert g.tower_mask.bit_count() == 4
    assert g.ring == g.wall_spaces | g.tower_mask
    assert g.inner.bit_count() == inner
    assert g.edge == g.city & ~g.inner
    assert g.city | g.ring == g.full and not g.city & g.ring


@pytest.mark.parametrize(("cols", "rows"), [(18, 13), (16, 12)])
def test_coordinates_and_tower_corners(cols: int, rows: int) -> None:
    g = geometry(cols, rows)
    assert square_name(g, g.square(1, 1)) == "B2"  # the top-left city square
    assert g.square(2, 3) == 2 * cols + 3
    assert g.row_col(g.square(4, 5)) == (4, 5)
    last_col = "R" if cols == 18 else "P"
    names = [square_name(g, t) for t in g.towers]
    # D13: tower numbers TL 1, BR 2, TR 3, BL 4 (tower index order).
    assert names == ["A1", f"{last_col}{rows}", f"{last_col}1", f"A{rows}"]
    assert TOWER_NUMBERS == (1, 2, 3, 4)


def test_edge_ring_is_city_next_to_a_wall_space() -> None:
    g = geometry(18, 13)
    next_to_wall = 0
    for q in squares(g.city):
        if g.adjacent[q] & g.wall_spaces:
            next_to_wall |= 1 << q
    assert next_to_wall == g.edge
    corner = g.square(1, 1)
    assert (g.adjacent[corner] & g.wall_spaces).bit_count() == 2


def test_adjacent_is_orthogonal_and_touching_includes_diagonals() -> None:
    g = geometry(18, 13)
    q = g.square(5, 5)
    adj = {square_name(g, x) for x in squares(g.adjacent[q])}
    assert adj == {"F5", "F7", "E6", "G6"}
    touch = {square_name(g, x) for x in squares(g.touching[q] & ~(1 << q))}
    assert touch == adj | {"E5", "G5", "E7", "G7"}
    corner = g.towers[0]
    assert {square_name(g, x) for x in squares(g.adjacent[corner])} == {"B1", "A2"}


def test_row_wrap_is_not_adjacency() -> None:
    g = geometry(18, 13)
    end_of_row = g.square(3, 17)
    assert not g.adjacent[end_of_row] & (1 << g.square(4, 0))
    assert not g.touching[end_of_row] & (1 << g.square(4, 0))
