"""The encoding (docs/encoding.md) read straight from an engine state, for the environments.

``medina_client.encoding`` defines the encoding on the protobuf messages a bot receives;
building those messages in process costs several times an engine decision, so the
environments read the same facts from the engine state here instead: the allow-list of
``medina.engine.observe`` (the public board, palaces, tiles, tea, every seat's public facts
and scores) plus the viewer's own supply and revealed supplies, nothing else. The tests
check the two agree bit for bit at every decision of many seeded games, for every seat
(``tests/envs/test_observer.py``), so an agent trained here sees exactly what the arena
would send it.

A view's bitboards become its planes and action mask in one call (``tensors.join``), which
writes them into the one buffer that also holds the vector; the vector is one call too
(``tensors.vector``). Both are compiled where setup.py found a C compiler; without it the
same in Python (``tensors.join_python``, ``_vector_pieces``).
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from functools import cache, lru_cache

import numpy as np
import numpy.typing as npt
from medina.engine import GameState, LegalMoves, Phase, legal_moves
from medina.engine.memo import IdentityMemo
from medina.engine.scoring import Breakdown, breakdowns
from medina.engine.state import NEUTRALS, SLOTS
from medina.engine.types import ActionKind, Palace
from medina_client.encoding import (
    ACTION_COUNT,
    CELLS,
    COLS,
    PLANE_COUNT,
    ROWS,
    SEAT_OFFSET,
    SEAT_SIZE,
    SEAT_SLOTS,
    VECTOR_OFFSET,
    VECTOR_SIZE,
    Encoded,
    Mask,
    Planes,
    Vector,
)

from . import tensors

__all__ = ["Observer", "encode_state", "mask_of", "planes_of", "slot_masks", "vector_of"]

_PLAYER_ROOF = int(ActionKind.ROOFTOP)
_NEUTRAL_ROOF = int(ActionKind.NEUTRAL_ROOFTOP)
# Read once: an enum member read from its class costs 15 times a global's in Python 3.11.
_OVER = Phase.OVER
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
_AT_PALACE_TILES = VECTOR_OFFSET["palace_tiles"]
_AT_TOWER_TILES = VECTOR_OFFSET["tower_tiles"]
_AT_TOWER_MERCHANTS = VECTOR_OFFSET["tower_merchants"]
# vector_of joins the vector from pieces in this order, so the layout must run so.
if not (
    list(VECTOR_OFFSET)[:12]
    == ["ruleset", "players", "phase", "to_move", "turn", "quota", "placed", "tea_pool",
        "exhausted", "palace_tiles", "tower_tiles", "tower_merchants"]
    and VECTOR_OFFSET["exhausted"] == _AT_TURN + 4
    and _AT_PALACE_TILES == _AT_TURN + 8
    and VECTOR_OFFSET["seat_0"] == _AT_TOWER_MERCHANTS + 4
    and VECTOR_OFFSET["seat_0"] + SEAT_SLOTS * SEAT_SIZE == VECTOR_SIZE
):  # fmt: skip
    raise ImportError("medina_envs.observer does not match the encoding's vector layout")
#: Where the tower tiles' entries begin among the tile entries.
_TOWER_TILES = _AT_TOWER_TILES - _AT_PALACE_TILES
#: A mask of palace colours (bit c: colour c) as four 0/1 values, grey..orange.
_COLOUR_BITS = tuple(tuple(float((m >> c) & 1) for c in range(4)) for m in range(16))


_join = tensors.join

#: Entries each of the observer's memos keeps. An environment observes one game state after
#: state, so only the last few entries ever answer; and every entry pins objects (a palaces
#: tuple and its palaces, a score): kept by the thousand, they were promoted to the garbage
#: collector's oldest generation so often that its full collections cost about 5 µs a step
#: (4-player medina-v1; a tenth of the step), and none ran with 64.
_KEPT = 64


def _bits(masks: list[int], cols: int, rows: int) -> npt.NDArray[np.uint8]:
    """The masks as canvas planes, shape ``(len(masks), ROWS, COLS)``."""
    return np.frombuffer(_join(masks, cols, rows, COLS, ROWS, ()), dtype=np.uint8).reshape(
        len(masks), ROWS, COLS
    )


#: The palaces' planes of a view (``_palace_planes``), by the palaces' identity and the viewer.
_PALACE_PLANES: IdentityMemo[list[int]] = IdentityMemo(kept=_KEPT)


def _palace_planes(palaces: tuple[Palace, ...], seat: int, players: int) -> list[int]:
    """The planes the palaces make in ``seat``'s view, in ``PLANES`` order: each colour's,
    the unclaimed, the claimed by each seat from the viewer on, the neutral, the blocked
    and the rooftops. A wall, a merchant or a tea break leaves the palaces as they were (the
    states share them), so these are found again by identity."""
    key = (id(palaces), seat)
    kept = _PALACE_PLANES.get(key)
    if kept is not None:
        return kept
    colour = [0, 0, 0, 0]
    unclaimed = neutral = blocked = roofs = 0
    claimed = [0, 0, 0, 0]
    for p in palaces:
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
    return _PALACE_PLANES.put(key, palaces, [*colour, unclaimed, *claimed, neutral, blocked, roofs])


def _plane_masks(s: GameState, seat: int) -> list[int]:
    """The bitboard of every plane of ``seat``'s view, in ``PLANES`` order."""
    g = s.rules.geometry
    b0, b1, b2, b3 = s.buildings
    well = 1 << s.well if s.well >= 0 else 0
    merchants, stables, walls = s.merchants, s.stables, s.walls
    return [
        g.full,
        g.city & ~(b0 | b1 | b2 | b3 | stables | merchants | well),
        g.wall_spaces & ~walls,
        walls,
        g.tower_mask,
        well,
        merchants,
        b0,
        b1,
        b2,
        b3,
        stables,
        s.street,
        *_palace_planes(s.palaces, seat, s.rules.players),
    ]


