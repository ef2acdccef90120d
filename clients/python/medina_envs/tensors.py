"""The compiled parts of the observer (``_tensors.c``) and the pure-Python rows they replace.

**Rows.** A bitboard is a non-negative int whose bit ``q`` is square ``q`` of a ``cols`` x
``rows`` grid (row-major). Its canvas row is ``CELLS`` bytes of 0/1: grid row ``r`` at canvas
row ``r``, each padded with 0 to the canvas's ``COLS``, then the canvas's missing rows as 0:
how the planes and the action mask of docs/encoding.md are laid out. ``join`` turns a view's
bitboards (and the bytes that follow them in the view's buffer) into one buffer.

**The vector.** ``vector`` (or None) builds a view's vector from the engine state's fields;
``observer._vector_pieces`` is the same in Python.

Both are the compiled ``medina_envs._tensors`` when it was built (``COMPILED``; setup.py
builds it where a C compiler is found), else ``join_python`` and None: the same bytes and
the same errors (tests/envs/test_tensors.py), a few times slower. The compiled vector's
layout is checked against ``medina_client.encoding`` here, when it is loaded.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache
from types import ModuleType
from typing import Final, TypeAlias

from medina.engine.state import NEUTRALS, SLOTS
from medina_client.encoding import (
    CELLS,
    COLS,
    ROWS,
    SEAT_OFFSET,
    SEAT_SIZE,
    VECTOR_OFFSET,
    VECTOR_SIZE,
)

__all__ = ["COMPILED", "Join", "LayoutError", "join", "join_python", "vector"]

#: ``join(masks, cols, rows, canvas_cols, canvas_rows, tail)``.
Join: TypeAlias = Callable[[Sequence[int], int, int, int, int, Sequence[bytes]], bytearray]

#: bytes.translate table turning ``bin()``'s digits into 0/1 bytes.
_DIGITS = bytes.maketrans(b"01", b"\x00\x01")
#: A canvas row of zeros: most bitboards are empty (a seat's claims, most placement slots).
_ZERO_ROW = bytes(CELLS)
#: The largest number of rows ``_RowCache`` keeps per grid before it starts afresh.
_KEPT_ROWS = 8192


def _check(mask: object, squares: int) -> None:
    """Refuse what is not a bitboard of a grid of ``squares`` squares, as the compiled join
    does: TypeError for a non-int, ValueError for a negative int or a square off the grid."""
    if not isinstance(mask, int):
        raise TypeError(f"a bitboard must be an int, not {type(mask).__name__}")
    if mask < 0:
        raise ValueError("a bitboard must not be negative")
    if mask.bit_length() > squares:
        raise ValueError("a bitboard has a square off its grid")


#: The types of a view's bitboards (a bool is an int too).
_INT_TYPES = frozenset((int, bool))


class _RowCache:
    """Bitboards of one grid as canvas rows, kept by value (from one decision to the next
    only a few of a view's bitboards change, so most rows are found here)."""

    __slots__ = ("_cells", "_cols", "_rows", "get")

    def __init__(self, cols: int, rows: int) -> None:
        self._cols, self._cells = cols, cols * rows
        self._rows: dict[int, bytes] = {0: _ZERO_ROW}
        self.get = self._rows.get

    def row(self, mask: int) -> bytes:
        """The canvas row of ``mask`` (a miss: check it, build it and keep it)."""
        _check(mask, self._cells)
        rows = self._rows
        if len(rows) >= _KEPT_ROWS:  # bounded: a long run sees endless bitboards
            rows.clear()
            rows[0] = _ZERO_ROW
        # bin() lists the bits from the highest: reversed, its digits are squares 0, 1, ...
        bits = bin(mask)[:1:-1].encode().translate(_DIGITS)
        cols = self._cols
        if cols == COLS:
            row = bits.ljust(CELLS, b"\x00")
        else:  # grid rows joined by the padding that fills each to the canvas's width
            grid = bits.ljust(self._cells, b"\x00")
            pad = bytes(COLS - cols)
            row = pad.join([grid[at : at + cols] for at in range(0, self._cells, cols)]).ljust(
                CELLS, b"\x00"
            )
        rows[mask] = row
        return row


@cache
def _row_cache(cols: int, rows: int) -> _RowCache:
    """The row cache of the grid of ``cols`` x ``rows``."""
    return _RowCache(cols, rows)


def join_python(
    masks: Sequence[int], cols: int, rows: int, canvas_cols: int, canvas_rows: int,
    tail: Sequence[bytes],
) -> bytearray:  # fmt: skip
    """The canvas rows of ``masks`` end to end, then the pieces of ``tail``, as one
    buffer; the pure-Python ``join``. TypeError for a bitboard that is not an int or a
    piece that is not bytes, ValueError for a negative bitboard, one with a square off its
    grid or a grid that does not fit the canvas."""
    if (canvas_cols, canvas_rows) != (COLS, ROWS):
        raise ValueError(f"the canvas is {COLS} x {ROWS}, not {canvas_cols} x {canvas_rows}")
    if not (0 < cols <= COLS and 0 < rows <= ROWS):
        raise ValueError(f"a {cols} x {rows} grid does not fit the {COLS} x {ROWS} canvas")
    for piece in tail:
        if not isinstance(piece, bytes):
            raise TypeError(f"a tail piece must be bytes, not {type(piece).__name__}")
    if not _INT_TYPES.issuperset(map(type, masks)):
        # Not all plain ints: check them in order, as the compiled join does (1.0 == 1 would
        # otherwise find the row of 1 in the cache).
        for m in masks:
            _check(m, cols * rows)
    cache = _row_cache(cols, rows)
    get, row = cache.get, cache.row
    return bytearray().join([get(m) or row(m) for m in masks] + list(tail))


class LayoutError(ImportError):
    """The compiled vector's layout is not ``medina_client.encoding``'s (rebuild it)."""


def _compiled() -> ModuleType | None:
    """The compiled module, or None where it was not built (no C compiler); LayoutError if
    its vector's layout differs from the encoding's."""
    try:
        from . import _tensors
    except ImportError:
        return None
    vector_at, seat_at, (slots, neutrals, seat_size) = _tensors.LAYOUT
    expected_vector = {k: v for k, v in VECTOR_OFFSET.items() if k in vector_at}
    if (
        vector_at != {**expected_vector, "size": VECTOR_SIZE}
        or seat_at != SEAT_OFFSET
        or (slots, neutrals, seat_size) != (SLOTS, NEUTRALS, SEAT_SIZE)
    ):
        raise LayoutError(
            f"medina_envs._tensors ({_tensors.__file__}) was built for another layout of the "
            "vector than medina_client.encoding's: rebuild it (make setup)"
        )
    return _tensors


_TENSORS = _compiled()
#: Whether ``join`` and ``vector`` are the compiled ones.
COMPILED: Final = _TENSORS is not None
#: ``join(masks, cols, rows, canvas_cols, canvas_rows, tail)``: the canvas rows of ``masks``
#: end to end, then the pieces of ``tail``, as one buffer (``join_python`` says more).
join: Final[Join] = join_python if _TENSORS is None else _TENSORS.join
#: The compiled vector (``_tensors.c`` says its arguments), None where it was not built.
vector: Final[Callable[..., bytes] | None] = None if _TENSORS is None else _TENSORS.vector
