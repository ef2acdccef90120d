"""The rooftop rule: claim an unclaimed palace, each palace colour once per rooftop colour."""

from __future__ import annotations

from dataclasses import replace

from ..board import palace_index
from ..errors import IllegalActionError
from ..geometry import Mask, Square, lowest
from ..notation import a_or_an, square_name
from ..state import NEUTRALS, SLOTS, GameState, with_palace
from ..tiles import (
    check_exhaustion,
    contact_after_claim,
    receive_tea,
    remove_blocking_rooftop,
)
from ..types import NEUTRAL, ActionKind
from ..variants import PALACE_COLOURS, ROOFTOP_COLOURS
from .buildings import describe


def roof_sites(s: GameState, colours: int) -> Mask:
    """One building square per unclaimed palace whose colour is in the mask ``colours``."""
    out = 0
    for p in s.palaces:
        if not p.roof and (colours >> p.colour) & 1:
            out |= p.buildings & -p.buildings
    return out


def canonical_square(s: GameState, sq: Square) -> Square:
    """The square that names the palace with a building on ``sq`` in legal-action lists."""
    for p in s.palaces:
        if p.buildings & (1 << sq):
            return lowest(p.buildings)
    return sq


def why_not_rooftop(s: GameState, seat: int, kind: ActionKind, sq: Square) -> IllegalActionError:
    """The rule a rooftop of ``kind`` on ``sq`` breaks (turn limits are checked elsewhere)."""
    g = s.rules.geometry
    name = square_name(g, sq)
    rules = s.rules
    if kind is ActionKind.NEUTRAL_ROOFTOP and rules.neutral_colour < 0:
        return IllegalActionError(
            "no-such-piece", f"{rules.name} with {rules.players} players has no neutral rooftops"
        )
    if kind is ActionKind.BLOCKING_ROOFTOP and not rules.two_colour_roofs:
        return IllegalActionError(
            "no-such-piece", f"{rules.name} has no blocking rooftops (only medina-v1-2p does)"
        )
    index = palace_index(s, sq)
    p = s.palaces[index] if index >= 0 else None
    if p is None or not p.buildings & (1 << sq):
        what = "a stable" if p is not None else "no building"
        return IllegalActionError(
            "rooftop-on-building", f"a rooftop goes on a palace's building; {name} holds {what}"
        )
    if p.roof:
        return IllegalActionError("already-claimed", f"{describe(s, p)} is already claimed")
    colour = PALACE_COLOURS[p.colour]
    if kind is ActionKind.NEUTRAL_ROOFTOP:
        return IllegalActionError(
            "no-supply", f"neutral rooftop at {name}: you have no neutral rooftop left"
        )
    if kind is ActionKind.BLOCKING_ROOFTOP:
        return IllegalActionError(
            "colour-claimed",
            f"blocking rooftop at {name}: your blocking rooftop for {colour} palaces is "
            "already placed or was removed",
        )
    mine = ROOFTOP_COLOURS[rules.rooftop_colours[seat]]
    return IllegalActionError(
        "colour-claimed",
        f"rooftop at {name}: you have already claimed {a_or_an(colour)} palace with "
        f"{a_or_an(mine)} rooftop",
    )


def place_rooftop(s: GameState, seat: int, kind: ActionKind, sq: Square) -> int:
    """Claim the palace with a building on ``sq``; returns its palace colour."""
    index = palace_index(s, sq)
    p = s.palaces[index]
    bit = 1 << p.colour
    if kind is ActionKind.NEUTRAL_ROOFTOP:
        s.supply[seat * SLOTS + NEUTRALS] -= 1
        owner = NEUTRAL
    elif kind is ActionKind.BLOCKING_ROOFTOP:
        s.blocking[seat] &= ~bit
        owner = seat
    else:
        s.roofs[seat] &= ~bit
        owner = seat
    p = replace(p, owner=owner, roof=int(kind), roof_square=sq, time=s.ply)
    s.palaces = with_palace(s.palaces, index, p)
    receive_tea(s, p)
    contact_after_claim(s, index)
    if s.rules.two_colour_roofs:
        remove_blocking_rooftop(s, seat, p.colour)
    check_exhaustion(s)
    return p.colour
