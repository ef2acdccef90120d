"""Actions: engine ``Action`` <-> protobuf ``Action``."""

from __future__ import annotations

from medina.engine import Action, ActionKind
from medina.engine.geometry import Geometry
from medina.v1 import common_pb2, game_pb2

from .enums import colour_from_proto, colour_to_proto

__all__ = ["MalformedActionError", "action_from_proto", "action_to_proto"]


class MalformedActionError(ValueError):
    """A protobuf action that cannot be an action at all (unknown kind, bad square/colour)."""


def action_to_proto(action: Action) -> game_pb2.Action:
    """Engine action -> protobuf."""
    return game_pb2.Action(
        kind=int(action.kind),  # type: ignore[arg-type]
        square=max(action.square, 0),
        colour=colour_to_proto(action.colour),  # type: ignore[arg-type]
    )


_KINDS = {int(k): k for k in ActionKind}
_KIND_NAMES = ", ".join(game_pb2.ActionKind.keys()[1:])
_COLOUR_NAMES = ", ".join(common_pb2.PalaceColour.keys()[1:])


def action_from_proto(msg: game_pb2.Action, geom: Geometry) -> Action:
    """Protobuf action -> engine action, checking only its form (legality is the engine's)."""
    kind = _KINDS.get(int(msg.kind))
    if kind is None:
        what = "is not set" if msg.kind == 0 else f"{int(msg.kind)} is not a known action kind"
        raise MalformedActionError(f"action kind {what} (expected one of {_KIND_NAMES})")
    if kind is ActionKind.TEA:
        return Action(ActionKind.TEA)
    if not 0 <= msg.square < geom.size:
        raise MalformedActionError(
            f"square {msg.square} is off the board (0..{geom.size - 1} on a "
            f"{geom.cols}x{geom.rows} grid)"
        )
    if kind is ActionKind.BUILDING:
        colour = int(msg.colour)
        if not 1 <= colour <= 4:
            what = "is missing" if colour == 0 else f"{colour} is not a palace colour"
            raise MalformedActionError(f"building colour {what} (expected one of {_COLOUR_NAMES})")
        return Action(kind, msg.square, colour_from_proto(colour))
    return Action(kind, msg.square)
