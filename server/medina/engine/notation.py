"""A1 square notation and the ASCII board picture used by tests, the CLI and errors.

Squares are named by column letter (A = col 0 of the full grid, i.e. the wall
ring) and row number (1 = the top row): ``B2`` is the top-left city square.

Board pictures use one two-character token per square, separated by spaces:

=========  =============================================================
``T1``     tower 1..4          ``++``  empty wall space   ``##``  wall
``..``     empty city square   ``@@``  the well
``mm``     merchant            ``MM``  merchant of the current street
``g.``     grey building of an unclaimed palace (``p`` purple, ``b`` brown,
           ``o`` orange); the second letter is the rooftop colour of a
           claimed palace (``R`` red, ``Y`` yellow, ``B`` blue, ``G`` green);
           the building carrying the rooftop is written in capitals (``GR``)
``s.``     stable; second letter as for buildings
=========  =============================================================
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .errors import NotationError
from .geometry import Geometry, Square, squares
from .types import NEUTRAL, UNCLAIMED, ActionKind, Event, EventKind, Supply
from .variants import PALACE_COLOURS

if TYPE_CHECKING:
    from .state import GameState

COLOUR_LETTERS = "gpbo"  # palace colours grey, purple, brown, orange
ROOF_LETTERS = "RYBG"  # rooftop colours red, yellow, blue, green
COLUMN_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def a_or_an(word: str) -> str:
    """``word`` with its indefinite article: "a grey", "an orange".

    >>> a_or_an("orange"), a_or_an("brown")
    ('an orange', 'a brown')
    """
    return f"{'an' if word[:1].lower() in 'aeiou' else 'a'} {word}"


def square_name(g: Geometry, sq: Square) -> str:
    """``B2``-style name of a square."""
    row, col = divmod(sq, g.cols)
    return f"{COLUMN_LETTERS[col]}{row + 1}"


_SQUARE_NAME = re.compile(r"\b([A-Z])([1-9][0-9]?)\b")


def squares_named(g: Geometry, text: str) -> tuple[Square, ...]:
    """The squares a message names in A1 notation, in the order it names them (each once).

    Rule messages name squares only through ``square_name``, so this recovers them as data
    (a refusal's ``squares``).
    """
    out: list[Square] = []
    for m in _SQUARE_NAME.finditer(text):
        col = COLUMN_LETTERS.find(m.group(1))
        row = int(m.group(2)) - 1
        if 0 <= col < g.cols and 0 <= row < g.rows:
            sq = row * g.cols + col
            if sq not in out:
                out.append(sq)
    return tuple(out)


def parse_square(g: Geometry, text: str) -> Square:
    """The square named ``text`` (case-insensitive), raising NotationError."""
    t = text.strip().upper()
    if len(t) < 2 or t[0] not in COLUMN_LETTERS or not t[1:].isdigit():
        raise NotationError(f"bad square name {text!r}: expected a column letter and a row number")
    col = COLUMN_LETTERS.index(t[0])
    row = int(t[1:]) - 1
    if not (0 <= col < g.cols and 0 <= row < g.rows):
        last = f"{COLUMN_LETTERS[g.cols - 1]}{g.rows}"
        raise NotationError(f"square {text!r} is off the board (A1..{last})")
    return row * g.cols + col


_ROOFTOPS = (ActionKind.ROOFTOP, ActionKind.NEUTRAL_ROOFTOP, ActionKind.BLOCKING_ROOFTOP)


def describe_placement(g: Geometry, event: Event) -> str:
    """A placement as every page and the console write it: the piece, for a building its
    colour, for a rooftop the colour of the palace it claims, then the square.

    >>> from .geometry import geometry
    >>> g = geometry(18, 13)
    >>> describe_placement(g, Event(EventKind.PLACED, 0, ActionKind.BUILDING, 205, 2))
    'brown building H12'
    >>> describe_placement(g, Event(EventKind.PLACED, 1, ActionKind.ROOFTOP, 165, 0))
    'rooftop on grey D10'
    """
    where = square_name(g, event.square)
    if event.piece == ActionKind.BUILDING:
        return f"{PALACE_COLOURS[event.colour]} building {where}"
    what = ActionKind(event.piece).name.lower().replace("_", " ")
    if event.piece in _ROOFTOPS and 0 <= event.colour < len(PALACE_COLOURS):
        what = f"{what} on {PALACE_COLOURS[event.colour]}"
    return f"{what} {where}"


#: Added to a move the referee chose for the seat (a timeout, a forfeited seat played on).
BY_REFEREE = " (by the referee)"


def describe_move(g: Geometry, event: Event, *, marked: bool = False) -> str | None:
    """A seat's move in the history: a placement (``describe_placement``), ``tea break`` or
    ``passes``; None for the entries the game derives (tiles, turns, the end). ``marked``:
    followed by `` (by the referee)`` when the referee chose it for the seat, as every
    list of moves writes it (a page that marks it its own way asks for the bare move)."""
    if event.kind is EventKind.PLACED:
        text = describe_placement(g, event)
    elif event.kind is EventKind.TEA_SPENT:
        text = "tea break"
    elif event.kind is EventKind.PASSED:
        text = "passes"
    else:
        return None
    return text + (BY_REFEREE if marked and event.by_referee else "")


def describe_supply(supply: Supply) -> str:
    """A supply in words: "buildings grey 5, purple 6, brown 7, orange 8; rooftops 2
    (purple, orange); neutral 1; blocking 0; stables 2; merchants 6; walls 4" (the
    rooftops are the palace colours each can still claim; a mask is no one's reading)."""
    buildings = ", ".join(f"{c} {n}" for c, n in zip(PALACE_COLOURS, supply.buildings, strict=True))

    def roofs(mask: int) -> str:
        colours = [c for i, c in enumerate(PALACE_COLOURS) if (mask >> i) & 1]
        return f"{len(colours)} ({', '.join(colours)})" if colours else "0"

    return (
        f"buildings {buildings}; rooftops {roofs(supply.rooftops)}; neutral {supply.neutral}; "
        f"blocking {roofs(supply.blocking)}; stables {supply.stables}; "
        f"merchants {supply.merchants}; walls {supply.walls}"
    )


def names(g: Geometry, sqs: list[Square]) -> str:
    """Comma-separated square names."""
    return ", ".join(square_name(g, s) for s in sqs)


def roof_letter(state: GameState, owner: int, roof: int) -> str:
    """Letter of the rooftop colour on a palace (``.`` while unclaimed)."""
    rules = state.rules
    if owner == UNCLAIMED:
        return "."
    if owner == NEUTRAL:
        return ROOF_LETTERS[rules.neutral_colour]
    if roof == ActionKind.BLOCKING_ROOFTOP:
        return ROOF_LETTERS[rules.blocking_colours[owner]]
    return ROOF_LETTERS[rules.rooftop_colours[owner]]


def board_tokens(state: GameState) -> list[str]:
    """One token per square of the full grid, in square order."""
    g = state.rules.geometry
    tokens = ["++" if (g.wall_spaces >> sq) & 1 else ".." for sq in range(g.size)]
    for t, sq in enumerate(g.towers):
        tokens[sq] = f"T{t + 1}"
    for sq in range(g.size):
        bit = 1 << sq
        if state.walls & bit:
            tokens[sq] = "##"
        elif state.merchants & bit:
            tokens[sq] = "MM" if state.street & bit else "mm"
    if state.well >= 0:
        tokens[state.well] = "@@"
    for p in state.palaces:
        letter = roof_letter(state, p.owner, p.roof)
        c = COLOUR_LETTERS[p.colour]
        for sq in squares(p.buildings):
            tokens[sq] = (c.upper() if sq == p.roof_square else c) + letter
        for sq in squares(p.stables):
            tokens[sq] = "s" + letter
    return tokens


def render(state: GameState) -> str:
    """The board as an ASCII picture (see the module docstring for the tokens)."""
    g = state.rules.geometry
    tokens = board_tokens(state)
    lines = ["   " + " ".join(f"{COLUMN_LETTERS[c]} " for c in range(g.cols))]
    for r in range(g.rows):
        row = tokens[r * g.cols : (r + 1) * g.cols]
        lines.append(f"{r + 1:>2} " + " ".join(row))
    return "\n".join(lines)


def parse_tokens(g: Geometry, picture: str) -> list[str]:
    """The tokens of a board picture, checked for shape; raises NotationError."""
    rows: list[list[str]] = []
    for raw in picture.strip("\n").splitlines():
        parts = raw.split()
        if not parts or not parts[0].isdigit():
            continue  # header or blank line
        if int(parts[0]) != len(rows) + 1:
            raise NotationError(f"board picture: expected row {len(rows) + 1}, found {parts[0]}")
        if len(parts) - 1 != g.cols:
            raise NotationError(
                f"board picture: row {parts[0]} has {len(parts) - 1} squares, expected {g.cols}"
            )
        rows.append(parts[1:])
    if len(rows) != g.rows:
        raise NotationError(f"board picture has {len(rows)} rows, expected {g.rows}")
    return [tok for row in rows for tok in row]
