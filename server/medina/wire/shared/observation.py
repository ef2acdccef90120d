"""Engine observations -> protobuf ``Observation``; runs on every decision.

The large parts are built as protobuf wire bytes and merged in one call, which
upb parses far faster than Python can set fields one by one:

* ``Board.cells`` is a packed varint array whose values are all below 128, so
  each is one byte: a per-geometry template with the occupied squares
  overwritten bit by bit.
* Palaces, events and seat views repeat from one message to the next (every seat
  is sent every event; palaces and public seat views change rarely), so their
  serialized forms are kept, found by the identity of the immutable engine objects
  they come from (``medina.engine.memo``).
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
from medina.engine.memo import IdentityMemo
from medina.engine.types import ActionKind
from medina.v1 import game_pb2

from .enums import (
    RULESET_IDS,
    colour_to_proto,
    colours,
    rooftop_colour_to_proto,
    tower_to_proto,
)
from .events import event_bytes, supply_bytes
from .packed import board_bytes, field, key, optional, packed, present, scalar
from .scores import breakdown_bytes

__all__ = ["observation_bytes", "observation_to_proto", "seat_bytes", "seat_to_proto"]

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
_RULESET = key(game_pb2.Observation, "ruleset")[1]
_PLAYERS = key(game_pb2.Observation, "players")[1]
_VIEWER = key(game_pb2.Observation, "viewer")[1]
_PHASE = key(game_pb2.Observation, "phase")[1]
_TO_MOVE = key(game_pb2.Observation, "to_move")[1]
_TURN = key(game_pb2.Observation, "turn")[1]
_QUOTA = key(game_pb2.Observation, "quota")[1]
_PLACED = key(game_pb2.Observation, "placed")[1]
_PALACE_TILES = key(game_pb2.Observation, "palace_tiles")[0]
_TOWER_TILES = key(game_pb2.Observation, "tower_tiles")[0]
_TEA_POOL = key(game_pb2.Observation, "tea_pool")[1]
_EXHAUSTED = key(game_pb2.Observation, "exhausted")[0]
_FIRST_EVENT = key(game_pb2.Observation, "first_event")[1]
_TILE_COLOUR = key(game_pb2.PalaceTile, "colour")[1]
_TILE_HOLDER = key(game_pb2.PalaceTile, "holder")[1]
_TOWER_NUMBER = key(game_pb2.TowerTile, "tower")[1]
_TOWER_HOLDER = key(game_pb2.TowerTile, "holder")[1]
_TOWER_MERCHANTS = key(game_pb2.TowerTile, "merchants")[1]
_STREET = key(game_pb2.Board, "street")[0]
_SEAT = key(game_pb2.SeatView, "seat")[1]
_SEAT_ROOFTOP_COLOUR = key(game_pb2.SeatView, "rooftop_colour")[1]
_SEAT_BLOCKING_COLOUR = key(game_pb2.SeatView, "blocking_colour")[1]
_SEAT_ROOFTOPS = key(game_pb2.SeatView, "rooftops")[0]
_SEAT_BLOCKING = key(game_pb2.SeatView, "blocking_rooftops")[0]
_SEAT_NEUTRAL = key(game_pb2.SeatView, "neutral_rooftops")[1]
_SEAT_TEA = key(game_pb2.SeatView, "tea")[1]
_SEAT_OUT = key(game_pb2.SeatView, "out_of_pieces")[1]
_SEAT_REVEALED = key(game_pb2.SeatView, "revealed")[1]
_SEAT_SUPPLY = key(game_pb2.SeatView, "supply")[0]
_SEAT_SCORE = key(game_pb2.SeatView, "score")[0]

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


#: (index, id(palace view)) -> its field: a view lives as long as its palace (engine.observe)
_PALACE_FIELDS: IdentityMemo[bytes] = IdentityMemo()


def palace_bytes(pid: int, p: PalaceView) -> bytes:
    """One ``Board.palaces`` entry as a length-delimited field, kept by the view's identity."""
    key = (pid, id(p))
    made = _PALACE_FIELDS.get(key)
    if made is not None:
        return made
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
    return _PALACE_FIELDS.put(key, p, field(_PALACES, msg.SerializeToString()))


#: id(an observation's palace views) -> their fields: the views are shared (engine.observe)
_PALACES_FIELDS: IdentityMemo[bytes] = IdentityMemo()


def _palace_fields(palaces: tuple[PalaceView, ...]) -> bytes:
    """Every ``Board.palaces`` entry, kept by the identity of the views' tuple."""
    made = _PALACES_FIELDS.get(id(palaces))
    if made is None:
        made = _PALACES_FIELDS.put(
            id(palaces),
            palaces,
            b"".join([palace_bytes(pid, p) for pid, p in enumerate(palaces)]),
        )
    return made


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
            _palace_fields(obs.palaces),
            packed(_STREET, squares(obs.street)),
            scalar(_WELL, obs.well) if obs.well > 0 else b"",  # square 0 is a tower
        )
    )


