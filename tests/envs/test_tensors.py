"""``medina_envs.tensors``: the compiled join and vector and their pure-Python equivalents give
the same bytes and the same errors, both are the layout docs/encoding.md defines, and the
development install has the compiled ones (setup.py builds them; without them the
environments run slower)."""

from __future__ import annotations

import random
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Callable
from pathlib import Path

import medina_envs
import numpy as np
import pytest
from medina.engine import CONFIGURATIONS, apply_action, legal_moves, new_game, observe
from medina.strategies import random_action
from medina.v1 import game_pb2
from medina.wire.shared.legal import legal_bytes
from medina.wire.shared.observation import observation_bytes
from medina_client.encoding import CELLS, COLS, ROWS, SEAT_OFFSET, VECTOR_SIZE, encode
from medina_envs import observer, tensors
from medina_envs.observer import encode_state

JOINS: dict[str, Callable[..., bytearray]] = {"python": tensors.join_python, "active": tensors.join}
GRIDS = [(16, 12), (18, 13), (5, 3), (1, 1), (18, 1), (1, 13)]


def reference(masks: list[int], cols: int, rows: int, tail: list[bytes]) -> bytes:
    """The layout written out square by square (docs/encoding.md)."""
    out = bytearray(len(masks) * CELLS)
    for i, m in enumerate(masks):
        for q in range(cols * rows):
            if m >> q & 1:
                out[i * CELLS + (q // cols) * COLS + q % cols] = 1
    return bytes(out) + b"".join(tail)


def test_the_development_install_has_the_compiled_tensors() -> None:
    assert tensors.COMPILED, (
        "medina_envs._tensors was not built: `make setup` compiles it (it needs a C compiler "
        "and Python's headers); without it the environments use the slower pure-Python code"
    )
    assert tensors.join is not tensors.join_python
    assert tensors.vector is not None and observer._vector is not observer._vector_pieces


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
        ([np.int64(3)], 18, 13, (), TypeError, "a bitboard must be an int, not int64"),
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


def test_the_compiled_join_refuses_a_canvas_too_large_to_size() -> None:
    with pytest.raises(ValueError, match="a 4097 x 13 canvas is too large"):
        tensors.join([1], 18, 13, 4097, 13, ())
    with pytest.raises(ValueError, match="canvas is too large"):
        tensors.join([1], 18, 13, 1 << 62, 1 << 62, ())


@pytest.mark.parametrize(("ruleset", "players"), [("medina-v2", 2), ("medina-v1", 4)])
def test_the_pure_python_tensors_equal_the_wire_and_starting_afresh_changes_none(
    ruleset: str, players: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Without the compiled module the observer uses the pure-Python join and vector. The join
    # keeps canvas rows by value, at most _KEPT_ROWS per grid: held to a few, its cache starts
    # afresh many times a game and every view still equals the wire's (on a grid smaller
    # than the canvas, 16x12, and on one that fills it, 18x13).
    monkeypatch.setattr(observer, "_join", tensors.join_python)
    monkeypatch.setattr(observer, "_vector", observer._vector_pieces)
    monkeypatch.setattr(tensors, "_KEPT_ROWS", 5)
    tensors._row_cache.cache_clear()
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
        tensors._row_cache.cache_clear()  # no cache built under the patched bound lingers


@pytest.mark.parametrize(("ruleset", "players"), CONFIGURATIONS)
def test_the_compiled_vector_equals_the_python_one_for_every_seat(
    ruleset: str, players: int
) -> None:
    compiled = observer._compiled(vector())
    for seed in (5, 6):
        s = new_game(ruleset, players, seed)
        rng = random.Random(seed)
        while True:
            for seat in range(players):
                expected = b"".join(observer._vector_pieces(s, seat))
                assert b"".join(compiled(s, seat)) == expected, (ruleset, players, seed, seat)
            if s.over:
                break
            s = apply_action(s, random_action(s, rng))


def vector() -> Callable[..., bytes]:
    if tensors.vector is None:
        pytest.fail("medina_envs._tensors was not built (make setup)")
    return tensors.vector


#: Arguments of a valid call: a 4-player game's first view, seat 1.
VALID: list[object] = [
    0, 4, 2, 0, 1, 2, 0, 4, 0, [-1] * 4, [-1] * 4, [1, 1, 1, 1], 1,
    [3] * 32, [15] * 4, [0] * 4, [0] * 4, 0, [bytes(32)] * 4,
]  # fmt: skip


@pytest.mark.parametrize(
    ("at", "value", "error", "message"),
    [
        (1, 5, ValueError, "players is 5, not in 2..4"),
        (0, 3, ValueError, "ruleset is 3, not in 0..2"),
        (2, 0, ValueError, "phase is 0, not in 1..3"),
        (3, 4, ValueError, "to_move is 4, not in -1..3"),
        (12, 4, ValueError, "seat is 4, not in 0..3"),
        (8, 16, ValueError, "exhausted is 16, not in 0..15"),
        (17, 16, ValueError, "revealed is 16, not in 0..15"),
        (4, "1", TypeError, "'str' object cannot be interpreted as an integer"),
        (9, (-1, -1, -1, -1), TypeError, "palace_tiles must be a list, not tuple"),
        (9, [-1, 4, -1, -1], ValueError, "palace_tiles is 4, not in -1..3"),
        (10, [-1], ValueError, "tower_tiles has 1 entries, fewer than 2"),
        (13, [3] * 31, ValueError, "supply has 31 entries, fewer than 32"),
        (13, [3] * 31 + [-1], ValueError, "supply is -1, not in 0..9223372036854775807"),
        (14, [16] * 4, ValueError, "roofs is 16, not in 0..15"),
        (18, [bytes(32)] * 3, ValueError, "score_rows has 3 rows, not one per seat (4)"),
        (18, [bytes(31)] * 4, ValueError, "a score row must be 32 bytes (8 float32)"),
        (18, "abcd", TypeError, "score_rows must be a list or tuple, not str"),
    ],
)
def test_the_compiled_vector_refuses_a_bad_argument_by_name(
    at: int, value: object, error: type, message: str
) -> None:
    compiled = vector()
    assert len(compiled(*VALID)) == 4 * VECTOR_SIZE
    args = list(VALID)
    args[at] = value
    with pytest.raises(error) as raised:
        compiled(*args)
    assert str(raised.value) == message
    with pytest.raises(TypeError, match="takes 19 arguments, not 18"):
        compiled(*VALID[:18])


def test_a_module_built_for_another_layout_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    vector()  # built
    moved = dict(SEAT_OFFSET, score=SEAT_OFFSET["score"] + 1)
    monkeypatch.setattr(tensors, "SEAT_OFFSET", moved)
    with pytest.raises(tensors.LayoutError, match="another layout of the vector"):
        tensors._compiled()


def test_without_the_compiled_module_there_is_no_compiled_tensors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Where setup.py found no compiler the import fails, and the Python equivalents are used.
    monkeypatch.setitem(sys.modules, "medina_envs._tensors", None)
    monkeypatch.delattr(medina_envs, "_tensors", raising=False)
    assert tensors._compiled() is None


def test_the_c_source_compiles_without_a_warning(tmp_path: Path) -> None:
    # setup.py builds it with the compiler's defaults; here every common warning is an error,
    # so a change that invites undefined behaviour (a sign mix-up, an unused result) fails.
    source = Path(tensors.__file__).with_name("_tensors.c")
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.fail("no C compiler: `make setup` installs Debian's gcc (tools/ensure_cc.sh)")
    built = subprocess.run(
        [compiler, "-Wall", "-Wextra", "-Werror", "-O2", "-shared", "-fPIC",
         f"-I{sysconfig.get_paths()['include']}", str(source), "-o", str(tmp_path / "t.so")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
