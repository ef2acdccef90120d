"""The encoding (docs/encoding.md) read straight from an engine state, for the environments.

``medina_client.encoding`` defines the encoding on the protobuf messages a bot receives;
building those messages in process costs several times an engine decision, so the
environments read the same facts from the engine state here instead: the allow-list of
``medina.engine.observe`` (the public board, palaces, tiles, tea, every seat's public facts
and scores) plus the viewer's own supply and revealed supplies, nothing else. The tests
check the two agree bit for bit at every decision of many seeded games, for every seat
(``tests/envs/test_observer.py``), so an agent trained here sees exactly what the arena
would send it.

Masks are turned into planes a whole board at a time: the masks' bytes are joined,
unpacked to bits by numpy and gathered onto the canvas.
"""

from __future__ import annotations

import struct
from functools import cache, lru_cache

import numpy as np
import numpy.typing as npt
from medina.engine import GameState, LegalMoves, Phase, legal_moves
from medina.engine.memo import IdentityMemo
from medina.engine.scoring import Breakdown, breakdowns
from medina.engine.state import NEUTRALS, SLOTS
from medina.engine.types import ActionKind
from medina_client.encoding import (
    ACTION_COUNT,
    CELLS,
    COLS,
    ROWS,
    SEAT_OFFSET,
    SEAT_SIZE,
    SEAT_SLOTS,
    TEA_INDEX,
    VECTOR_OFFSET,
    VECTOR_SIZE,
    Encoded,
    Mask,
    Planes,
    Vector,
)

__all__ = ["encode_state", "mask_of", "planes_of", "vector_of"]

#: Bytes per mask: every grid has at most 234 squares (240 bits).
_BYTES = 30
_PLAYER_ROOF = int(ActionKind.ROOFTOP)
_NEUTRAL_ROOF = int(ActionKind.NEUTRAL_ROOFTOP)
_RULESET = {"medina-v2": 0, "medina-v1": 1, "medina-v1-2p": 2}
_ROOFTOPS = SEAT_OFFSET["rooftops"]
_BLOCKING = SEAT_OFFSET["blocking_rooftops"]
_NEUTRALS = SEAT_OFFSET["neutral_rooftops"]
_TEA = SEAT_OFFSET["tea"]
_OUT = SEAT_OFFSET["out_of_pieces"]
_REVEALED = SEAT_OFFSET["revealed"]
_KNOWN = SEAT_OFFSET["supply_known"]
_SUPPLY = SEAT_OFFSET["supply"]
_SCORE = SEAT_OFFSET["score"]
_AT_RULESET = VECTOR_OFFSET["ruleset"]
_AT_PLAYERS = VECTOR_OFFSET["players"]
_AT_PHASE = VECTOR_OFFSET["phase"]
_AT_TO_MOVE = VECTOR_OFFSET["to_move"]
_AT_TURN = VECTOR_OFFSET["turn"]
_AT_QUOTA = VECTOR_OFFSET["quota"]
_AT_PLACED = VECTOR_OFFSET["placed"]
_AT_TEA_POOL = VECTOR_OFFSET["tea_pool"]
_AT_EXHAUSTED = VECTOR_OFFSET["exhausted"]
_AT_PALACE_TILES = VECTOR_OFFSET["palace_tiles"]
_AT_TOWER_TILES = VECTOR_OFFSET["tower_tiles"]
_AT_TOWER_MERCHANTS = VECTOR_OFFSET["tower_merchants"]
_AT_SEAT = tuple(VECTOR_OFFSET[f"seat_{k}"] for k in range(SEAT_SLOTS))
#: The vector's values as float32 bytes, native order as numpy reads them.
_PACK_VECTOR = struct.Struct(f"={VECTOR_SIZE}f").pack
#: A seat's slot of the vector, ``SEAT_SIZE`` values.
Block = tuple[float, ...]
#: A mask of palace colours (bit c: colour c) as four 0/1 values, grey..orange.
_COLOUR_BITS = tuple(tuple(float((m >> c) & 1) for c in range(4)) for m in range(16))


