"""The building rule: grow the open palace of a colour, else start a new one apart from all."""

from __future__ import annotations

from ..board import others_zone, zone_overlap
from ..errors import IllegalActionError
from ..geometry import Mask, Square, lowest, squares
from ..notation import a_or_an, names, square_name
from ..state import GameState, with_palace
from ..types import Palace
from ..variants import PALACE_COLOURS


def expansion_squares(s: GameState, p: Palace, empty: Mask, once: Mask, twice: Mask) -> Mask:
    """Empty squares next to a building of ``p``, off the well ring, touching no other palace."""
    return p.reach & empty & ~s.well_ring & ~others_zone(p, once, twice)


def building_sites(s: GameState, empty: Mask, once: Mask, twice: Mask) -> list[Mask]:
    """Per palace colour, where a building of that colour may go (docs/rules.md 6.2)."""
    new_sites = empty & ~s.well_ring & ~once
    sites = [new_sites, new_sites, new_sites, new_sites]
    for p in s.palaces:
        if not p.roof:
            exp = expansion_squares(s, p, empty, once, twice)
            if exp:
                sites[p.colour] = exp
    return sites


def open_palace(s: GameState, colour: int, empty: Mask) -> tuple[int, Mask]:
    """(index, expansion squares) of the growable unclaimed ``colour`` palace, or (-1, 0)."""
    once, twice = zone_overlap(s.palaces)
    for i, p in enumerate(s.palaces):
        if not p.roof and p.colour == colour:
            exp = expansion_squares(s, p, empty, once, twice)
            if exp:
                return i, exp
    return -1, 0


def describe(s: GameState, p: Palace) -> str:
    """``the brown palace at G8`` (named by its lowest building)."""
    sq = p.roof_square if p.roof_square >= 0 else lowest(p.buildings)
    return f"the {PALACE_COLOURS[p.colour]} palace at {square_name(s.rules.geometry, sq)}"


def why_not_building(s: GameState, colour: int, sq: Square, empty: Mask) -> IllegalActionError:
    """The rule a building of ``colour`` on ``sq`` breaks (``sq`` is an empty city square)."""
    g = s.rules.geometry
    name = square_name(g, sq)
    bit = 1 << sq
    colour_name = PALACE_COLOURS[colour]
    if s.well_ring & bit:
        return IllegalActionError(
            "well-ring",
            f"building at {name} is next to the well at {square_name(g, s.well)}",
        )
    index, exp = open_palace(s, colour, empty)
    if index >= 0:
        p = s.palaces[index]
        if p.reach & bit:
            return _touching(s, "building", sq, exclude=p)
        return IllegalActionError(
            "must-expand",
            f"{describe(s, p)} is unclaimed and can still grow, so "
            f"{a_or_an(colour_name)} building must extend it (at {names(g, squares(exp))}); "
            f"{name} is not next to it",
        )
    return _touching(s, "building", sq, exclude=None)


def _touching(s: GameState, what: str, sq: Square, exclude: Palace | None) -> IllegalActionError:
    g = s.rules.geometry
    near = g.touching[sq]
    for p in s.palaces:
        if p is not exclude and p.zone & (1 << sq) and (p.buildings | p.stables) & near:
            return IllegalActionError(
                "palace-separation",
                f"{what} at {square_name(g, sq)} touches {describe(s, p)}",
            )
    return IllegalActionError("illegal", f"{what} at {square_name(g, sq)} is not allowed here")


def place_building(s: GameState, colour: int, sq: Square) -> None:
    """Add a building to the open palace of its colour or start a new palace (legal ``sq``)."""
    g = s.rules.geometry
    bit = 1 << sq
    s.buildings[colour] |= bit
    for i, p in enumerate(s.palaces):
        if not p.roof and p.colour == colour and p.reach & bit:
            s.palaces = with_palace(
                s.palaces,
                i,
                Palace(
                    pid=p.pid,
                    colour=colour,
                    buildings=p.buildings | bit,
                    stables=p.stables,
                    zone=p.zone | g.touching[sq],
                    reach=p.reach | g.adjacent[sq],
                ),
            )
            return
    s.palaces = (
        *s.palaces,
        Palace(
            pid=s.next_pid,
            colour=colour,
            buildings=bit,
            stables=0,
            zone=g.touching[sq],
            reach=g.adjacent[sq],
        ),
    )
    s.next_pid += 1
