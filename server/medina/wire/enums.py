"""Enum conversion: ruleset names <-> numbers, and checked numbers -> domain IntEnums."""

from __future__ import annotations

from enum import IntEnum
from typing import TypeVar

from medina.v1 import game_pb2

RULESET_IDS: dict[str, int] = {
    "medina-v2": game_pb2.RULESET_MEDINA_V2,
    "medina-v1": game_pb2.RULESET_MEDINA_V1,
    "medina-v1-2p": game_pb2.RULESET_MEDINA_V1_2P,
}
RULESET_NAMES: dict[int, str] = {v: k for k, v in RULESET_IDS.items()}

E = TypeVar("E", bound=IntEnum)


def enum_from_proto(cls: type[E], value: int, what: str) -> E:
    """The member of ``cls`` with protobuf number ``value`` (the domain enums share the
    protobuf numbers); ValueError naming ``what`` for 0 (unset) or an unknown number.

    >>> from medina.referee.outcome import Termination
    >>> enum_from_proto(Termination, 2, "termination").name
    'TIMEOUT'
    """
    try:
        return cls(int(value))
    except ValueError:
        known = ", ".join(f"{m.value}={m.name}" for m in cls)
        state = "is not set" if value == 0 else f"{value} is unknown"
        raise ValueError(f"{what} {state} (expected {known})") from None
