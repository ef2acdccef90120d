"""The fixed encoding of a seat's observation and the flat action index (docs/encoding.md).

Everything here is built from the protobuf messages a bot receives — ``Observation`` and
``LegalActions`` — so a remote bot and an in-process environment get the same tensors
(the environments' fast path, ``medina_envs.observer``, is checked equal to this one at
every decision of many games). Seat-relative: the viewer is seat slot 0, the next seat in
play order slot 1, and so on, so one policy plays every seat.

* **planes**: ``uint8`` 0/1, shape ``(PLANE_COUNT, ROWS, COLS)`` = (25, 13, 18); square
  ``row * cols + col`` of the game's grid is cell ``(row, col)`` (the 16 x 12 board of
  medina-v2 with 2 players leaves the last two columns and the last row off the board).
* **vector**: ``float32`` exact small integers, shape ``(VECTOR_SIZE,)`` = (181,).
* **action mask**: ``int8`` 0/1, shape ``(ACTION_COUNT,)`` = (2575,): action
  ``slot * 234 + row * 18 + col`` for the 11 placement slots (4 building colours, rooftop,
  neutral rooftop, blocking rooftop, stable, merchant, wall, start merchant), and 2574 the
  tea break. A rooftop is indexed at the building square the legal list names for its
  palace.

Needs numpy (``pip install medina-client[envs]``); the rest of the SDK does not.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, Final, TypeAlias

import numpy as np
import numpy.typing as npt
from medina.engine import Action, ActionKind
from medina.v1 import game_pb2

#: The version of this encoding; a change to any table below is a new version.
ENCODING_VERSION: Final = 1
#: The canvas every board is drawn on: the largest grid (18 x 13).
ROWS: Final = 13
COLS: Final = 18
CELLS: Final = ROWS * COLS
#: Seat slots in the tensors (the most players any ruleset has); unused slots stay zero.
SEAT_SLOTS: Final = 4

Planes: TypeAlias = npt.NDArray[np.uint8]
Vector: TypeAlias = npt.NDArray[np.float32]
Mask: TypeAlias = npt.NDArray[np.int8]
#: A policy's input, as the environments give it and ``play_policy`` builds it from a
#: request: ``{"observation": {"planes": Planes, "vector": Vector}, "action_mask": Mask}``.
PolicyInput: TypeAlias = dict[str, Any]


class EncodingError(ValueError):
    """An observation, legal list or action index the encoding cannot represent."""


# -- the planes ----------------------------------------------------------------------------

#: Plane names in order, with what a 1 means (docs/encoding.md has the same table).
PLANES: Final[tuple[tuple[str, str], ...]] = (
    ("on_board", "the square exists on this grid"),
    ("empty", "Cell EMPTY: an empty city square"),
    ("wall_space", "Cell WALL_SPACE: an empty wall space of the ring"),
    ("wall", "Cell WALL"),
    ("tower", "Cell TOWER"),
    ("well", "Cell WELL"),
    ("merchant", "Cell MERCHANT"),
    ("building_grey", "Cell BUILDING_GREY"),
    ("building_purple", "Cell BUILDING_PURPLE"),
    ("building_brown", "Cell BUILDING_BROWN"),
    ("building_orange", "Cell BUILDING_ORANGE"),
    ("stable", "Cell STABLE"),
    ("street", "a merchant of the current street (Board.street)"),
    ("palace_grey", "a building or stable of a grey palace"),
    ("palace_purple", "a building or stable of a purple palace"),
    ("palace_brown", "a building or stable of a brown palace"),
    ("palace_orange", "a building or stable of an orange palace"),
    ("unclaimed", "a building or stable of a palace without a rooftop"),
    ("claimed_0", "... of a palace under seat slot 0's own (v1-2p: scoring) rooftop"),
    ("claimed_1", "... under seat slot 1's own rooftop"),
    ("claimed_2", "... under seat slot 2's own rooftop"),
    ("claimed_3", "... under seat slot 3's own rooftop"),
    ("neutral", "... of a palace under a neutral rooftop"),
    ("blocked", "... of a palace under a blocking rooftop (any seat's)"),
    ("rooftop", "the building square carrying a rooftop (Rooftop.square)"),
)
PLANE_COUNT: Final = len(PLANES)
PLANE_INDEX: Final = {name: i for i, (name, _) in enumerate(PLANES)}
#: First plane of the one-hot cell planes (``empty`` .. ``stable``: Cell values 1..11).
CELL_PLANES: Final = PLANE_INDEX["empty"]
STREET: Final = PLANE_INDEX["street"]
PALACE_COLOUR: Final = PLANE_INDEX["palace_grey"]
UNCLAIMED: Final = PLANE_INDEX["unclaimed"]
CLAIMED: Final = PLANE_INDEX["claimed_0"]
NEUTRAL: Final = PLANE_INDEX["neutral"]
BLOCKED: Final = PLANE_INDEX["blocked"]
ROOFTOP: Final = PLANE_INDEX["rooftop"]
#: The highest Cell value this encoding knows (CELL_STABLE).
LAST_CELL: Final = 11

# -- the vector ----------------------------------------------------------------------------

#: Per seat slot: (field, size, what it holds).
SEAT_FIELDS: Final[tuple[tuple[str, int, str], ...]] = (
    ("present", 1, "1 when the slot is a seat of this game"),
    ("rooftops", 4, "palace colours (grey..orange) it may still claim (SeatView.rooftops)"),
    ("blocking_rooftops", 4, "v1-2p: palace colours it may still block"),
    ("neutral_rooftops", 1, "neutral rooftops left"),
    ("tea", 1, "tea tiles held"),
    ("out_of_pieces", 1, "1 when it has no piece left"),
    ("revealed", 1, "v1-2p: 1 once its supply is public"),
    ("supply_known", 1, "1 when the observation holds its supply (the viewer's own, revealed)"),
    ("supply", 7, "buildings grey, purple, brown, orange, stables, merchants, walls (0: unknown)"),
    (
        "score",
        8,
        "buildings, stables, walls, merchants, well bonus, palace tiles, tower tiles, total",
    ),
)
SEAT_SIZE: Final = sum(size for _, size, _ in SEAT_FIELDS)
#: The vector's sections in order: (name, size, what it holds).
VECTOR_FIELDS: Final[tuple[tuple[str, int, str], ...]] = (
    ("ruleset", 3, "one-hot: medina-v2, medina-v1, medina-v1-2p"),
    ("players", 3, "one-hot: 2, 3, 4 players"),
    ("phase", 3, "one-hot: start merchant, placing, over"),
    ("to_move", 4, "one-hot seat slot of the seat to move (all 0 once the game is over)"),
    ("turn", 1, "turns begun so far, passes included"),
    ("quota", 1, "pieces the seat to move must place this turn"),
    ("placed", 1, "pieces it has placed this turn"),
    ("tea_pool", 1, "medina-v2: tea tiles left in the pool"),
    ("exhausted", 4, "palace colours (grey..orange) whose buildings left the game"),
    ("palace_tiles", 20, "per colour grey..orange: one-hot holder slot 0..3, or 4 = board edge"),
    ("tower_tiles", 20, "per tower 1..4: one-hot holder slot 0..3, or 4 = board edge"),
    ("tower_merchants", 4, "medina-v2: merchants still on tower tiles 1..4"),
    *((f"seat_{k}", SEAT_SIZE, f"seat slot {k}: the fields of SEAT_FIELDS") for k in range(4)),
)
VECTOR_SIZE: Final = sum(size for _, size, _ in VECTOR_FIELDS)
#: Upper bound of every vector entry (the observation space's ``high``).
VECTOR_HIGH: Final = 255.0


def _offsets(fields: Iterable[tuple[str, int, str]]) -> dict[str, int]:
    out: dict[str, int] = {}
    at = 0
    for name, size, _ in fields:
        out[name] = at
        at += size
    return out


VECTOR_OFFSET: Final = _offsets(VECTOR_FIELDS)
SEAT_OFFSET: Final = _offsets(SEAT_FIELDS)

# -- the actions ---------------------------------------------------------------------------

#: Placement slots in order: (ActionKind, building colour 0..3 or -1).
ACTION_SLOTS: Final[tuple[tuple[ActionKind, int], ...]] = (
    (ActionKind.BUILDING, 0),
    (ActionKind.BUILDING, 1),
    (ActionKind.BUILDING, 2),
    (ActionKind.BUILDING, 3),
    (ActionKind.ROOFTOP, -1),
    (ActionKind.NEUTRAL_ROOFTOP, -1),
    (ActionKind.BLOCKING_ROOFTOP, -1),
    (ActionKind.STABLE, -1),
    (ActionKind.MERCHANT, -1),
    (ActionKind.WALL, -1),
    (ActionKind.START_MERCHANT, -1),
)
SLOT_OF: Final = {key: i for i, key in enumerate(ACTION_SLOTS)}
#: The tea break's index: right after the placements.
TEA_INDEX: Final = len(ACTION_SLOTS) * CELLS
ACTION_COUNT: Final = TEA_INDEX + 1
_TEA_ACTION = Action(ActionKind.TEA)

#: protobuf Ruleset value -> one-hot position (RULESET_MEDINA_V2 = 1, V1 = 2, V1_2P = 3).
RULESET_SLOTS: Final = {1: 0, 2: 1, 3: 2}
ROOFTOP_PLAYER: Final = int(game_pb2.ROOFTOP_KIND_PLAYER)
ROOFTOP_NEUTRAL: Final = int(game_pb2.ROOFTOP_KIND_NEUTRAL)
ROOFTOP_BLOCKING: Final = int(game_pb2.ROOFTOP_KIND_BLOCKING)


@cache
def canvas_of_squares(cols: int, rows: int) -> npt.NDArray[np.intp]:
    """Canvas cell (``row * 18 + col``) of every square of a ``cols`` x ``rows`` grid."""
    if not (0 < cols <= COLS and 0 < rows <= ROWS):
        raise EncodingError(f"a {cols} x {rows} grid does not fit the {COLS} x {ROWS} canvas")
    sq = np.arange(cols * rows)
    out = (sq // cols) * COLS + sq % cols
    out.setflags(write=False)
    return out


def action_index(action: Action, cols: int, rows: int) -> int:
    """The flat index of an engine action on a ``cols`` x ``rows`` grid.

    >>> from medina.engine import Action, ActionKind
    >>> action_index(Action(ActionKind.WALL, 19), 18, 13)  # wall slot 9, cell (1, 1)
    2125
    """
    if action.kind is ActionKind.TEA:
        return TEA_INDEX
    colour = action.colour if action.kind is ActionKind.BUILDING else -1
    slot = SLOT_OF.get((action.kind, colour))
    if slot is None:
        raise EncodingError(f"no action index for {action}")
    if not 0 <= action.square < cols * rows:
        raise EncodingError(f"square {action.square} is off a {cols} x {rows} grid")
    return slot * CELLS + int(canvas_of_squares(cols, rows)[action.square])


#: What an action index may be (a bool is an int to Python, but never an index).
_INDEX_TYPES = (int, np.integer)


def checked_index(value: object) -> int:
    """The action index ``value`` is, as ``Discrete(ACTION_COUNT)`` holds one: an int, a
    numpy integer or a 0-d numpy integer array (``np.asarray`` of one) in
    0..ACTION_COUNT-1. EncodingError for anything else (a bool, a float, an array of another
    shape, a string, None, an index off the space), naming it. The environments' ``step``
    and ``play_policy`` take an index through this one check.

    >>> checked_index(np.array(19))
    19
    """
    if isinstance(value, np.ndarray) and value.shape == () and value.dtype.kind in "iu":
        value = value[()]
    if not isinstance(value, _INDEX_TYPES) or isinstance(value, bool):
        raise EncodingError(
            f"{value!r} is not an action index (an int, a numpy integer or a 0-d numpy "
            "integer array; never a bool)"
        )
    if not 0 <= value < ACTION_COUNT:
        raise EncodingError(f"action index {value} is outside 0..{ACTION_COUNT - 1}")
    return int(value)


def action_of_index(index: int, cols: int, rows: int) -> Action:
    """The engine action of a flat index on a ``cols`` x ``rows`` grid (EncodingError for an
    index outside the action space or on a cell off this grid)."""
    if index == TEA_INDEX:
        return _TEA_ACTION
    if not 0 <= index < TEA_INDEX:
        raise EncodingError(f"action index {index} is outside 0..{ACTION_COUNT - 1}")
    slot, cell = divmod(int(index), CELLS)
    row, col = divmod(cell, COLS)
    if row >= rows or col >= cols:
        raise EncodingError(
            f"action index {index} names cell ({row}, {col}), off the {cols} x {rows} grid"
        )
    kind, colour = ACTION_SLOTS[slot]
    return Action(kind, row * cols + col, colour)


@cache
def actions_of_indices(cols: int, rows: int) -> tuple[Action | None, ...]:
    """``action_of_index`` of every index of the action space on a ``cols`` x ``rows`` grid,
    None for a cell off that grid: an environment turns an index into its action by one
    lookup."""
    actions: list[Action | None] = []
    for index in range(ACTION_COUNT):
        try:
            actions.append(action_of_index(index, cols, rows))
        except EncodingError:
            actions.append(None)
    return tuple(actions)


def describe_action(index: int) -> str:
    """A short text for an index, without a grid: ``wall at (row 1, col 1)``, ``tea``."""
    if index == TEA_INDEX:
        return "tea"
    if not 0 <= index < TEA_INDEX:
        return f"index {index} (outside the action space)"
    slot, cell = divmod(index, CELLS)
    kind, colour = ACTION_SLOTS[slot]
    what = kind.name.lower().replace("_", " ")
    if colour >= 0:
        what = f"{('grey', 'purple', 'brown', 'orange')[colour]} {what}"
    return f"{what} at (row {cell // COLS}, col {cell % COLS})"


# -- from the protobuf messages ------------------------------------------------------------

#: Cell value -> its one-hot row over the 11 cell planes (unknown values are refused).
_CELL_ONEHOT = np.zeros((LAST_CELL + 1, LAST_CELL), dtype=np.uint8)
_CELL_ONEHOT[np.arange(1, LAST_CELL + 1), np.arange(LAST_CELL)] = 1


@dataclass(frozen=True, slots=True)
class Encoded:
    """One decision's tensors: ``planes``, ``vector`` and the action ``mask``."""

    planes: Planes
    vector: Vector
    mask: Mask

    def policy_input(self) -> PolicyInput:
        """The dict a policy takes (the environments' observation)."""
        return {
            "observation": {"planes": self.planes, "vector": self.vector},
            "action_mask": self.mask,
        }


