"""Masks derived from the board that several rules share: empty squares and palace zones."""

from __future__ import annotations

from collections.abc import Sequence

from .geometry import Mask
from .state import GameState
from .types import Palace


def all_buildings(s: GameState) -> Mask:
    """Every building on the board."""
    b = s.buildings
    return b[0] | b[1] | b[2] | b[3]


def empty_city(s: GameState) -> Mask:
    """City squares holding nothing (the well counts as something)."""
    b = s.buildings
    occupied = b[0] | b[1] | b[2] | b[3] | s.stables | s.merchants
    if s.well >= 0:
        occupied |= 1 << s.well
    return s.rules.geometry.city & ~occupied


def zone_overlap(palaces: Sequence[Palace]) -> tuple[Mask, Mask]:
    """(squares touching any palace, squares touching two or more palaces)."""
    once = 0
    twice = 0
    for p in palaces:
        z = p.zone
        twice |= once & z
        once |= z
    return once, twice


def others_zone(p: Palace, once: Mask, twice: Mask) -> Mask:
    """Squares touching a building or stable of a palace other than ``p``."""
    return twice | (once & ~p.zone)


def palace_index(s: GameState, sq: int) -> int:
    """Index in ``s.palaces`` of the palace with a building or stable on ``sq``, or -1."""
    bit = 1 << sq
    for i, p in enumerate(s.palaces):
        if (p.buildings | p.stables) & bit:
            return i
    return -1
