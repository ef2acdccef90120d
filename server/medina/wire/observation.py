"""Engine observations -> protobuf ``Observation``; runs on every decision.

The large parts are built as protobuf wire bytes and merged in one call, which
upb parses far faster than Python can set fields one by one:

* ``Board.cells`` is a packed varint array whose values are all below 128, so
  each is one byte: a per-geometry template with the occupied squares
  overwritten bit by bit.
* Palaces, events and the other seats' public views repeat from one message to
  the next (every seat is sent every event; palaces and public seat views change
  rarely), so their serialized forms are cached by their immutable engine values.
"""

from __future__ import annotations

from functools import cache, lru_cache

from medina.engine import (
    Event,
    Observation,
    PalaceView,
    Phase,
    PlayerView,
    squares,
)
from medina.engine.geometry import geometry
from medina.engine.types import ActionKind
from medina.v1 import game_pb2

from .enums import (
    RULESET_IDS,
    colour_to_proto,
    colours,
    rooftop_colour_to_proto,
    seat_or_none,
    tower_to_proto,
)
from .events import event_bytes, supply_to_proto
from .packed import board_bytes, field, key, packed, scalar

__all__ = ["observation_to_proto", "seat_to_proto"]

CELL_EMPTY = game_pb2.CELL_EMPTY
CELL_WALL_SPACE = game_pb2.CELL_WALL_SPACE
CELL_WALL = game_pb2.CELL_WALL
CELL_TOWER = game_pb2.CELL_TOWER
CELL_WELL = game_pb2.CELL_WELL
CELL_MERCHANT = game_pb2.CELL_MERCHANT
CELL_BUILDING = game_pb2.CELL_BUILDING_GREY  # + palace colour 0..3
CELL_STABLE = game_pb2.CELL_STABLE

_BOARD = key(game_pb2.Observation, "board")[0]
_SEATS = key(game_pb2.Observation, "seats")[0]
_EVENTS = key(game_pb2.Observation, "events")[0]
_COLS = key(game_pb2.Board, "cols")[1]
_ROWS = key(game_pb2.Board, "rows")[1]
_WELL = key(game_pb2.Board, "well")[1]
_CELLS = key(game_pb2.Board, "cells")[0]
_PALACES = key(game_pb2.Board, "palaces")[0]
_STREET = key(game_pb2.Board, "street")[0]

#: Engine rooftop kinds (the ActionKind that placed it) -> RooftopKind.
_ROOFTOP_KINDS = {
    int(ActionKind.ROOFTOP): game_pb2.ROOFTOP_KIND_PLAYER,
    int(ActionKind.NEUTRAL_ROOFTOP): game_pb2.ROOFTOP_KIND_NEUTRAL,
    int(ActionKind.BLOCKING_ROOFTOP): game_pb2.ROOFTOP_KIND_BLOCKING,
}


@cache
def _template(cols: int, rows: int) -> int:
    """Cell codes of an empty board (city squares, wall spaces, towers), one byte per square."""
    g = geometry(cols, rows)
    cells = bytearray([CELL_EMPTY]) * g.size
    for sq in squares(g.wall_spaces):
        cells[sq] = CELL_WALL_SPACE
    for sq in g.towers:
        cells[sq] = CELL_TOWER
    return int.from_bytes(cells, "little")


@lru_cache(maxsize=4096)
def palace_bytes(pid: int, p: PalaceView) -> bytes:
    """One ``Board.palaces`` entry as a length-delimited field, cached by its value."""
    msg = game_pb2.Palace(
        id=pid,
        colour=colour_to_proto(p.colour),  # type: ignore[arg-type]
        buildings=squares(p.buildings),
        stables=squares(p.stables),
        towers=[tower_to_proto(t) for t in range(4) if (p.towers >> t) & 1],
        tie_break_placement=p.time,
    )
    if p.roof:
        msg.rooftop.kind = _ROOFTOP_KINDS[p.roof]
        msg.rooftop.square = p.roof_square
        if p.owner >= 0:
            msg.rooftop.owner = p.owner
    return field(_PALACES, msg.SerializeToString())


