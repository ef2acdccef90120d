"""Enum and numbering conversion: rulesets, domain IntEnums, colours, towers and seats."""

from __future__ import annotations

from collections.abc import Sequence
from enum import IntEnum
from typing import TypeVar

from medina.v1 import common_pb2

RULESET_IDS: dict[str, int] = {
    "medina-v2": common_pb2.RULESET_MEDINA_V2,
    "medina-v1": common_pb2.RULESET_MEDINA_V1,
    "medina-v1-2p": common_pb2.RULESET_MEDINA_V1_2P,
}
RULESET_NAMES: dict[int, str] = {v: k for k, v in RULESET_IDS.items()}

E = TypeVar("E", bound=IntEnum)


def enum_from_proto(cls: type[E], value: int, what: str) -> E:
    """The member of ``cls`` with protobuf number ``value`` (the domain enums share the
    protobuf numbers); ValueError naming ``what`` for 0 (unset) or an unknown number.

    >>> from medina.engine import ActionKind
    >>> enum_from_proto(ActionKind, 2, "action kind").name
    'ROOFTOP'
    """
    try:
        return cls(int(value))
    except ValueError:
        known = ", ".join(f"{m.value}={m.name}" for m in cls)
        state = "is not set" if value == 0 else f"{value} is unknown"
        raise ValueError(f"{what} {state} (expected {known})") from None


# -- the one place for engine <-> wire numbering -------------------------------------------
# The engine numbers palace colours, rooftop colours and towers from 0 and marks "nobody"
# with a negative seat; the wire numbers colours and towers from 1 (0 = unspecified) and
# leaves an optional seat field absent for nobody. Seats are 0-based on both sides.


def colour_to_proto(colour: int) -> int:
    """Engine palace colour (0..3, negative: none) -> PalaceColour number (1..4, 0: none)."""
    return colour + 1 if colour >= 0 else 0


def colour_from_proto(value: int) -> int:
    """PalaceColour number (1..4) -> engine palace colour (0..3); -1 for 0 (unspecified)."""
    return int(value) - 1 if value else -1


def rooftop_colour_to_proto(colour: int) -> int:
    """Engine rooftop colour (0..3, negative: none) -> RooftopColour number (1..4, 0: none)."""
    return colour + 1 if colour >= 0 else 0


def rooftop_colour_from_proto(value: int) -> int:
    """RooftopColour number (1..4) -> engine rooftop colour (0..3); -1 for 0 (unspecified)."""
    return int(value) - 1 if value else -1


def tower_to_proto(tower: int) -> int:
    """Engine tower index (0..3) -> tower number (1..4)."""
    return tower + 1


def tower_from_proto(number: int) -> int:
    """Tower number (1..4) -> engine tower index (0..3)."""
    return int(number) - 1


def seat_or_none(seat: int) -> int | None:
    """An engine seat for an optional seat field: None (absent) for nobody."""
    return seat if seat >= 0 else None


def seat_from_optional(msg: object, name: str, nobody: int = -1) -> int:
    """The engine seat in optional field ``name`` of ``msg``; ``nobody`` when absent."""
    if msg.HasField(name):  # type: ignore[attr-defined]
        return int(getattr(msg, name))
    return nobody


_COLOUR_LISTS = tuple(tuple(c + 1 for c in range(4) if (m >> c) & 1) for m in range(16))


def colours(mask: int) -> tuple[int, ...]:
    """A mask of engine palace colours -> PalaceColour numbers, increasing."""
    return _COLOUR_LISTS[mask & 0b1111]


def colour_mask(values: Sequence[int]) -> int:
    """PalaceColour numbers -> a mask of engine palace colours (unknown values ignored)."""
    out = 0
    for c in values:
        if 1 <= c <= 4:
            out |= 1 << (c - 1)
    return out
