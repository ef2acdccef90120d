"""The wall rule: walls grow as arms from the towers, and each side keeps its gate open."""

from __future__ import annotations

from ..errors import IllegalActionError
from ..geometry import Mask, Square
from ..notation import square_name
from ..state import GameState


def wall_sites(s: GameState) -> Mask:
    """Empty wall spaces with exactly one adjacent wall or tower (docs/rules.md 6.1)."""
    g = s.rules.geometry
    return g.wall_spaces & ~s.walls & g.exactly_one_adjacent(s.walls | g.tower_mask)


def why_not_wall(s: GameState, sq: Square) -> IllegalActionError:
    """The rule a wall on ``sq`` breaks."""
    g = s.rules.geometry
    name = square_name(g, sq)
    bit = 1 << sq
    if not g.wall_spaces & bit:
        what = "a tower" if g.tower_mask & bit else "a city square"
        return IllegalActionError("wall-space", f"walls go only on wall spaces; {name} is {what}")
    if s.walls & bit:
        return IllegalActionError("occupied", f"{name} already holds a wall")
    neighbours = (g.adjacent[sq] & (s.walls | g.tower_mask)).bit_count()
    if neighbours == 0:
        return IllegalActionError(
            "wall-arm",
            f"a wall at {name} must extend a tower's arm: no wall or tower is next to it",
        )
    return IllegalActionError(
        "wall-gate", f"a wall at {name} would close the gate between two arms"
    )


def arm_of(s: GameState, sq: Square) -> int:
    """Index of the tower whose arm a new wall on ``sq`` extends."""
    g = s.rules.geometry
    near = g.adjacent[sq]
    for t, tower in enumerate(g.towers):
        if near & ((1 << tower) | s.arms[t]):
            return t
    raise AssertionError(f"wall at {square_name(g, sq)} touches no arm")  # pragma: no cover