#: A seat's view -> its field: the score by identity (scores are kept, engine.scoring),
#: the rest by value. Public views change rarely; the viewer's own changes with its every
#: placement, but the same supplies recur from game to game (they only shrink).
_SEAT_FIELDS: IdentityMemo[bytes] = IdentityMemo()


def _seat_field(v: PlayerView) -> bytes:
    supply = v.supply
    key = (
        v.seat,
        v.rooftop_colour,
        v.blocking_colour,
        v.rooftops,
        v.blocking,
        v.neutral,
        v.tea,
        v.out_of_pieces,
        v.revealed,
        id(v.score),
        None
        if supply is None
        else (
            supply.buildings,
            supply.rooftops,
            supply.neutral,
            supply.blocking,
            supply.stables,
            supply.merchants,
            supply.walls,
        ),
    )
    made = _SEAT_FIELDS.get(key)
    if made is None:
        made = _SEAT_FIELDS.put(key, v.score, field(_SEATS, seat_bytes(v)))
    return made


def seat_bytes(v: PlayerView) -> bytes:
    """A serialized ``SeatView``, built as wire bytes (tests check it against the message
    built field by field): a seat's view changes with each of its placements, so one is
    built at most decisions."""
    return b"".join(
        (
            scalar(_SEAT, v.seat),
            scalar(_SEAT_ROOFTOP_COLOUR, rooftop_colour_to_proto(v.rooftop_colour)),
            scalar(_SEAT_BLOCKING_COLOUR, rooftop_colour_to_proto(v.blocking_colour)),
            packed(_SEAT_ROOFTOPS, list(colours(v.rooftops))),
            packed(_SEAT_BLOCKING, list(colours(v.blocking))),
            scalar(_SEAT_NEUTRAL, v.neutral),
            scalar(_SEAT_TEA, v.tea),
            scalar(_SEAT_OUT, int(v.out_of_pieces)),
            scalar(_SEAT_REVEALED, int(v.revealed)),
            b"" if v.supply is None else present(_SEAT_SUPPLY, supply_bytes(v.supply)),
            b"" if v.score is None else present(_SEAT_SCORE, breakdown_bytes(v.score)),
        )
    )


def _event_field(index: int, e: Event) -> bytes:
    return field(_EVENTS, event_bytes(index, e))


def observation_bytes(obs: Observation) -> bytes:
    """Engine observation -> a serialized protobuf ``Observation``.

    Runs on every decision: the request path writes these bytes to the bot as they are,
    without building a message object (tests check them against a plain field-by-field
    encoding).
    """
    over = obs.phase is Phase.OVER
    first = obs.first_event
    parts = [
        scalar(_RULESET, RULESET_IDS[obs.ruleset]),
        scalar(_PLAYERS, obs.players),
        optional(_VIEWER, obs.viewer),
        scalar(_PHASE, int(obs.phase)),
        b"" if over else optional(_TO_MOVE, obs.to_move),
        scalar(_TURN, obs.turn),
        scalar(_QUOTA, obs.quota),
        scalar(_PLACED, obs.placed),
        field(_BOARD, _board(obs)),
        _tiles(obs.palace_tiles, obs.tower_tiles, obs.tower_merchants),
        scalar(_TEA_POOL, obs.tea_pool),
        packed(_EXHAUSTED, list(colours(obs.exhausted))),
        scalar(_FIRST_EVENT, first),
    ]
    parts.extend(_seat_field(v) for v in obs.seats)
    parts.extend(_event_field(first + i, e) for i, e in enumerate(obs.events))
    return b"".join(parts)


def observation_to_proto(obs: Observation) -> game_pb2.Observation:
    """Engine observation -> protobuf ``Observation`` (parsed from ``observation_bytes``)."""
    return game_pb2.Observation.FromString(observation_bytes(obs))


@lru_cache(maxsize=1024)
def _tiles(
    palace_tiles: tuple[int, ...], tower_tiles: tuple[int, ...], merchants: tuple[int, ...]
) -> bytes:
    """The palace and tower tile fields; they change a few times a game, so cached by value."""
    parts = [
        field(_PALACE_TILES, scalar(_TILE_COLOUR, c + 1) + optional(_TILE_HOLDER, holder))
        for c, holder in enumerate(palace_tiles)
    ]
    parts.extend(
        field(
            _TOWER_TILES,
            scalar(_TOWER_NUMBER, t + 1)
            + optional(_TOWER_HOLDER, holder)
            + scalar(_TOWER_MERCHANTS, m),
        )
        for t, (holder, m) in enumerate(zip(tower_tiles, merchants, strict=True))
    )
    return b"".join(parts)


def seat_to_proto(v: PlayerView) -> game_pb2.SeatView:
    """One seat's public facts (and its supply when the view holds it) -> protobuf (parsed
    from ``seat_bytes``)."""
    return game_pb2.SeatView.FromString(seat_bytes(v))
