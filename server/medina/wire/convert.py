"""Engine data <-> protobuf: actions, observations, legal actions, events."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

from medina.engine import (
    Action,
    ActionKind,
    Event,
    EventKind,
    LegalMoves,
    Observation,
    PalaceView,
    Phase,
    PlayerView,
    Supply,
    get_ruleset,
    squares,
)
from medina.engine.geometry import Geometry, geometry
from medina.v1 import game_pb2

from .enums import RULESET_IDS, RULESET_NAMES
from .settings import (
    outcome_from_proto,
    outcome_to_proto,
    settings_from_proto,
    settings_to_proto,
)

__all__ = [
    "MalformedActionError",
    "action_from_proto",
    "action_of_event",
    "action_to_proto",
    "actions_from_legal",
    "event_from_proto",
    "event_to_proto",
    "events_to_proto",
    "legal_to_proto",
    "observation_from_proto",
    "observation_to_proto",
    "outcome_from_proto",
    "outcome_to_proto",
    "settings_from_proto",
    "settings_to_proto",
]

CELL_EMPTY = 1
CELL_WALL_SPACE = 2
CELL_WALL = 3
CELL_TOWER = 4
CELL_WELL = 5
CELL_MERCHANT = 6
CELL_BUILDING = 7  # + palace colour 0..3
CELL_STABLE = 11


class MalformedActionError(ValueError):
    """A protobuf action that cannot be an action at all (unknown kind, bad square/colour)."""


# -- actions ----------------------------------------------------------------------------


def action_to_proto(action: Action) -> game_pb2.Action:
    """Engine action -> protobuf (palace colour enum = engine colour + 1)."""
    return game_pb2.Action(
        kind=int(action.kind),  # type: ignore[arg-type]
        square=max(action.square, 0),
        colour=action.colour + 1 if action.colour >= 0 else 0,  # type: ignore[arg-type]
    )


_KINDS = {int(k): k for k in ActionKind}


def action_from_proto(msg: game_pb2.Action, geom: Geometry) -> Action:
    """Protobuf action -> engine action, checking only its form (legality is the engine's)."""
    kind = _KINDS.get(int(msg.kind))
    if kind is None:
        what = "is not set" if msg.kind == 0 else f"{int(msg.kind)} is not a known action kind"
        raise MalformedActionError(f"action kind {what} (expected 1..{len(_KINDS)})")
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
            raise MalformedActionError(f"building colour {what} (expected 1..4)")
        return Action(kind, msg.square, colour - 1)
    return Action(kind, msg.square)


# -- legal actions ------------------------------------------------------------------------

_LEGAL_FIELDS = (
    (ActionKind.ROOFTOP, "rooftop"),
    (ActionKind.NEUTRAL_ROOFTOP, "neutral"),
    (ActionKind.BLOCKING_ROOFTOP, "blocking"),
    (ActionKind.STABLE, "stable"),
    (ActionKind.MERCHANT, "merchant"),
    (ActionKind.WALL, "wall"),
    (ActionKind.START_MERCHANT, "start_merchant"),
)


def legal_to_proto(moves: LegalMoves) -> game_pb2.LegalActions:
    """Legal masks -> one LegalPlacements per non-empty (kind, colour)."""
    out = []
    Placements = game_pb2.LegalPlacements
    for colour, mask in enumerate(moves.buildings):
        if mask:
            out.append(Placements(kind=1, colour=colour + 1, squares=squares(mask)))  # type: ignore[arg-type]
    for kind, field in _LEGAL_FIELDS:
        mask = getattr(moves, field)
        if mask:
            out.append(Placements(kind=int(kind), squares=squares(mask)))  # type: ignore[arg-type]
    return game_pb2.LegalActions(placements=out, tea=moves.tea)


def actions_from_legal(msg: game_pb2.LegalActions) -> list[Action]:
    """Every action listed in a LegalActions message (tea last)."""
    out: list[Action] = []
    for group in msg.placements:
        kind = ActionKind(group.kind)
        colour = int(group.colour) - 1 if kind is ActionKind.BUILDING else -1
        out.extend(Action(kind, sq, colour) for sq in group.squares)
    if msg.tea:
        out.append(Action(ActionKind.TEA))
    return out


# -- events ---------------------------------------------------------------------------------


def supply_to_proto(supply: Supply) -> game_pb2.Supply:
    """Engine supply -> protobuf."""
    return game_pb2.Supply(
        buildings=supply.buildings,
        rooftops=_colours(supply.rooftops),  # type: ignore[arg-type]
        neutral_rooftops=supply.neutral,
        blocking_rooftops=_colours(supply.blocking),  # type: ignore[arg-type]
        stables=supply.stables,
        merchants=supply.merchants,
        walls=supply.walls,
    )


def supply_from_proto(msg: game_pb2.Supply) -> Supply:
    """Protobuf supply -> engine."""
    b = [*msg.buildings, 0, 0, 0, 0]
    return Supply(
        buildings=(b[0], b[1], b[2], b[3]),
        rooftops=_mask(msg.rooftops),
        neutral=msg.neutral_rooftops,
        blocking=_mask(msg.blocking_rooftops),
        stables=msg.stables,
        merchants=msg.merchants,
        walls=msg.walls,
    )


def _colours(mask: int) -> list[int]:
    return [c + 1 for c in range(4) if (mask >> c) & 1]


def _mask(colours: Sequence[int]) -> int:
    out = 0
    for c in colours:
        if 1 <= c <= 4:
            out |= 1 << (c - 1)
    return out


def event_to_proto(index: int, e: Event) -> game_pb2.Event:
    """Engine event -> protobuf (tower number = index + 1; colour enum = colour + 1)."""
    msg = game_pb2.Event(
        index=index,
        kind=int(e.kind),  # type: ignore[arg-type]
        seat=e.seat,
        piece=e.piece,  # type: ignore[arg-type]
        square=e.square,
        colour=e.colour + 1 if e.colour >= 0 else 0,  # type: ignore[arg-type]
        tower=e.tower + 1 if e.tower >= 0 else 0,
        source=e.source,
        target=e.target,
        count=e.count,
    )
    if e.supply is not None:
        msg.supply.CopyFrom(supply_to_proto(e.supply))
    return msg


def events_to_proto(first_index: int, events: Sequence[Event]) -> list[game_pb2.Event]:
    """Consecutive events starting at history index ``first_index``."""
    return [event_to_proto(first_index + i, e) for i, e in enumerate(events)]


def event_from_proto(msg: game_pb2.Event) -> Event:
    """Protobuf event -> engine event."""
    return Event(
        kind=EventKind(msg.kind),
        seat=msg.seat,
        piece=int(msg.piece),
        square=msg.square,
        colour=int(msg.colour) - 1 if msg.colour else -1,
        tower=msg.tower - 1 if msg.tower else -1,
        source=msg.source,
        target=msg.target,
        count=msg.count,
        supply=supply_from_proto(msg.supply) if msg.HasField("supply") else None,
    )


def action_of_event(msg: game_pb2.Event) -> Action | None:
    """The action a history entry records (a placement or a tea break), if any."""
    if msg.kind == game_pb2.EVENT_KIND_TEA_SPENT:
        return Action(ActionKind.TEA)
    if msg.kind != game_pb2.EVENT_KIND_PLACED:
        return None
    kind = ActionKind(msg.piece)
    colour = int(msg.colour) - 1 if kind is ActionKind.BUILDING else -1
    return Action(kind, msg.square, colour)


# -- observations ---------------------------------------------------------------------------


@cache
def _template(cols: int, rows: int) -> tuple[int, ...]:
    g = geometry(cols, rows)
    cells = [CELL_EMPTY] * g.size
    for sq in squares(g.wall_spaces):
        cells[sq] = CELL_WALL_SPACE
    for sq in g.towers:
        cells[sq] = CELL_TOWER
    return tuple(cells)


def observation_to_proto(obs: Observation) -> game_pb2.Observation:
    """Engine observation -> protobuf (runs on every decision: kept lean)."""
    cells = list(_template(obs.cols, obs.rows))
    for sq in squares(obs.walls):
        cells[sq] = CELL_WALL
    for sq in squares(obs.merchants):
        cells[sq] = CELL_MERCHANT
    if obs.well >= 0:
        cells[obs.well] = CELL_WELL
    for colour, mask in enumerate(obs.buildings):
        code = CELL_BUILDING + colour
        for sq in squares(mask):
            cells[sq] = code
    for sq in squares(obs.stables):
        cells[sq] = CELL_STABLE
    owners = [0] * len(cells)
    colours = []
    palace_owner = []
    roofs = []
    roof_squares = []
    towers = []
    times = []
    for pid, p in enumerate(obs.palaces):
        for sq in squares(p.buildings | p.stables):
            owners[sq] = pid + 1
        colours.append(p.colour + 1)
        palace_owner.append(p.owner)
        roofs.append(p.roof)
        roof_squares.append(p.roof_square)
        towers.append(p.towers)
        times.append(p.time)
    board = game_pb2.Board(
        cols=obs.cols,
        rows=obs.rows,
        cells=cells,  # type: ignore[arg-type]
        cell_palace=owners,
        palace_colour=colours,  # type: ignore[arg-type]
        palace_owner=palace_owner,
        palace_roof=roofs,  # type: ignore[arg-type]
        palace_roof_square=roof_squares,
        palace_towers=towers,
        palace_time=times,
        current_street=squares(obs.street),
        well=obs.well,
    )
    return game_pb2.Observation(
        ruleset=RULESET_IDS[obs.ruleset],  # type: ignore[arg-type]
        players=obs.players,
        viewer=obs.viewer,
        phase=int(obs.phase),  # type: ignore[arg-type]
        to_move=obs.to_move,
        turn=obs.turn,
        quota=obs.quota,
        placed=obs.placed,
        board=board,
        palace_tiles=obs.palace_tiles,
        tower_tiles=obs.tower_tiles,
        tower_merchants=obs.tower_merchants,
        tea_pool=obs.tea_pool,
        exhausted=_colours(obs.exhausted),  # type: ignore[arg-type]
        seats=[_seat_to_proto(v) for v in obs.seats],
        events=events_to_proto(obs.first_event, obs.events),
        first_event=obs.first_event,
    )


def _seat_to_proto(v: PlayerView) -> game_pb2.SeatView:
    msg = game_pb2.SeatView(
        seat=v.seat,
        rooftop_colour=v.rooftop_colour + 1,  # type: ignore[arg-type]
        blocking_colour=v.blocking_colour + 1 if v.blocking_colour >= 0 else 0,  # type: ignore[arg-type]
        rooftops=_colours(v.rooftops),  # type: ignore[arg-type]
        blocking_rooftops=_colours(v.blocking),  # type: ignore[arg-type]
        neutral_rooftops=v.neutral,
        tea=v.tea,
        out_of_pieces=v.out_of_pieces,
        revealed=v.revealed,
    )
    if v.supply is not None:
        msg.supply.CopyFrom(supply_to_proto(v.supply))
    return msg


def observation_from_proto(msg: game_pb2.Observation) -> Observation:
    """Protobuf observation -> engine observation (for bots that run the engine locally)."""
    ruleset = RULESET_NAMES.get(int(msg.ruleset))
    if ruleset is None:
        raise ValueError(f"observation has unknown ruleset {int(msg.ruleset)}")
    board = msg.board
    g = get_ruleset(ruleset, msg.players).geometry
    buildings = [0, 0, 0, 0]
    stables = merchants = walls = 0
    for sq, cell in enumerate(board.cells):
        bit = 1 << sq
        if CELL_BUILDING <= cell < CELL_STABLE:
            buildings[cell - CELL_BUILDING] |= bit
        elif cell == CELL_STABLE:
            stables |= bit
        elif cell == CELL_MERCHANT:
            merchants |= bit
        elif cell == CELL_WALL:
            walls |= bit
    members: list[int] = [0] * len(board.palace_colour)
    for sq, owner in enumerate(board.cell_palace):
        if owner:
            members[owner - 1] |= 1 << sq
    palaces = tuple(
        PalaceView(
            colour=int(board.palace_colour[i]) - 1,
            buildings=members[i] & ~stables,
            stables=members[i] & stables,
            owner=board.palace_owner[i],
            roof=int(board.palace_roof[i]),
            roof_square=board.palace_roof_square[i],
            towers=board.palace_towers[i],
            time=board.palace_time[i],
        )
        for i in range(len(members))
    )
    street = 0
    for sq in board.current_street:
        street |= 1 << sq
    seats = tuple(
        PlayerView(
            seat=v.seat,
            rooftop_colour=int(v.rooftop_colour) - 1,
            blocking_colour=int(v.blocking_colour) - 1,
            rooftops=_mask(v.rooftops),
            blocking=_mask(v.blocking_rooftops),
            neutral=v.neutral_rooftops,
            tea=v.tea,
            out_of_pieces=v.out_of_pieces,
            revealed=v.revealed,
            supply=supply_from_proto(v.supply) if v.HasField("supply") else None,
        )
        for v in msg.seats
    )
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
        buildings=(buildings[0], buildings[1], buildings[2], buildings[3]),
        stables=stables,
        merchants=merchants,
        street=street,
        walls=walls,
        well=board.well,
        palaces=palaces,
        palace_tiles=tuple(msg.palace_tiles),
        tower_tiles=tuple(msg.tower_tiles),
        tower_merchants=tuple(msg.tower_merchants),
        tea_pool=msg.tea_pool,
        exhausted=_mask(msg.exhausted),
        seats=seats,
        events=tuple(event_from_proto(e) for e in msg.events),
        first_event=msg.first_event,
    )