def _viewer(obs: game_pb2.Observation) -> int:
    if not obs.HasField("viewer"):
        raise EncodingError("the observation has no viewer: the encoding is a seat's view")
    if obs.players not in (2, 3, 4):
        raise EncodingError(f"the observation says {obs.players} players (2..4)")
    if not 0 <= obs.viewer < obs.players:
        raise EncodingError(f"viewer {obs.viewer} is not a seat of {obs.players}")
    return int(obs.viewer)


def encode_planes(obs: game_pb2.Observation) -> Planes:
    """The planes of a seat's protobuf observation (see ``PLANES``)."""
    viewer = _viewer(obs)
    players = obs.players
    board = obs.board
    cols, rows = board.cols, board.rows
    canvas = canvas_of_squares(cols, rows)
    cells = np.asarray(board.cells, dtype=np.intp)
    if cells.shape != (cols * rows,):
        raise EncodingError(f"the board has {cells.shape[0]} cells for {cols} x {rows}")
    if cells.size and (cells.min() < 1 or cells.max() > LAST_CELL):
        raise EncodingError(f"the board holds cell values outside 1..{LAST_CELL}")
    planes = np.zeros((PLANE_COUNT, CELLS), dtype=np.uint8)
    planes[0, canvas] = 1
    planes[CELL_PLANES : CELL_PLANES + LAST_CELL, canvas] = _CELL_ONEHOT[cells].T
    planes[STREET, canvas[_squares(board.street, cols * rows)]] = 1
    for palace in board.palaces:
        where = canvas[_squares([*palace.buildings, *palace.stables], cols * rows)]
        colour = int(palace.colour) - 1
        if not 0 <= colour < 4:
            raise EncodingError(f"palace {palace.id} has colour {int(palace.colour)}")
        planes[PALACE_COLOUR + colour, where] = 1
        if not palace.HasField("rooftop"):
            planes[UNCLAIMED, where] = 1
            continue
        roof = palace.rooftop
        kind = int(roof.kind)
        if kind == ROOFTOP_PLAYER:
            if not roof.HasField("owner"):
                raise EncodingError(f"palace {palace.id} has a player rooftop without owner")
            planes[CLAIMED + (roof.owner - viewer) % players, where] = 1
        elif kind == ROOFTOP_NEUTRAL:
            planes[NEUTRAL, where] = 1
        elif kind == ROOFTOP_BLOCKING:
            planes[BLOCKED, where] = 1
        else:
            raise EncodingError(f"palace {palace.id} has a rooftop of unknown kind {kind}")
        planes[ROOFTOP, canvas[_squares([roof.square], cols * rows)]] = 1
    return planes.reshape(PLANE_COUNT, ROWS, COLS)


