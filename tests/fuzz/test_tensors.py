"""The compiled tensors (medina_envs._tensors, C) against any input: the join answers as the
pure-Python one does (the same bytes, or the same error), and the vector answers with a
vector or a typed error; neither crashes nor reads or writes out of bounds (a crash here
would take the test process down)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from medina_client.encoding import COLS, ROWS, VECTOR_SIZE
from medina_envs import tensors

from .strategies import FUZZ

#: Bitboards of any size and sign, and values that are not bitboards.
bitboards = st.one_of(
    st.integers(min_value=0, max_value=(1 << 240) - 1),
    st.integers(min_value=0, max_value=(1 << 64) - 1),
    st.integers(min_value=-(1 << 300), max_value=1 << 600),
    st.booleans(),
    st.sampled_from([0, 1, (1 << 234) - 1, (1 << 192) - 1, 1 << 233, 1 << 234]),
    st.sampled_from(["1", None, 1.0, b"\x01", np.int64(1), np.uint8(0)]),
)


def outcome(f: Callable[[], object]) -> object:
    """What ``f`` returns, or its error's type and message."""
    try:
        return f()
    except (TypeError, ValueError) as exc:
        return (type(exc), str(exc))


@pytest.mark.skipif(not tensors.COMPILED, reason="medina_envs._tensors not built")
@FUZZ
@given(
    masks=st.lists(bitboards, max_size=40),
    cols=st.integers(min_value=-2, max_value=20),
    rows=st.integers(min_value=-2, max_value=15),
    tail=st.lists(st.one_of(st.binary(max_size=12), st.just("x")), max_size=4),
)
def test_the_compiled_join_answers_as_the_python_one(
    masks: list[object], cols: int, rows: int, tail: list[object]
) -> None:
    compiled = outcome(lambda: tensors.join(masks, cols, rows, COLS, ROWS, tail))  # type: ignore[arg-type]
    python = outcome(lambda: tensors.join_python(masks, cols, rows, COLS, ROWS, tail))  # type: ignore[arg-type]
    assert compiled == python


small = st.integers(min_value=-3, max_value=20)
int_lists = st.lists(small, max_size=40)


@pytest.mark.skipif(not tensors.COMPILED, reason="medina_envs._tensors not built")
@FUZZ
@given(
    head=st.lists(small, min_size=9, max_size=9),
    tiles=st.tuples(int_lists, int_lists, int_lists),
    seat=small,
    seats=st.tuples(int_lists, int_lists, int_lists, int_lists),
    revealed=small,
    rows=st.lists(st.binary(min_size=30, max_size=34), max_size=5),
)
def test_the_compiled_vector_answers_a_vector_or_a_typed_error(
    head: list[int],
    tiles: tuple[list[int], list[int], list[int]],
    seat: int,
    seats: tuple[list[int], list[int], list[int], list[int]],
    revealed: int,
    rows: list[bytes],
) -> None:
    assert tensors.vector is not None
    got = outcome(lambda: tensors.vector(*head, *tiles, seat, *seats, revealed, rows))  # type: ignore[misc]
    if isinstance(got, bytes):
        assert len(got) == 4 * VECTOR_SIZE
    else:
        assert isinstance(got, tuple) and got[0] in (TypeError, ValueError) and got[1]
