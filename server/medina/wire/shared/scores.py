"""Score breakdowns <-> protobuf (results, and every seat's public score in observations)."""

from __future__ import annotations

from medina.engine import Breakdown, PalaceScore
from medina.engine.memo import IdentityMemo
from medina.v1 import game_pb2

from .enums import colour_from_proto, colour_to_proto
from .packed import field, key, scalar

__all__ = ["breakdown_bytes", "breakdown_from_proto", "breakdown_to_proto"]

_SCORE_BUILDINGS = key(game_pb2.ScoreBreakdown, "buildings")[1]
_SCORE_STABLES = key(game_pb2.ScoreBreakdown, "stables")[1]
_SCORE_WALLS = key(game_pb2.ScoreBreakdown, "walls")[1]
_SCORE_MERCHANTS = key(game_pb2.ScoreBreakdown, "merchants")[1]
_SCORE_WELL = key(game_pb2.ScoreBreakdown, "well_bonus")[1]
_SCORE_PALACE_TILES = key(game_pb2.ScoreBreakdown, "palace_tiles")[1]
_SCORE_TOWER_TILES = key(game_pb2.ScoreBreakdown, "tower_tiles")[1]
_SCORE_PALACES = key(game_pb2.ScoreBreakdown, "palaces")[0]
_SCORE_TOTAL = key(game_pb2.ScoreBreakdown, "total")[1]
_PALACE_COLOUR = key(game_pb2.PalaceScore, "colour")[1]
_PALACE_SQUARE = key(game_pb2.PalaceScore, "rooftop_square")[1]
_PALACE_BUILDINGS = key(game_pb2.PalaceScore, "buildings")[1]
_PALACE_STABLES = key(game_pb2.PalaceScore, "stables")[1]
_PALACE_WALLS = key(game_pb2.PalaceScore, "walls")[1]
_PALACE_MERCHANTS = key(game_pb2.PalaceScore, "merchants")[1]
_PALACE_WELL = key(game_pb2.PalaceScore, "well_bonus")[1]
_PALACE_TOTAL = key(game_pb2.PalaceScore, "total")[1]

#: id(a breakdown) -> its serialized message: the engine keeps a seat's breakdown (and each
#: palace's score) while nothing it counts changes (``medina.engine.scoring``).
_BREAKDOWN_BYTES: IdentityMemo[bytes] = IdentityMemo()
_PALACE_SCORE_BYTES: IdentityMemo[bytes] = IdentityMemo()


def breakdown_bytes(b: Breakdown) -> bytes:
    """A serialized ``ScoreBreakdown``, built as wire bytes (tests check it against the
    message built field by field) and kept by the breakdown's identity: every observation
    carries every seat's score."""
    made = _BREAKDOWN_BYTES.get(id(b))
    if made is None:
        parts = [
            scalar(_SCORE_BUILDINGS, b.buildings),
            scalar(_SCORE_STABLES, b.stables),
            scalar(_SCORE_WALLS, b.walls),
            scalar(_SCORE_MERCHANTS, b.merchants),
            scalar(_SCORE_WELL, b.well_bonus),
            scalar(_SCORE_PALACE_TILES, b.palace_tiles),
            scalar(_SCORE_TOWER_TILES, b.tower_tiles),
        ]
        parts.extend(field(_SCORE_PALACES, _palace_score_bytes(p)) for p in b.palaces)
        parts.append(scalar(_SCORE_TOTAL, b.total))
        made = _BREAKDOWN_BYTES.put(id(b), b, b"".join(parts))
    return made


def _palace_score_bytes(p: PalaceScore) -> bytes:
    made = _PALACE_SCORE_BYTES.get(id(p))
    if made is None:
        made = _PALACE_SCORE_BYTES.put(
            id(p),
            p,
            b"".join(
                (
                    scalar(_PALACE_COLOUR, colour_to_proto(p.colour)),
                    scalar(_PALACE_SQUARE, p.square),
                    scalar(_PALACE_BUILDINGS, p.buildings),
                    scalar(_PALACE_STABLES, p.stables),
                    scalar(_PALACE_WALLS, p.walls),
                    scalar(_PALACE_MERCHANTS, p.merchants),
                    scalar(_PALACE_WELL, p.well_bonus),
                    scalar(_PALACE_TOTAL, p.total),
                )
            ),
        )
    return made


def breakdown_to_proto(b: Breakdown) -> game_pb2.ScoreBreakdown:
    """Engine score breakdown -> protobuf (parsed from ``breakdown_bytes``)."""
    return game_pb2.ScoreBreakdown.FromString(breakdown_bytes(b))


def breakdown_from_proto(msg: game_pb2.ScoreBreakdown) -> Breakdown:
    """Protobuf score breakdown -> engine."""
    return Breakdown(
        buildings=msg.buildings,
        stables=msg.stables,
        walls=msg.walls,
        merchants=msg.merchants,
        well_bonus=msg.well_bonus,
        palace_tiles=msg.palace_tiles,
        tower_tiles=msg.tower_tiles,
        palaces=tuple(
            PalaceScore(
                colour=colour_from_proto(p.colour),
                square=p.rooftop_square,
                buildings=p.buildings,
                stables=p.stables,
                walls=p.walls,
                merchants=p.merchants,
                well_bonus=p.well_bonus,
            )
            for p in msg.palaces
        ),
    )