def _bits(masks: list[int], cols: int, rows: int) -> npt.NDArray[np.uint8]:
    """The masks as canvas planes, shape ``(len(masks), ROWS, COLS)``."""
    raw = b"".join([m.to_bytes(_BYTES, "little") for m in masks])
    k = len(masks)
    bits = np.unpackbits(np.frombuffer(raw, dtype=np.uint8), bitorder="little").reshape(
        k, _BYTES * 8
    )
    if cols == COLS and rows == ROWS:
        return bits[:, :CELLS].reshape(k, ROWS, COLS)
    out = np.zeros((k, ROWS, COLS), dtype=np.uint8)
    out[:, :rows, :cols] = bits[:, : cols * rows].reshape(k, rows, cols)
    return out


def _plane_masks(s: GameState, seat: int) -> list[int]:
    """The bitboard of every plane of ``seat``'s view, in ``PLANES`` order."""
    g = s.rules.geometry
    players = s.rules.players
    b0, b1, b2, b3 = s.buildings
    well = 1 << s.well if s.well >= 0 else 0
    occupied = b0 | b1 | b2 | b3 | s.stables | s.merchants | well
    colour = [0, 0, 0, 0]
    unclaimed = neutral = blocked = roofs = 0
    claimed = [0, 0, 0, 0]
    for p in s.palaces:
        m = p.buildings | p.stables
        colour[p.colour] |= m
        roof = p.roof
        if not roof:
            unclaimed |= m
            continue
        roofs |= 1 << p.roof_square
        if roof == _PLAYER_ROOF:
            claimed[(p.owner - seat) % players] |= m
        elif roof == _NEUTRAL_ROOF:
            neutral |= m
        else:
            blocked |= m
    return [
        g.full,
        g.city & ~occupied,
        g.wall_spaces & ~s.walls,
        s.walls,
        g.tower_mask,
        well,
        s.merchants,
        b0,
        b1,
        b2,
        b3,
        s.stables,
        s.street,
        *colour,
        unclaimed,
        *claimed,
        neutral,
        blocked,
        roofs,
    ]


def _action_masks(m: LegalMoves) -> list[int]:
    """The bitboard of every placement slot of the action index, in ``ACTION_SLOTS`` order."""
    return [
        *m.buildings,
        m.rooftop,
        m.neutral,
        m.blocking,
        m.stable,
        m.merchant,
        m.wall,
        m.start_merchant,
    ]


def planes_of(s: GameState, seat: int) -> Planes:
    """The planes of ``seat``'s view of ``s`` (``medina_client.encoding.PLANES``)."""
    g = s.rules.geometry
    return _bits(_plane_masks(s, seat), g.cols, g.rows)


@cache
def _vector_base(ruleset: str, players: int) -> tuple[float, ...]:
    """The entries every vector of a game of ``ruleset`` and ``players`` starts from: its
    ruleset and player count."""
    v = [0.0] * VECTOR_SIZE
    v[_AT_RULESET + _RULESET[ruleset]] = 1.0
    v[_AT_PLAYERS + players - 2] = 1.0
    return tuple(v)


@lru_cache(maxsize=1024)
def _tile_entries(
    palace_tiles: tuple[int, ...], tower_tiles: tuple[int, ...], seat: int, players: int
) -> tuple[int, ...]:
    """The vector entries set to 1 by who holds the tiles, seen from ``seat`` (tiles change
    hands a few times a game, so the answer is kept)."""
    at = [
        _AT_PALACE_TILES + 5 * c + ((holder - seat) % players if holder >= 0 else 4)
        for c, holder in enumerate(palace_tiles)
    ]
    at += [
        _AT_TOWER_TILES + 5 * t + ((holder - seat) % players if holder >= 0 else 4)
        for t, holder in enumerate(tower_tiles)
    ]
    return tuple(at)


#: Seat blocks already built, by the identity of the seat's score and its facts.
_BLOCKS: IdentityMemo[Block] = IdentityMemo()