def _squares(squares: Sequence[int], size: int) -> npt.NDArray[np.intp]:
    out = np.asarray(squares, dtype=np.intp)
    if out.size and (out.min() < 0 or out.max() >= size):
        raise EncodingError(f"square outside 0..{size - 1} in {list(squares)}")
    return out


def encode_vector(obs: game_pb2.Observation) -> Vector:
    """The vector of a seat's protobuf observation (see ``VECTOR_FIELDS``)."""
    viewer = _viewer(obs)
    players = obs.players
    v = np.zeros(VECTOR_SIZE, dtype=np.float32)
    at = VECTOR_OFFSET
    ruleset = RULESET_SLOTS.get(int(obs.ruleset))
    if ruleset is None:
        raise EncodingError(f"unknown ruleset {int(obs.ruleset)}")
    v[at["ruleset"] + ruleset] = 1
    v[at["players"] + players - 2] = 1
    if not 1 <= obs.phase <= 3:
        raise EncodingError(f"unknown phase {int(obs.phase)}")
    v[at["phase"] + obs.phase - 1] = 1
    if obs.HasField("to_move"):
        v[at["to_move"] + (obs.to_move - viewer) % players] = 1
    v[at["turn"]] = obs.turn
    v[at["quota"]] = obs.quota
    v[at["placed"]] = obs.placed
    v[at["tea_pool"]] = obs.tea_pool
    for colour in obs.exhausted:
        v[at["exhausted"] + _colour(colour)] = 1
    for tile in obs.palace_tiles:
        holder = (tile.holder - viewer) % players if tile.HasField("holder") else 4
        v[at["palace_tiles"] + 5 * _colour(tile.colour) + holder] = 1
    for tower in obs.tower_tiles:
        t = tower.tower - 1
        if not 0 <= t < 4:
            raise EncodingError(f"unknown tower {tower.tower}")
        holder = (tower.holder - viewer) % players if tower.HasField("holder") else 4
        v[at["tower_tiles"] + 5 * t + holder] = 1
        v[at["tower_merchants"] + t] = tower.merchants
    for view in obs.seats:
        if not 0 <= view.seat < players:
            raise EncodingError(f"seat view of seat {view.seat} in a {players}-player game")
        _seat(v, at[f"seat_{(view.seat - viewer) % players}"], view)
    return v


