"""The identity memo: values found again by the ids of the objects they were built from."""

from __future__ import annotations

import gc
import sys
import threading
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


def test_a_full_memo_drops_its_older_half_and_keeps_answering() -> None:
    memo: IdentityMemo[int] = IdentityMemo(kept=4)
    for value, key in enumerate("abcd"):
        memo.put(key, None, value)
    memo.put("e", None, 4)  # full: a and b, the older half, are dropped
    assert [memo.get(k) for k in "abcde"] == [None, None, 2, 3, 4]
    assert len(memo) == 3
    memo.clear()
    assert memo.get("c") is None
    memo.put("f", None, 5)  # the lookup still reads the live entries after a clear
    assert memo.get("f") == 5


def test_a_memo_of_one_entry_keeps_the_newest() -> None:
    memo: IdentityMemo[int] = IdentityMemo(kept=1)
    memo.put("a", None, 1)
    memo.put("b", None, 2)
    assert (memo.get("a"), memo.get("b"), len(memo)) == (None, 2, 1)


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


def test_threads_sharing_a_memo_lose_no_pin_and_raise_nothing() -> None:
    # The viewer builds replays on worker threads while the referee observes its games on
    # the event loop, through the same module-level memos: two threads dropping the older
    # half at once raised KeyError (a 500 for the replay, and the referee could hit it
    # too), and a value could outlive its pin.
    memo: IdentityMemo[int] = IdentityMemo(kept=8)
    errors: list[BaseException] = []

    def work(thread: int) -> None:
        pins = [object() for _ in range(64)]
        try:
            for i in range(20_000):
                pin = pins[i % 64]
                memo.put((thread, id(pin)), pin, i)
        except Exception as exc:  # reported by the test, not lost in the thread
            errors.append(exc)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as the interpreter can
    try:
        threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
    finally:
        sys.setswitchinterval(interval)
    assert errors == []
    assert memo._values.keys() == memo._pins.keys()