def slot_masks(m: LegalMoves) -> list[int]:
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


#: float32 bytes, native order as numpy reads them (the vector is joined from such pieces).
_F32 = struct.Struct("=f")
_PACK4 = struct.Struct("=4f").pack
#: A mask of palace colours (bit c: colour c) as four 0/1 float32 values, grey..orange.
_COLOUR_BYTES = tuple(_PACK4(*bits) for bits in _COLOUR_BITS)
#: The slots of the seats that are not in the game, by how many there are.
_ABSENT_BYTES = tuple(_F32.pack(0.0) * SEAT_SIZE * k for k in range(SEAT_SLOTS + 1))


def _floats(values: list[float]) -> bytes:
    """``values`` as float32 bytes."""
    return struct.pack(f"={len(values)}f", *values)


@cache
def _one_hots(ruleset: str, players: int, phase: Phase, to_move: int) -> bytes:
    """The vector's first entries, up to ``turn``: the ruleset, the player count, the phase
    and the seat to move (relative to the viewer; -1 when none is), one-hot."""
    v = [0.0] * _AT_TURN
    v[_AT_RULESET + _RULESET[ruleset]] = 1.0
    v[_AT_PLAYERS + players - 2] = 1.0
    v[_AT_PHASE + int(phase) - 1] = 1.0
    if to_move >= 0:
        v[_AT_TO_MOVE + to_move] = 1.0
    return _floats(v)


@lru_cache(maxsize=1024)
def _tile_bytes(
    palace_tiles: tuple[int, ...], tower_tiles: tuple[int, ...], seat: int, players: int
) -> bytes:
    """The vector's tile entries (who holds each palace and tower tile, seen from
    ``seat``); tiles change hands a few times a game, so the answer is kept."""
    v = [0.0] * (_AT_TOWER_MERCHANTS - _AT_PALACE_TILES)
    for c, holder in enumerate(palace_tiles):
        v[5 * c + ((holder - seat) % players if holder >= 0 else 4)] = 1.0
    for t, holder in enumerate(tower_tiles):
        v[_TOWER_TILES + 5 * t + ((holder - seat) % players if holder >= 0 else 4)] = 1.0
    return _floats(v)


@cache
def _seat_facts(
    roofs: int, blocking: int, neutrals: int, tea: int, empty: bool, revealed: int, shown: bool
) -> bytes:
    """A seat slot's entries before its supply (``SEAT_FIELDS`` up to ``supply``) as float32
    bytes: its rooftops, tea and flags; ``empty``: its supply holds nothing."""
    v = [0.0] * _SUPPLY
    v[0] = 1.0  # present
    v[_ROOFTOPS : _ROOFTOPS + 4] = _COLOUR_BITS[roofs]
    v[_BLOCKING : _BLOCKING + 4] = _COLOUR_BITS[blocking]
    v[_NEUTRALS] = neutrals
    v[_TEA] = tea
    v[_OUT] = empty and not (roofs or blocking)  # GameState.pieces_left(seat) == 0
    v[_REVEALED] = revealed
    v[_KNOWN] = shown
    return _floats(v)