def _colour(wire: int) -> int:
    colour = int(wire) - 1
    if not 0 <= colour < 4:
        raise EncodingError(f"palace colour {int(wire)} is not one of 1..4")
    return colour


def _seat(v: Vector, base: int, view: game_pb2.SeatView) -> None:
    at = SEAT_OFFSET
    v[base + at["present"]] = 1
    for colour in view.rooftops:
        v[base + at["rooftops"] + _colour(colour)] = 1
    for colour in view.blocking_rooftops:
        v[base + at["blocking_rooftops"] + _colour(colour)] = 1
    v[base + at["neutral_rooftops"]] = view.neutral_rooftops
    v[base + at["tea"]] = view.tea
    v[base + at["out_of_pieces"]] = view.out_of_pieces
    v[base + at["revealed"]] = view.revealed
    if view.HasField("supply"):
        s = view.supply
        b = s.buildings
        v[base + at["supply_known"]] = 1
        v[base + at["supply"] : base + at["supply"] + 7] = (
            b.grey,
            b.purple,
            b.brown,
            b.orange,
            s.stables,
            s.merchants,
            s.walls,
        )
    if view.HasField("score"):
        c = view.score
        v[base + at["score"] : base + at["score"] + 8] = (
            c.buildings,
            c.stables,
            c.walls,
            c.merchants,
            c.well_bonus,
            c.palace_tiles,
            c.tower_tiles,
            c.total,
        )


