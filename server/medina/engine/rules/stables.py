"""The stable rule: next to a building, joining exactly one palace, apart from all others."""

from __future__ import annotations

from dataclasses import replace

from ..board import all_buildings, palace_index
from ..errors import IllegalActionError
from ..geometry import Mask, Square
from ..notation import square_name
from ..state import GameState, with_palace
from ..tiles import contact_after_stable
from .buildings import describe


def stable_sites(s: GameState, empty: Mask, twice: Mask) -> Mask:
    """Empty squares next to a building, off the well ring, touching only one palace (6.4)."""
    g = s.rules.geometry
    return empty & ~s.well_ring & g.adj(all_buildings(s)) & ~twice


def why_not_stable(s: GameState, sq: Square) -> IllegalActionError:
    """The rule a stable on the empty city square ``sq`` breaks."""
    g = s.rules.geometry
    name = square_name(g, sq)
    bit = 1 << sq
    if s.well_ring & bit:
        return IllegalActionError(
            "well-ring", f"stable at {name} is next to the well at {square_name(g, s.well)}"
        )
    if not g.adjacent[sq] & all_buildings(s):
        near_stable = " (next to a stable is not enough)" if g.adjacent[sq] & s.stables else ""
        return IllegalActionError(
            "stable-adjacent", f"a stable must be next to a building; {name} is not{near_stable}"
        )
    near = [p for p in s.palaces if (p.buildings | p.stables) & g.touching[sq]]
    return IllegalActionError(
        "palace-separation",
        f"stable at {name} would touch {' and '.join(describe(s, p) for p in near)}",
    )


def place_stable(s: GameState, sq: Square) -> None:
    """Add a stable on the legal square ``sq`` to the palace whose building it borders."""
    g = s.rules.geometry
    s.stables |= 1 << sq
    near = g.adjacent[sq]
    for i, p in enumerate(s.palaces):
        if p.buildings & near:
            s.palaces = with_palace(
                s.palaces,
                i,
                replace(
                    p,
                    stables=p.stables | (1 << sq),
                    zone=p.zone | g.touching[sq],
                    time=s.ply if p.roof else p.time,
                ),
            )
            contact_after_stable(s, i, sq)
            return
    raise AssertionError(f"stable at {square_name(g, sq)} borders no building")  # pragma: no cover


__all__ = ["palace_index", "place_stable", "stable_sites", "why_not_stable"]
