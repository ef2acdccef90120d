"""The identity memo: values found again by the ids of the objects they were built from."""

from __future__ import annotations

import gc
import weakref

import pytest
from medina.engine.memo import IdentityMemo


class _Thing:
    """An object whose lifetime a weak reference can follow."""


def test_a_value_put_is_found_and_a_missing_key_is_none() -> None:
    memo: IdentityMemo[str] = IdentityMemo()
    xs = (1, 2)
    assert memo.get(("k", id(xs))) is None
    assert memo.put(("k", id(xs)), xs, "v") == "v"
    assert memo.get(("k", id(xs))) == "v"
    assert len(memo) == 1


def test_a_full_memo_drops_every_entry_and_keeps_answering() -> None:
    memo: IdentityMemo[int] = IdentityMemo(kept=2)
    memo.put("a", None, 1)
    memo.put("b", None, 2)
    memo.put("c", None, 3)  # full: a and b are dropped, c kept
    assert (memo.get("a"), memo.get("b"), memo.get("c"), len(memo)) == (None, None, 3, 1)
    memo.clear()
    assert memo.get("c") is None
    memo.put("d", None, 4)  # the lookup still reads the live entries after a clear
    assert memo.get("d") == 4


def test_an_entry_keeps_the_objects_its_key_names_alive() -> None:
    memo: IdentityMemo[int] = IdentityMemo()
    thing = _Thing()
    alive = weakref.ref(thing)
    memo.put(("k", id(thing)), thing, 1)
    del thing
    gc.collect()
    assert alive() is not None  # its id cannot be taken by another object
    memo.clear()
    gc.collect()
    assert alive() is None


def test_a_memo_keeps_at_least_one_entry() -> None:
    with pytest.raises(ValueError, match="at least 1 entry, not 0"):
        IdentityMemo(kept=0)
