"""``medina_envs.canvas``: the compiled join and the pure-Python one give the same bytes and
the same errors, both are the layout docs/encoding.md defines, and the development install
has the compiled one (setup.py builds it; without it the environments run slower)."""

from __future__ import annotations

import random
from collections.abc import Callable

import numpy as np
import pytest
from medina.engine import apply_action, legal_moves, new_game, observe
from medina.strategies import random_action
from medina.v1 import game_pb2
from medina.wire.shared.legal import legal_bytes
from medina.wire.shared.observation import observation_bytes
from medina_client.encoding import CELLS, COLS, ROWS, encode
from medina_envs import canvas, observer
from medina_envs.observer import encode_state

JOINS: dict[str, Callable[..., bytearray]] = {"python": canvas.join_python, "active": canvas.join}
GRIDS = [(16, 12), (18, 13), (5, 3), (1, 1), (18, 1), (1, 13)]


def reference(masks: list[int], cols: int, rows: int, tail: list[bytes]) -> bytes:
    """The layout written out square by square (docs/encoding.md)."""
    out = bytearray(len(masks) * CELLS)
    for i, m in enumerate(masks):
        for q in range(cols * rows):
            if m >> q & 1:
                out[i * CELLS + (q // cols) * COLS + q % cols] = 1
    return bytes(out) + b"".join(tail)


def test_the_development_install_has_the_compiled_join() -> None:
    assert canvas.COMPILED, (
        "medina_envs._canvas was not built: `make setup` compiles it (it needs a C compiler "
        "and Python's headers); without it the environments use the slower pure-Python join"
    )
    assert canvas.join is not canvas.join_python


@pytest.mark.parametrize(("cols", "rows"), GRIDS)
def test_both_joins_lay_bitboards_out_as_the_encoding_says(cols: int, rows: int) -> None:
    rng = random.Random(f"{cols}x{rows}")
    squares = cols * rows
    full = (1 << squares) - 1
    for _ in range(40):
        masks = [0, full, 1, 1 << (squares - 1)] + [
            rng.getrandbits(squares) & rng.getrandbits(squares) for _ in range(rng.randrange(6))
        ]
        rng.shuffle(masks)
        tail = [bytes(rng.randrange(256) for _ in range(rng.randrange(9))) for _ in range(3)]
        expected = reference(masks, cols, rows, tail)
        for name, join in JOINS.items():
            got = join(masks, cols, rows, COLS, ROWS, tail)
            assert isinstance(got, bytearray), name
            assert bytes(got) == expected, f"{name} join, {cols}x{rows}"
    for join in JOINS.values():  # nothing at all, and a tail alone
        assert join([], cols, rows, COLS, ROWS, ()) == bytearray()
        assert join([], cols, rows, COLS, ROWS, [b"ab", b""]) == bytearray(b"ab")


@pytest.mark.parametrize(
    ("masks", "cols", "rows", "tail", "error", "message"),
    [
        (["1"], 18, 13, (), TypeError, "a bitboard must be an int, not str"),
        ([None], 18, 13, (), TypeError, "a bitboard must be an int, not NoneType"),
        ([-1], 18, 13, (), ValueError, "a bitboard must not be negative"),
        ([1 << 234], 18, 13, (), ValueError, "a bitboard has a square off its grid"),
        ([1 << 192], 16, 12, (), ValueError, "a bitboard has a square off its grid"),
        ([1 << 15], 5, 3, (), ValueError, "a bitboard has a square off its grid"),
        ([1 << 400], 18, 13, (), ValueError, "a bitboard has a square off its grid"),
        ([1], 19, 13, (), ValueError, "a 19 x 13 grid does not fit the 18 x 13 canvas"),
        ([1], 18, 0, (), ValueError, "a 18 x 0 grid does not fit the 18 x 13 canvas"),
        ([1], 18, 13, ["x"], TypeError, "a tail piece must be bytes, not str"),
        ([1], 18, 13, [bytearray(2)], TypeError, "a tail piece must be bytes, not bytearray"),
    ],
)
def test_both_joins_refuse_the_same_inputs_with_the_same_message(
    masks: list[object], cols: int, rows: int, tail: list[object], error: type, message: str
) -> None:
    for name, join in JOINS.items():
        with pytest.raises(error) as raised:
            join(masks, cols, rows, COLS, ROWS, tail)
        assert str(raised.value) == message, name


@pytest.mark.parametrize(("ruleset", "players"), [("medina-v2", 2), ("medina-v1", 4)])
def test_the_python_join_starting_afresh_changes_no_tensor(
    ruleset: str, players: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The pure-Python join keeps canvas rows by value, at most _KEPT_ROWS per grid: held to a
    # few, its cache starts afresh many times a game and every view still equals the wire's
    # (on a grid smaller than the canvas, 16x12, and on one that fills it, 18x13).
    monkeypatch.setattr(observer, "_join", canvas.join_python)
    monkeypatch.setattr(canvas, "_KEPT_ROWS", 5)
    canvas._row_cache.cache_clear()
    try:
        s = new_game(ruleset, players, 4)
        rng = random.Random(4)
        while not s.over:
            seat = s.to_move
            fast = encode_state(s, seat)
            obs = game_pb2.Observation.FromString(
                observation_bytes(observe(s, seat, since=s.n_events))
            )
            wire = encode(obs, game_pb2.LegalActions.FromString(legal_bytes(legal_moves(s))))
            np.testing.assert_array_equal(fast.planes, wire.planes)
            np.testing.assert_array_equal(fast.mask, wire.mask)
            np.testing.assert_array_equal(fast.vector, wire.vector)
            s = apply_action(s, random_action(s, rng))
    finally:
        canvas._row_cache.cache_clear()  # no cache built under the patched bound lingers