def _seat_block(
    score: Breakdown,
    roofs: int,
    blocking: int,
    own: tuple[int, ...],
    tea: int,
    revealed: int,
    viewer: bool,
) -> Block:
    """One seat's slot of the vector (``SEAT_FIELDS``). A seat's facts change only when it
    moves or its score does, so blocks are kept: by the score's identity (the entry holds
    the score: ``medina.engine.memo``) and the seat's facts."""
    key = (id(score), roofs, blocking, own, tea, revealed, viewer)
    kept = _BLOCKS.get(key)
    if kept is not None:
        return kept
    v = [0.0] * SEAT_SIZE
    v[0] = 1.0  # present
    v[_ROOFTOPS : _ROOFTOPS + 4] = _COLOUR_BITS[roofs]
    v[_BLOCKING : _BLOCKING + 4] = _COLOUR_BITS[blocking]
    v[_NEUTRALS] = own[NEUTRALS]
    v[_TEA] = tea
    v[_OUT] = not (any(own) or roofs or blocking)  # GameState.pieces_left(seat) == 0
    v[_REVEALED] = revealed
    if viewer or revealed:
        v[_KNOWN] = 1.0
        # buildings grey..orange, stables, merchants, walls: the supply's first 7 slots
        v[_SUPPLY : _SUPPLY + 7] = own[:7]
    v[_SCORE : _SCORE + 8] = (
        score.buildings,
        score.stables,
        score.walls,
        score.merchants,
        score.well_bonus,
        score.palace_tiles,
        score.tower_tiles,
        score.total,
    )
    return _BLOCKS.put(key, score, tuple(v))


def vector_of(s: GameState, seat: int) -> Vector:
    """The vector of ``seat``'s view of ``s`` (``medina_client.encoding.VECTOR_FIELDS``)."""
    rules = s.rules
    players = rules.players
    v = list(_vector_base(rules.name, players))
    v[_AT_PHASE + int(s.phase) - 1] = 1.0
    if s.phase is not Phase.OVER:
        v[_AT_TO_MOVE + (s.to_move - seat) % players] = 1.0
    v[_AT_TURN] = s.turn
    v[_AT_QUOTA] = s.quota
    v[_AT_PLACED] = s.placed
    v[_AT_TEA_POOL] = s.tea_pool
    v[_AT_EXHAUSTED : _AT_EXHAUSTED + 4] = _COLOUR_BITS[s.exhausted]
    for at in _tile_entries(tuple(s.palace_tiles), tuple(s.tower_tiles), seat, players):
        v[at] = 1.0
    v[_AT_TOWER_MERCHANTS : _AT_TOWER_MERCHANTS + 4] = s.tower_merchants
    scores = breakdowns(s)
    supply = s.supply
    roofs, blocking, tea, revealed = s.roofs, s.blocking, s.tea, s.revealed
    for p in range(players):
        base = _AT_SEAT[(p - seat) % players]
        at = p * SLOTS
        v[base : base + SEAT_SIZE] = _seat_block(
            scores[p],
            roofs[p],
            blocking[p],
            tuple(supply[at : at + SLOTS]),
            tea[p],
            (revealed >> p) & 1,
            p == seat,
        )
    # Packed by struct into a buffer numpy adopts: twice as fast as np.fromiter. The
    # bytearray keeps the vector writable, as an agent may normalise it in place.
    return np.frombuffer(bytearray(_PACK_VECTOR(*v)), dtype=np.float32)


def _no_moves() -> Mask:
    return np.zeros(ACTION_COUNT, dtype=np.int8)


def mask_of(s: GameState, seat: int, moves: LegalMoves | None = None) -> Mask:
    """The action mask of ``seat``: its legal actions when it is to move, else all 0."""
    if s.phase is Phase.OVER or s.to_move != seat:
        return _no_moves()
    m = legal_moves(s) if moves is None else moves
    g = s.rules.geometry
    out = np.empty(ACTION_COUNT, dtype=np.int8)
    out[:TEA_INDEX] = _bits(_action_masks(m), g.cols, g.rows).reshape(-1)
    out[TEA_INDEX] = m.tea
    return out


def encode_state(s: GameState, seat: int) -> Encoded:
    """Planes, vector and mask of ``seat``'s view of ``s``."""
    g = s.rules.geometry
    planes = _plane_masks(s, seat)
    if s.phase is Phase.OVER or s.to_move != seat:
        return Encoded(_bits(planes, g.cols, g.rows), vector_of(s, seat), _no_moves())
    # The seat to move: its planes and its action mask unpacked in one pass.
    m = legal_moves(s)
    bits = _bits(planes + _action_masks(m), g.cols, g.rows)
    k = len(planes)
    mask = np.empty(ACTION_COUNT, dtype=np.int8)
    mask[:TEA_INDEX] = bits[k:].reshape(-1)
    mask[TEA_INDEX] = m.tea
    return Encoded(bits[:k], vector_of(s, seat), mask)
