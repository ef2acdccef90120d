"""A slow, independent model of docs/rules.md for cross-checking the engine in playouts.

It reads the board only from ``render`` (the ASCII picture) and the supplies and turn
counters only through the public state API, and recomputes from scratch, square by
square, what the engine computes with bitboards: palaces, legal placements, wall arms,
tower contacts and scores. Nothing here imports the engine's rule modules.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache

from medina.engine import NOBODY, Action, ActionKind, GameState, Phase, render

Cell = int  # a square index, row * cols + col, as in the engine's actions
ROOF_LETTERS = "RYBG"
COLOURS = "gpbo"
ORTHO = ((-1, 0), (1, 0), (0, -1), (0, 1))
AROUND = tuple((dr, dc) for dr in (-1, 0, 1) for dc in (-1, 0, 1) if (dr, dc) != (0, 0))


@dataclass(frozen=True)
class Grid:
    """Neighbour lists and square classes of one board size, from (row, col) arithmetic."""

    rows: int
    cols: int
    ortho: tuple[tuple[Cell, ...], ...]
    around: tuple[tuple[Cell, ...], ...]
    city: frozenset[Cell]
    inner: frozenset[Cell]
    towers: tuple[Cell, Cell, Cell, Cell]  # TL, BR, TR, BL (tower index order)


@cache
def grid(rows: int, cols: int) -> Grid:
    def near(steps: tuple[tuple[int, int], ...]) -> tuple[tuple[Cell, ...], ...]:
        return tuple(
            tuple(
                (r + dr) * cols + c + dc
                for dr, dc in steps
                if 0 <= r + dr < rows and 0 <= c + dc < cols
            )
            for r in range(rows)
            for c in range(cols)
        )

    cells = [(r, c) for r in range(rows) for c in range(cols)]
    return Grid(
        rows,
        cols,
        near(ORTHO),
        near(AROUND),
        frozenset(r * cols + c for r, c in cells if 0 < r < rows - 1 and 0 < c < cols - 1),
        frozenset(r * cols + c for r, c in cells if 1 < r < rows - 2 and 1 < c < cols - 2),
        (0, rows * cols - 1, cols - 1, (rows - 1) * cols),
    )


@dataclass
class RefPalace:
    colour: int
    buildings: set[Cell]
    stables: set[Cell] = field(default_factory=set)
    letter: str = "."

    @property
    def pieces(self) -> set[Cell]:
        return self.buildings | self.stables

    @property
    def key(self) -> Cell:
        """The square naming the palace in legal-action lists: its lowest building."""
        return min(self.buildings)


class Board:
    """The picture of a state: one token per square, read back from ``render``."""

    def __init__(self, tokens: list[str], rows: int, cols: int) -> None:
        self.tok = tokens
        self.g = grid(rows, cols)
        self._palaces: list[RefPalace] | None = None

    @classmethod
    def of(cls, s: GameState) -> Board:
        lines = [line.split()[1:] for line in render(s).splitlines()[1:]]
        return cls([t for line in lines for t in line], len(lines), len(lines[0]))

    def cells(self) -> range:
        return range(len(self.tok))

    def empty(self, c: Cell) -> bool:
        return self.tok[c] == ".." and c in self.g.city

    def well(self) -> Cell | None:
        return self.tok.index("@@") if "@@" in self.tok else None

    def well_ring(self) -> set[Cell]:
        w = self.well()
        return set() if w is None else {w, *self.g.around[w]}

    def well_bonus(self) -> set[Cell]:
        w = self.well()
        if w is None:
            return set()
        r, c = divmod(w, self.g.cols)
        out = {(r + 2 * dr) * self.g.cols + c + 2 * dc for dr, dc in ORTHO}
        return out & self.g.city

    def merchants(self) -> set[Cell]:
        return {c for c, t in enumerate(self.tok) if t in ("mm", "MM")}

    def walls(self) -> set[Cell]:
        return {c for c, t in enumerate(self.tok) if t == "##"}

    def palaces(self) -> list[RefPalace]:
        """Same-colour orthogonal groups of buildings, with their stables and rooftop."""
        if self._palaces is not None:
            return self._palaces
        seen: set[Cell] = set()
        out: list[RefPalace] = []
        for c, t in enumerate(self.tok):
            if c in seen or t[0].lower() not in COLOURS:
                continue
            group, todo = {c}, [c]
            while todo:
                for y in self.g.ortho[todo.pop()]:
                    if y not in group and self.tok[y][0].lower() == t[0].lower():
                        group.add(y)
                        todo.append(y)
            seen |= group
            out.append(RefPalace(COLOURS.index(t[0].lower()), group, letter=t[1]))
        building = {x: p for p in out for x in p.buildings}
        for c, t in enumerate(self.tok):
            if t[0] == "s":
                owners = {id(building[y]): building[y] for y in self.g.ortho[c] if y in building}
                assert len(owners) == 1, f"stable at {c} joins {len(owners)} palaces"
                owners.popitem()[1].stables.add(c)
        self._palaces = out
        return out

    def arms(self) -> list[set[Cell]]:
        """Walls per tower index, walking each side from the tower while walls run on."""
        rows, cols = self.g.rows, self.g.cols
        out: list[set[Cell]] = []
        for tower in self.g.towers:
            r, c = divmod(tower, cols)
            arm: set[Cell] = set()
            for dr, dc in ((0, 1 if c == 0 else -1), (1 if r == 0 else -1, 0)):
                x, y = r + dr, c + dc
                while self.tok[x * cols + y] == "##":
                    arm.add(x * cols + y)
                    x, y = x + dr, y + dc
                assert (x * cols + y) not in self.g.towers, "a side is walled from end to end"
            out.append(arm)
        assert rows > 2
        return out


def owner_of(s: GameState, letter: str) -> tuple[int, str]:
    """(seat or NEUTRAL -2, kind "own" | "blocking" | "neutral") of a rooftop letter."""
    colour = ROOF_LETTERS.index(letter)
    rules = s.rules
    if colour in rules.rooftop_colours:
        return rules.rooftop_colours.index(colour), "own"
    if colour in rules.blocking_colours:
        return rules.blocking_colours.index(colour), "blocking"
    assert colour == rules.neutral_colour
    return -2, "neutral"


def building_sites(board: Board, colour: int) -> set[Cell]:
    """docs/rules.md 6.2 for one colour, square by square."""
    g = board.g
    ring = board.well_ring()
    palaces = board.palaces()
    owner = {x: i for i, p in enumerate(palaces) for x in p.pieces}

    def touches_other(c: Cell, mine: int) -> bool:
        return any(owner.get(y, mine) != mine for y in g.around[c])

    for i, p in enumerate(palaces):
        if p.colour != colour or p.letter != ".":
            continue
        exp = {
            y
            for x in p.buildings
            for y in g.ortho[x]
            if board.empty(y) and y not in ring and not touches_other(y, i)
        }
        if exp:
            return exp
    return {
        c
        for c in board.cells()
        if board.empty(c) and c not in ring and not any(y in owner for y in g.around[c])
    }


def stable_sites(board: Board) -> set[Cell]:
    """docs/rules.md 6.4."""
    g = board.g
    ring = board.well_ring()
    palaces = board.palaces()
    owner = {x: i for i, p in enumerate(palaces) for x in p.pieces}
    buildings = {x: i for i, p in enumerate(palaces) for x in p.buildings}
    out = set()
    for c in board.cells():
        if not board.empty(c) or c in ring:
            continue
        joins = {buildings[y] for y in g.ortho[c] if y in buildings}
        near = {owner[y] for y in g.around[c] if y in owner}
        if len(joins) == 1 and near == joins:
            out.add(c)
    return out


def merchant_sites(board: Board) -> set[Cell]:
    """docs/rules.md 6.5: next to an end of the current street, else anywhere; never beside two."""
    g = board.g
    merchants = board.merchants()
    street = {c for c in merchants if board.tok[c] == "MM"}

    def count(c: Cell) -> int:
        return sum(1 for y in g.ortho[c] if y in merchants)

    free = {c for c in board.cells() if board.empty(c) and count(c) <= 1}
    ends = {c for c in street if count(c) <= 1}
    at_ends = {c for c in free if any(y in ends for y in g.ortho[c])}
    return at_ends or free


def wall_sites(board: Board) -> set[Cell]:
    """docs/rules.md 6.1: an empty wall space with exactly one wall or tower next to it."""
    g = board.g
    out = set()
    for c in board.cells():
        if board.tok[c] != "++":
            continue
        n = sum(1 for y in g.ortho[c] if board.tok[y] == "##" or y in g.towers)
        if n == 1:
            out.add(c)
    return out


def placements(
    s: GameState, seat: int, board: Board, colours_used: int = 0, roofs_used: int = 0
) -> set[Action]:
    """Every legal placement of ``seat`` (no forced-rooftop filter, no tea)."""
    sup = s.supply_of(seat)
    palaces = board.palaces()
    limits = s.rules.per_turn_limits
    out: set[Action] = set()
    for colour in range(4):
        if sup.buildings[colour] and not (limits and colours_used >> colour & 1):
            for c in building_sites(board, colour):
                out.add(Action(ActionKind.BUILDING, c, colour))
    unclaimed = [p for p in palaces if p.letter == "."]
    own = 0 if limits and roofs_used >> ActionKind.ROOFTOP & 1 else sup.rooftops
    block = 0 if limits and roofs_used >> ActionKind.BLOCKING_ROOFTOP & 1 else sup.blocking
    for p in unclaimed:
        sq = p.key
        if own >> p.colour & 1:
            out.add(Action(ActionKind.ROOFTOP, sq))
        if block >> p.colour & 1:
            out.add(Action(ActionKind.BLOCKING_ROOFTOP, sq))
        if sup.neutral:
            out.add(Action(ActionKind.NEUTRAL_ROOFTOP, sq))
    pieces: tuple[tuple[int, ActionKind, Callable[[Board], set[Cell]]], ...] = (
        (sup.stables, ActionKind.STABLE, stable_sites),
        (sup.merchants, ActionKind.MERCHANT, merchant_sites),
        (sup.walls, ActionKind.WALL, wall_sites),
    )
    for count, kind, sites in pieces:
        if count:
            out |= {Action(kind, c) for c in sites(board)}
    return out


def legal_actions(s: GameState) -> set[Action]:
    """The legal actions of the decision ``s`` is at (docs/rules.md 5 and 12)."""
    board = Board.of(s)
    if s.phase is Phase.OVER:
        return set()
    if s.phase is Phase.START_MERCHANT:
        return {Action(ActionKind.START_MERCHANT, c) for c in board.g.inner if board.tok[c] == ".."}
    seat = s.to_move
    out = placements(s, seat, board, s.turn_colours, s.turn_roofs)
    roofs = {a for a in out if a.kind in (ActionKind.ROOFTOP, ActionKind.BLOCKING_ROOFTOP)}
    roofed = s.turn_roofs & ((1 << ActionKind.ROOFTOP) | (1 << ActionKind.BLOCKING_ROOFTOP))
    if s.quota - s.placed == 1 and not roofed and roofs and forced(s, seat):
        return roofs
    if s.rules.tea and s.placed >= 1 and s.tea[seat] and s.placed < s.quota:
        out.add(Action(ActionKind.TEA))
    return out


def forced(s: GameState, seat: int) -> bool:
    """The forced-rooftop trigger [v1, v1-2p]."""
    if not s.rules.forced_rooftop:
        return False
    others = [s.supply_of(o) for o in range(s.players) if o != seat]
    if s.rules.two_colour_roofs:
        return all(not (o.rooftops | o.blocking) for o in others)
    return all(not o.rooftops for o in others)


def palace_points(board: Board, p: RefPalace) -> int:
    """docs/rules.md 8 for one palace, from the picture."""
    walls = board.walls()
    merchants = board.merchants()
    near = {y for x in p.pieces for y in board.g.ortho[x]}
    bonus = board.well_bonus()
    return (
        len(p.pieces)
        + len(near & walls)
        + len(near & merchants)
        + 4 * sum(1 for x in p.pieces if x in bonus)
    )


def totals(s: GameState, palace_tiles: list[int], tower_tiles: list[int]) -> tuple[int, ...]:
    """Every seat's final score from the picture and the given tile holders."""
    board = Board.of(s)
    out = [0] * s.players
    for p in board.palaces():
        if p.letter != ".":
            seat, kind = owner_of(s, p.letter)
            if kind == "own":
                out[seat] += palace_points(board, p)
    for value, holder in enumerate(palace_tiles, start=1):
        if holder != NOBODY:
            out[holder] += value
    for value, holder in enumerate(tower_tiles, start=1):
        if holder != NOBODY:
            out[holder] += value
    return tuple(out)
