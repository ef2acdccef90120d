"""Engine observations <-> protobuf ``Observation``; the way out runs on every decision.

The large parts are built as protobuf wire bytes and merged in one call, which
upb parses far faster than Python can set fields one by one:

* ``Board.cells`` and ``Board.cell_palace`` are packed varints whose values are
  all below 128, so each is one byte: a per-geometry template with the occupied
  squares overwritten bit by bit.
* Events and the other seats' public views repeat from one message to the next
  (every seat is sent every event; public seat views change rarely), so their
  serialized forms are cached by their immutable engine values.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache, lru_cache

from medina.engine import (
    Event,
    Observation,
    PalaceView,
    Phase,
    PlayerView,
    get_ruleset,
    squares,
)
from medina.engine.geometry import Mask, geometry
from medina.v1 import game_pb2

from .enums import RULESET_IDS, RULESET_NAMES
from .events import (
    colour_mask,
    colours,
    event_bytes,
    event_from_proto,
    supply_from_proto,
    supply_to_proto,
)
from .packed import board_bytes, field, key, mask_of, packed, scalar

__all__ = ["observation_from_proto", "observation_to_proto", "seat_to_proto"]

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
_CELLS, _CELL_PALACE, _PALACE_COLOUR, _STREET, _OWNER, _ROOF, _ROOF_SQUARE, _TOWERS, _TIME = (
    key(game_pb2.Board, name)[0]
    for name in (
        "cells",
        "cell_palace",
        "palace_colour",
        "current_street",
        "palace_owner",
        "palace_roof",
        "palace_roof_square",
        "palace_towers",
        "palace_time",
    )
)


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
    palaces = obs.palaces
    if len(palaces) < 0x80:  # ids of one varint byte: every real game
        layers = ((p.buildings | p.stables, pid) for pid, p in enumerate(palaces, start=1))
        cell_palace = field(_CELL_PALACE, board_bytes(0, layers, size))
    else:
        owners = [0] * size
        for pid, p in enumerate(palaces, start=1):
            for sq in squares(p.buildings | p.stables):
                owners[sq] = pid
        cell_palace = packed(_CELL_PALACE, owners)
    return b"".join(
        (
            scalar(_COLS, obs.cols),
            scalar(_ROWS, obs.rows),
            field(_CELLS, cells),
            cell_palace,
            field(_PALACE_COLOUR, bytes([p.colour + 1 for p in palaces])),
            packed(_STREET, squares(obs.street)),
            scalar(_WELL, obs.well),
            packed(_OWNER, [p.owner for p in palaces]),
            field(_ROOF, bytes([p.roof for p in palaces])),
            packed(_ROOF_SQUARE, [p.roof_square for p in palaces]),
            field(_TOWERS, bytes([p.towers for p in palaces])),
            packed(_TIME, [p.time for p in palaces]),
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
    msg = game_pb2.Observation(
        ruleset=RULESET_IDS[obs.ruleset],  # type: ignore[arg-type]
        players=obs.players,
        viewer=obs.viewer,
        phase=int(obs.phase),  # type: ignore[arg-type]
        to_move=obs.to_move,
        turn=obs.turn,
        quota=obs.quota,
        placed=obs.placed,
        palace_tiles=obs.palace_tiles,
        tower_tiles=obs.tower_tiles,
        tower_merchants=obs.tower_merchants,
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
        rooftop_colour=v.rooftop_colour + 1,  # type: ignore[arg-type]
        blocking_colour=v.blocking_colour + 1 if v.blocking_colour >= 0 else 0,  # type: ignore[arg-type]
        rooftops=colours(v.rooftops),  # type: ignore[arg-type]
        blocking_rooftops=colours(v.blocking),  # type: ignore[arg-type]
        neutral_rooftops=v.neutral,
        tea=v.tea,
        out_of_pieces=v.out_of_pieces,
        revealed=v.revealed,
        supply=supply_to_proto(v.supply) if v.supply is not None else None,
    )


def observation_from_proto(msg: game_pb2.Observation) -> Observation:
    """Protobuf observation -> engine observation (for bots that run the engine locally).

    Raises ValueError for an unknown ruleset, phase, cell or palace id, or a board of the
    wrong size.
    """
    ruleset = RULESET_NAMES.get(int(msg.ruleset))
    if ruleset is None:
        raise ValueError(f"observation has unknown ruleset {int(msg.ruleset)}")
    board = msg.board
    g = get_ruleset(ruleset, msg.players).geometry
    if len(board.cells) != g.size or len(board.cell_palace) not in (0, g.size):
        raise ValueError(
            f"observation board has {len(board.cells)} cells, expected {g.size} "
            f"({g.cols}x{g.rows} for {ruleset} with {msg.players} players)"
        )
    masks = _masks(board.cells)
    b = masks[CELL_BUILDING : CELL_BUILDING + 4]
    return Observation(
        ruleset=ruleset,
        players=msg.players,
        viewer=msg.viewer,
        cols=g.cols,
        rows=g.rows,
        phase=Phase(msg.phase),
        to_move=msg.to_move,
        turn=msg.turn,
        quota=msg.quota,
        placed=msg.placed,
        buildings=(b[0], b[1], b[2], b[3]),
        stables=masks[CELL_STABLE],
        merchants=masks[CELL_MERCHANT],
        street=sum(1 << sq for sq in set(board.current_street)),
        walls=masks[CELL_WALL],
        well=board.well,
        palaces=_palaces(board, masks[CELL_STABLE]),
        palace_tiles=tuple(msg.palace_tiles),
        tower_tiles=tuple(msg.tower_tiles),
        tower_merchants=tuple(msg.tower_merchants),
        tea_pool=msg.tea_pool,
        exhausted=colour_mask(msg.exhausted),
        seats=tuple(_seat_from_proto(v) for v in msg.seats),
        events=tuple(event_from_proto(e) for e in msg.events),
        first_event=msg.first_event,
    )


_CELL_CODES = bytes(range(CELL_EMPTY, CELL_STABLE + 1))


def _masks(cells: Sequence[int]) -> list[Mask]:
    """Per cell code, the mask of the squares holding it; ValueError for an unknown code."""
    values = list(cells)
    if values and (min(values) < CELL_EMPTY or max(values) > CELL_STABLE):
        sq = next(sq for sq, c in enumerate(values) if not CELL_EMPTY <= c <= CELL_STABLE)
        raise ValueError(f"observation board: unknown cell value {values[sq]} at square {sq}")
    raw = bytes(values)
    return [mask_of(raw, code) if code else 0 for code in range(CELL_STABLE + 1)]


def _palaces(board: game_pb2.Board, stables: Mask) -> tuple[PalaceView, ...]:
    count = len(board.palace_colour)
    arrays = (
        board.palace_owner,
        board.palace_roof,
        board.palace_roof_square,
        board.palace_towers,
        board.palace_time,
    )
    if any(len(a) != count for a in arrays):
        raise ValueError(f"observation board: palace arrays of unequal length (ids 0..{count})")
    ids = list(board.cell_palace)
    if ids and (min(ids) < 0 or max(ids) > count):
        raise ValueError(f"observation board: cell_palace names palace ids beyond 1..{count}")
    if count < 0x100:
        raw = bytes(ids)
        members = [0, *(mask_of(raw, pid) for pid in range(1, count + 1))]
    else:
        members = [0] * (count + 1)
        for sq, pid in enumerate(ids):
            members[pid] |= 1 << sq
    return tuple(
        PalaceView(
            colour=int(board.palace_colour[i]) - 1,
            buildings=members[i + 1] & ~stables,
            stables=members[i + 1] & stables,
            owner=board.palace_owner[i],
            roof=int(board.palace_roof[i]),
            roof_square=board.palace_roof_square[i],
            towers=board.palace_towers[i],
            time=board.palace_time[i],
        )
        for i in range(count)
    )


def _seat_from_proto(v: game_pb2.SeatView) -> PlayerView:
    return PlayerView(
        seat=v.seat,
        rooftop_colour=int(v.rooftop_colour) - 1,
        blocking_colour=int(v.blocking_colour) - 1,
        rooftops=colour_mask(v.rooftops),
        blocking=colour_mask(v.blocking_rooftops),
        neutral=v.neutral_rooftops,
        tea=v.tea,
        out_of_pieces=v.out_of_pieces,
        revealed=v.revealed,
        supply=supply_from_proto(v.supply) if v.HasField("supply") else None,
    )