#: A seat slot's supply entries: buildings grey..orange, stables, merchants, walls.
_PACK_SUPPLY = struct.Struct("=7f").pack
#: A seat slot's score entries: buildings .. tower tiles, then the total.
_PACK_SCORE = struct.Struct("=8f").pack
#: The supply entries of a supply the viewer does not see.
_HIDDEN_SUPPLY = _PACK_SUPPLY(*[0.0] * 7)
#: A seat slot's score entries as float32 bytes, by the score's identity.
_SCORES: IdentityMemo[bytes] = IdentityMemo(kept=_KEPT)


def _score_entries(score: Breakdown) -> bytes:
    """A seat slot's score entries (``SEAT_FIELDS`` from ``score``) as float32 bytes."""
    return _SCORES.put(
        id(score),
        score,
        _PACK_SCORE(
            score.buildings,
            score.stables,
            score.walls,
            score.merchants,
            score.well_bonus,
            score.palace_tiles,
            score.tower_tiles,
            score.total,
        ),
    )


def _vector_pieces(s: GameState, seat: int) -> list[bytes]:
    """The vector of ``seat``'s view of ``s`` as float32 pieces, in its order."""
    rules = s.rules
    players = rules.players
    phase = s.phase
    scores = breakdowns(s)
    supply = s.supply
    roofs, blocking, tea, revealed = s.roofs, s.blocking, s.tea, s.revealed
    # The vector is joined from float32 pieces in its order (VECTOR_FIELDS), most of them
    # kept from earlier vectors: the head, then the seat slots, the viewer's first and the
    # seats after it in turn.
    pieces = [
        _one_hots(
            rules.name,
            players,
            phase,
            (s.to_move - seat) % players if phase is not _OVER else -1,
        ),
        _PACK4(s.turn, s.quota, s.placed, s.tea_pool),
        _COLOUR_BYTES[s.exhausted],
        _tile_bytes(tuple(s.palace_tiles), tuple(s.tower_tiles), seat, players),
        _PACK4(*s.tower_merchants),
    ]
    # Each seat slot is three pieces: its facts (rooftops, tea, flags; few values, kept by
    # value), its supply (shown to the viewer when its own or revealed) and its score (kept
    # by the score's identity).
    scores_kept = _SCORES.get
    for k in range(players):
        p = (seat + k) % players
        at = p * SLOTS
        own = supply[at : at + SLOTS]
        shown_p = revealed >> p & 1
        shown = not k or shown_p
        score = scores[p]
        pieces += (
            _seat_facts(roofs[p], blocking[p], own[NEUTRALS], tea[p], not any(own), shown_p, shown),
            _PACK_SUPPLY(*own[:7]) if shown else _HIDDEN_SUPPLY,
            scores_kept(id(score)) or _score_entries(score),
        )
    pieces.append(_ABSENT_BYTES[SEAT_SLOTS - players])
    return pieces


#: Every seat's score entries (``_score_entries``), by the identity of the scores' tuple.
_SCORE_ROWS: IdentityMemo[tuple[bytes, ...]] = IdentityMemo(kept=_KEPT)


def _score_rows(scores: tuple[Breakdown, ...]) -> tuple[bytes, ...]:
    """Every seat's score entries as float32 bytes, in seat order."""
    return _SCORE_ROWS.get(id(scores)) or _SCORE_ROWS.put(
        id(scores), scores, tuple([_SCORES.get(id(b)) or _score_entries(b) for b in scores])
    )


def _compiled(vector: Callable[..., bytes]) -> Callable[[GameState, int], list[bytes]]:
    """``_vector_pieces`` as one piece, built by the compiled ``vector``."""

    def pieces(s: GameState, seat: int) -> list[bytes]:
        rules = s.rules
        players = rules.players
        phase = s.phase
        return [
            vector(
                _RULESET[rules.name],
                players,
                phase,
                (s.to_move - seat) % players if phase is not _OVER else -1,
                s.turn,
                s.quota,
                s.placed,
                s.tea_pool,
                s.exhausted,
                s.palace_tiles,
                s.tower_tiles,
                s.tower_merchants,
                seat,
                s.supply,
                s.roofs,
                s.blocking,
                s.tea,
                s.revealed,
                _score_rows(s.score_cache or breakdowns(s)),
            )
        ]

    return pieces


#: The vector of a view as float32 pieces: compiled where it was built.
_vector = _vector_pieces if tensors.vector is None else _compiled(tensors.vector)


