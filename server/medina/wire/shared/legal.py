"""Legal actions: engine ``LegalMoves`` masks <-> protobuf ``LegalActions``.

Built as wire bytes: each mask's squares become a packed varint list through a
table of the encoded squares of every (byte position, byte value) of a mask, so
a mask costs one lookup per byte of the board instead of one step per square.
"""

from __future__ import annotations

from functools import cache, lru_cache

from medina.engine import Action, ActionKind, LegalMoves
from medina.v1 import game_pb2

from .packed import field, key, scalar, varint

__all__ = ["actions_from_legal", "legal_bytes", "legal_to_proto"]

_FIELDS = (
    (ActionKind.ROOFTOP, "rooftop"),
    (ActionKind.NEUTRAL_ROOFTOP, "neutral"),
    (ActionKind.BLOCKING_ROOFTOP, "blocking"),
    (ActionKind.STABLE, "stable"),
    (ActionKind.MERCHANT, "merchant"),
    (ActionKind.WALL, "wall"),
    (ActionKind.START_MERCHANT, "start_merchant"),
)
_PLACEMENTS = key(game_pb2.LegalActions, "placements")[0]
_TEA = key(game_pb2.LegalActions, "tea")[1]
_KIND = key(game_pb2.LegalPlacements, "kind")[1]
_COLOUR = key(game_pb2.LegalPlacements, "colour")[1]
_SQUARES = key(game_pb2.LegalPlacements, "squares")[0]


@cache
def _squares_of_byte(position: int) -> tuple[bytes, ...]:
    """Per byte value: the varints of the squares ``8 * position + bit`` of its set bits."""
    base = 8 * position
    return tuple(
        b"".join(varint(base + bit) for bit in range(8) if (value >> bit) & 1)
        for value in range(256)
    )


def _packed_squares(mask: int) -> bytes:
    """The squares of ``mask``, increasing, as packed varints."""
    raw = mask.to_bytes((mask.bit_length() + 7) // 8, "little")
    return b"".join([_squares_of_byte(i)[b] for i, b in enumerate(raw) if b])


@lru_cache(maxsize=8192)
def _group(kind: int, colour: int, mask: int) -> bytes:
    """One LegalPlacements field. Kept by value: from one decision to the next most masks
    recur (about 4 in 5 of them, over 128 interleaved 4-player games)."""
    body = scalar(_KIND, kind) + scalar(_COLOUR, colour) + field(_SQUARES, _packed_squares(mask))
    return field(_PLACEMENTS, body)


def legal_bytes(moves: LegalMoves) -> bytes:
    """Legal masks -> a serialized ``LegalActions``: one LegalPlacements per non-empty
    (kind, colour), squares increasing."""
    parts = [
        _group(ActionKind.BUILDING, colour + 1, mask)
        for colour, mask in enumerate(moves.buildings)
        if mask
    ]
    for kind, name in _FIELDS:
        mask = getattr(moves, name)
        if mask:
            parts.append(_group(kind, 0, mask))
    parts.append(scalar(_TEA, int(moves.tea)))
    return b"".join(parts)


def legal_to_proto(moves: LegalMoves) -> game_pb2.LegalActions:
    """Legal masks -> protobuf ``LegalActions`` (parsed from ``legal_bytes``)."""
    return game_pb2.LegalActions.FromString(legal_bytes(moves))


_KINDS = {int(k): k for k in ActionKind}


def actions_from_legal(msg: game_pb2.LegalActions) -> list[Action]:
    """Every action listed in a LegalActions message (tea last); ValueError for an unknown
    kind or a building group without a colour."""
    out: list[Action] = []
    for group in msg.placements:
        kind = _KINDS.get(int(group.kind))
        if kind is None:
            raise ValueError(f"legal actions: unknown action kind {int(group.kind)}")
        colour = int(group.colour) - 1 if kind is ActionKind.BUILDING else -1
        if kind is ActionKind.BUILDING and not 0 <= colour < 4:
            raise ValueError(f"legal actions: building group with colour {int(group.colour)}")
        out.extend(Action(kind, sq, colour) for sq in group.squares)
    if msg.tea:
        out.append(Action(ActionKind.TEA))
    return out