def encode_mask(
    legal: game_pb2.LegalActions,
    cols: int,
    rows: int,
    excluded: Iterable[Action] = (),
) -> Mask:
    """The action mask of a protobuf legal list on a ``cols`` x ``rows`` grid: 1 exactly at
    the listed actions (minus ``excluded``, the ones the server already refused)."""
    canvas = canvas_of_squares(cols, rows)
    mask = np.zeros(ACTION_COUNT, dtype=np.int8)
    for group in legal.placements:
        kind_value = int(group.kind)
        try:
            kind = ActionKind(kind_value)
        except ValueError:
            raise EncodingError(f"legal actions name unknown action kind {kind_value}") from None
        colour = int(group.colour) - 1 if kind is ActionKind.BUILDING else -1
        slot = SLOT_OF.get((kind, colour))
        if slot is None:
            raise EncodingError(f"no action slot for {kind.name} colour {int(group.colour)}")
        mask[slot * CELLS + canvas[_squares(group.squares, cols * rows)]] = 1
    if legal.tea:
        mask[TEA_INDEX] = 1
    for action in excluded:
        mask[action_index(action, cols, rows)] = 0
    return mask


def encode(
    obs: game_pb2.Observation,
    legal: game_pb2.LegalActions | None = None,
    excluded: Iterable[Action] = (),
) -> Encoded:
    """Planes, vector and mask of one decision (the mask is all 0 without a legal list)."""
    cols, rows = obs.board.cols, obs.board.rows
    mask = (
        encode_mask(legal, cols, rows, excluded)
        if legal is not None
        else np.zeros(ACTION_COUNT, dtype=np.int8)
    )
    return Encoded(encode_planes(obs), encode_vector(obs), mask)


def legal_indices(mask: Mask) -> npt.NDArray[np.intp]:
    """The indices a mask allows, increasing."""
    return np.flatnonzero(mask)


def as_policy_input(value: Mapping[str, Any]) -> PolicyInput:
    """``value`` checked to be a policy input (the two keys, arrays of the right shapes)."""
    try:
        features = value["observation"]
        shapes = (
            np.shape(features["planes"]),
            np.shape(features["vector"]),
            np.shape(value["action_mask"]),
        )
    except (KeyError, TypeError) as exc:
        raise EncodingError(f"not a policy input (missing {exc})") from None
    expected = ((PLANE_COUNT, ROWS, COLS), (VECTOR_SIZE,), (ACTION_COUNT,))
    if shapes != expected:
        raise EncodingError(f"policy input shapes {shapes}, expected {expected}")
    return dict(value)