def vector_of(s: GameState, seat: int) -> Vector:
    """The vector of ``seat``'s view of ``s`` (``medina_client.encoding.VECTOR_FIELDS``)."""
    # A bytearray keeps the vector writable, as an agent may normalise it in place.
    return np.frombuffer(bytearray().join(_vector(s, seat)), dtype=np.float32)


def _no_moves() -> Mask:
    return np.zeros(ACTION_COUNT, dtype=np.int8)


#: The action mask's last byte, after the slots' rows: the tea bit.
_TEA_BYTE = (b"\x00", b"\x01")


def mask_of(s: GameState, seat: int, moves: LegalMoves | None = None) -> Mask:
    """The action mask of ``seat``: its legal actions when it is to move, else all 0."""
    if s.phase is _OVER or s.to_move != seat:
        return _no_moves()
    m = legal_moves(s) if moves is None else moves
    g = s.rules.geometry
    # The slots' canvas rows end to end are the mask up to TEA_INDEX; the tea bit ends it.
    buf = _join(slot_masks(m), g.cols, g.rows, COLS, ROWS, (_TEA_BYTE[m.tea],))
    return np.frombuffer(buf, dtype=np.int8)


#: The planes' bytes in a view's buffer.
_PLANE_BYTES = PLANE_COUNT * CELLS
#: Where the action mask ends in the buffer of the seat to move: its vector follows,
#: after padding to float32's alignment.
_MASK_END = _PLANE_BYTES + ACTION_COUNT
_MASK_PAD = b"\x00" * (-_MASK_END % 4)
_VECTOR_AT = _MASK_END + len(_MASK_PAD)
#: Where the vector begins in the buffer of a seat not to move (no mask), aligned alike.
_PLANES_PAD = b"\x00" * (-_PLANE_BYTES % 4)
_VECTOR_AT_IDLE = _PLANE_BYTES + len(_PLANES_PAD)
_PLANE_SHAPE = (PLANE_COUNT, ROWS, COLS)
_MASK_SHAPE = (ACTION_COUNT,)
_VECTOR_SHAPE = (VECTOR_SIZE,)
_U8, _I8, _F32_DTYPE = np.dtype(np.uint8), np.dtype(np.int8), np.dtype(np.float32)


def encode_state(s: GameState, seat: int) -> Encoded:
    """Planes, vector and mask of ``seat``'s view of ``s``."""
    g = s.rules.geometry
    planes = _plane_masks(s, seat)
    # One writable buffer holds the view: the planes' canvas rows, the action mask of the
    # seat to move (its slots' rows and the tea byte) and the vector; the three arrays are
    # views of it, which costs less than a buffer and an array for each.
    if s.phase is _OVER or s.to_move != seat:
        buf = _join(planes, g.cols, g.rows, COLS, ROWS, [_PLANES_PAD, *_vector(s, seat)])
        return Encoded(
            np.ndarray(_PLANE_SHAPE, _U8, buf),
            np.ndarray(_VECTOR_SHAPE, _F32_DTYPE, buf, _VECTOR_AT_IDLE),
            _no_moves(),
        )
    m = legal_moves(s)
    planes += slot_masks(m)
    tail = [_TEA_BYTE[m.tea], _MASK_PAD, *_vector(s, seat)]
    buf = _join(planes, g.cols, g.rows, COLS, ROWS, tail)
    return Encoded(
        np.ndarray(_PLANE_SHAPE, _U8, buf),
        np.ndarray(_VECTOR_SHAPE, _F32_DTYPE, buf, _VECTOR_AT),
        np.ndarray(_MASK_SHAPE, _I8, buf, _PLANE_BYTES),
    )


class Observer:
    """``encode_state`` for one environment, which remembers the state it observed last.

    An environment observes a game decision after decision, and most placements change
    nothing that scores (no claimed palace, wall, merchant or tile): the observer hands
    the last state to ``scoring.breakdowns``, which then reuses its scores. The
    encoding is ``encode_state``'s, for any state in any order (tests/envs/test_observer.py);
    what is remembered only saves work. One per environment (not thread-safe).
    """

    __slots__ = ("_last",)

    def __init__(self) -> None:
        self._last: GameState | None = None

    def __call__(self, s: GameState, seat: int) -> Encoded:
        """Planes, vector and mask of ``seat``'s view of ``s``."""
        breakdowns(s, self._last)
        self._last = s
        return encode_state(s, seat)
