"""Score breakdowns <-> protobuf (results, and every seat's public score in observations)."""

from __future__ import annotations

from medina.engine import Breakdown, PalaceScore
from medina.v1 import game_pb2

from .enums import colour_from_proto, colour_to_proto

__all__ = ["breakdown_from_proto", "breakdown_to_proto"]


def breakdown_to_proto(b: Breakdown) -> game_pb2.ScoreBreakdown:
    """Engine score breakdown -> protobuf."""
    return game_pb2.ScoreBreakdown(
        buildings=b.buildings,
        stables=b.stables,
        walls=b.walls,
        merchants=b.merchants,
        well_bonus=b.well_bonus,
        palace_tiles=b.palace_tiles,
        tower_tiles=b.tower_tiles,
        total=b.total,
        palaces=[
            game_pb2.PalaceScore(
                colour=colour_to_proto(p.colour),  # type: ignore[arg-type]
                rooftop_square=p.square,
                buildings=p.buildings,
                stables=p.stables,
                walls=p.walls,
                merchants=p.merchants,
                well_bonus=p.well_bonus,
                total=p.total,
            )
            for p in b.palaces
        ],
    )


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