def _board(obs: Observation) -> bytes:
    """The whole ``Board`` message as wire bytes."""
    size = obs.cols * obs.rows
    b = obs.buildings
    base = _template(obs.cols, obs.rows)
    if obs.well >= 0:
        base += (CELL_WELL - CELL_EMPTY) << (8 * obs.well)
    cells = board_bytes(
        base,
        (
            (obs.walls, CELL_WALL - CELL_WALL_SPACE),
            (obs.merchants, CELL_MERCHANT - CELL_EMPTY),
            (b[0], CELL_BUILDING - CELL_EMPTY),
            (b[1], CELL_BUILDING + 1 - CELL_EMPTY),
            (b[2], CELL_BUILDING + 2 - CELL_EMPTY),
            (b[3], CELL_BUILDING + 3 - CELL_EMPTY),
            (obs.stables, CELL_STABLE - CELL_EMPTY),
        ),
        size,
    )
    return b"".join(
        (
            scalar(_COLS, obs.cols),
            scalar(_ROWS, obs.rows),
            field(_CELLS, cells),
            *(palace_bytes(pid, p) for pid, p in enumerate(obs.palaces)),
            packed(_STREET, squares(obs.street)),
            scalar(_WELL, obs.well) if obs.well > 0 else b"",  # square 0 is a tower
        )
    )


def _seat_field(v: PlayerView) -> bytes:
    if v.supply is not None:  # the viewer's own supply changes with its every placement
        return field(_SEATS, seat_to_proto(v).SerializeToString())
    return _public_seat_field(
        v.seat,
        v.rooftop_colour,
        v.blocking_colour,
        v.rooftops,
        v.blocking,
        v.neutral,
        v.tea,
        v.out_of_pieces,
        v.revealed,
    )


@lru_cache(maxsize=1024)
def _public_seat_field(
    seat: int,
    rooftop_colour: int,
    blocking_colour: int,
    rooftops: int,
    blocking: int,
    neutral: int,
    tea: int,
    out_of_pieces: bool,
    revealed: bool,
) -> bytes:
    """A seat view without supply: these change rarely, so they are cached by value."""
    view = PlayerView(
        seat,
        rooftop_colour,
        blocking_colour,
        rooftops,
        blocking,
        neutral,
        tea,
        out_of_pieces,
        revealed,
        supply=None,
    )
    return field(_SEATS, seat_to_proto(view).SerializeToString())


def _event_field(index: int, e: Event) -> bytes:
    return field(_EVENTS, event_bytes(index, e))


def observation_to_proto(obs: Observation) -> game_pb2.Observation:
    """Engine observation -> protobuf (runs on every decision: kept lean)."""
    over = obs.phase is Phase.OVER
    msg = game_pb2.Observation(
        ruleset=RULESET_IDS[obs.ruleset],  # type: ignore[arg-type]
        players=obs.players,
        viewer=seat_or_none(obs.viewer),
        phase=int(obs.phase),  # type: ignore[arg-type]
        to_move=None if over else obs.to_move,
        turn=obs.turn,
        quota=obs.quota,
        placed=obs.placed,
        palace_tiles=[
            game_pb2.PalaceTile(colour=c + 1, holder=seat_or_none(h))  # type: ignore[arg-type]
            for c, h in enumerate(obs.palace_tiles)
        ],
        tower_tiles=[
            game_pb2.TowerTile(tower=t + 1, holder=seat_or_none(h), merchants=m)
            for t, (h, m) in enumerate(zip(obs.tower_tiles, obs.tower_merchants, strict=True))
        ],
        tea_pool=obs.tea_pool,
        exhausted=colours(obs.exhausted),  # type: ignore[arg-type]
        first_event=obs.first_event,
    )
    first = obs.first_event
    parts = [field(_BOARD, _board(obs))]
    parts.extend(_seat_field(v) for v in obs.seats)
    parts.extend(_event_field(first + i, e) for i, e in enumerate(obs.events))
    msg.MergeFromString(b"".join(parts))
    return msg


def seat_to_proto(v: PlayerView) -> game_pb2.SeatView:
    """One seat's public facts (and its supply when the view holds it) -> protobuf."""
    return game_pb2.SeatView(
        seat=v.seat,
        rooftop_colour=rooftop_colour_to_proto(v.rooftop_colour),  # type: ignore[arg-type]
        blocking_colour=rooftop_colour_to_proto(v.blocking_colour),  # type: ignore[arg-type]
        rooftops=colours(v.rooftops),  # type: ignore[arg-type]
        blocking_rooftops=colours(v.blocking),  # type: ignore[arg-type]
        neutral_rooftops=v.neutral,
        tea=v.tea,
        out_of_pieces=v.out_of_pieces,
        revealed=v.revealed,
        supply=supply_to_proto(v.supply) if v.supply is not None else None,
    )
