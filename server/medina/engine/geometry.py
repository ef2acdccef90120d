"""Board geometry as bitmasks: squares, the wall ring, towers and neighbour tables.

A square is an index ``row * cols + col`` on the full grid (city plus wall ring);
a set of squares is a Python int used as a bitboard. Everything here is built
once per board size and cached.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import TypeAlias

Square: TypeAlias = int
Mask: TypeAlias = int

#: Tower numbers by corner, in tower index order 0..3: top-left 1, bottom-right 2,
#: top-right 3, bottom-left 4 (docs/rules.md section 2, decision D13).
TOWER_NUMBERS = (1, 2, 3, 4)


@dataclass(frozen=True, slots=True, eq=False)
class Geometry:
    """Masks and neighbour tables for one board size (full grid incl. the wall ring)."""

    cols: int
    rows: int
    full: Mask
    not_first_col: Mask
    not_last_col: Mask
    city: Mask
    ring: Mask
    wall_spaces: Mask
    edge: Mask
    inner: Mask
    towers: tuple[Square, Square, Square, Square]
    tower_mask: Mask
    adjacent: tuple[Mask, ...]
    touching: tuple[Mask, ...]

    @property
    def size(self) -> int:
        """Number of squares on the full grid."""
        return self.cols * self.rows

    def square(self, row: int, col: int) -> Square:
        """The square at (row, col)."""
        return row * self.cols + col

    def row_col(self, sq: Square) -> tuple[int, int]:
        """The (row, col) of a square."""
        return divmod(sq, self.cols)

    def adj(self, m: Mask) -> Mask:
        """Squares orthogonally adjacent to any square of ``m`` (may include ``m``)."""
        return (
            ((m << 1) & self.not_first_col)
            | ((m >> 1) & self.not_last_col)
            | ((m << self.cols) & self.full)
            | (m >> self.cols)
        )

    def touch(self, m: Mask) -> Mask:
        """``m`` plus every square touching it, diagonals included."""
        h = m | ((m << 1) & self.not_first_col) | ((m >> 1) & self.not_last_col)
        return h | ((h << self.cols) & self.full) | (h >> self.cols)

    def neighbour_counts(self, m: Mask) -> tuple[Mask, Mask]:
        """(squares with at least one, squares with at least two) orthogonal neighbours in ``m``."""
        once = 0
        twice = 0
        for x in (
            (m << 1) & self.not_first_col,
            (m >> 1) & self.not_last_col,
            (m << self.cols) & self.full,
            m >> self.cols,
        ):
            twice |= once & x
            once |= x
        return once, twice

    def at_least_two_adjacent(self, m: Mask) -> Mask:
        """Squares with two or more orthogonal neighbours in ``m``."""
        return self.neighbour_counts(m)[1]

    def exactly_one_adjacent(self, m: Mask) -> Mask:
        """Squares with exactly one orthogonal neighbour in ``m``."""
        once, twice = self.neighbour_counts(m)
        return once & ~twice

    def component(self, seed: Mask, within: Mask) -> Mask:
        """The orthogonally connected part of ``within`` that contains ``seed``."""
        comp = seed & within
        while True:
            grown = (comp | self.adj(comp)) & within
            if grown == comp:
                return comp
            comp = grown


def squares(m: Mask) -> list[Square]:
    """The squares of a mask in increasing order."""
    out = []
    while m:
        low = m & -m
        out.append(low.bit_length() - 1)
        m ^= low
    return out


def lowest(m: Mask) -> Square:
    """The lowest square of a non-empty mask."""
    return (m & -m).bit_length() - 1


@cache
def geometry(cols: int, rows: int) -> Geometry:
    """The cached geometry of a full grid of ``cols`` x ``rows`` squares."""
    full = (1 << (cols * rows)) - 1
    first_col = sum(1 << (r * cols) for r in range(rows))
    last_col = first_col << (cols - 1)
    ring = 0
    city = 0
    edge = 0
    for r in range(rows):
        for c in range(cols):
            bit = 1 << (r * cols + c)
            if r in (0, rows - 1) or c in (0, cols - 1):
                ring |= bit
            else:
                city |= bit
                if r in (1, rows - 2) or c in (1, cols - 2):
                    edge |= bit
    towers = (0, rows * cols - 1, cols - 1, (rows - 1) * cols)
    tower_mask = sum(1 << t for t in towers)
    g = Geometry(
        cols=cols,
        rows=rows,
        full=full,
        not_first_col=full & ~first_col,
        not_last_col=full & ~last_col,
        city=city,
        ring=ring,
        wall_spaces=ring & ~tower_mask,
        edge=edge,
        inner=city & ~edge,
        towers=towers,
        tower_mask=tower_mask,
        adjacent=(),
        touching=(),
    )
    adjacent = tuple(g.adj(1 << sq) for sq in range(cols * rows))
    touching = tuple(g.touch(1 << sq) for sq in range(cols * rows))
    object.__setattr__(g, "adjacent", adjacent)
    object.__setattr__(g, "touching", touching)
    return g
