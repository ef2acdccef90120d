"""Values computed from immutable objects, found again by the objects' identity.

Game states share their palaces, scores and views with the states before them until these
change, and one action changes one or two of them. Observations, scores and the
environments' tensors are built for every decision, mostly from objects already seen. A
key made of such an object's fields (big bitboards, nested dataclasses whose hash runs in
Python) costs more to hash than the value costs to build; its ``id()`` costs nothing.

An ``id()`` is unique only while its object lives, so every entry holds the objects whose
ids its key names (its "pins"): while the entry is there, no other object can take an id
it names. When the memo is full the older half of its entries is dropped; a dropped value
is only computed again.

Memos are module-level, and threads share them with the event loop (the viewer builds a
replay on a worker thread while the referee observes its games): writes take a lock, and an
entry's pin is there before its value is seen and stays until its value is gone. Reads take
none (one dictionary lookup).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from itertools import islice
from typing import Generic, TypeVar

__all__ = ["IdentityMemo"]

V = TypeVar("V")


class IdentityMemo(Generic[V]):
    """A bounded map from keys naming objects by ``id()`` (plus plain values) to values.

    >>> memo: IdentityMemo[int] = IdentityMemo(kept=2)
    >>> xs = (1, 2, 3)
    >>> memo.get(("sum", id(xs))) is None
    True
    >>> memo.put(("sum", id(xs)), xs, sum(xs))
    6
    >>> memo.get(("sum", id(xs)))
    6
    """

    __slots__ = ("_lock", "_pins", "_values", "get", "kept")

    def __init__(self, kept: int = 4096) -> None:
        if kept < 1:
            raise ValueError(f"an identity memo must keep at least 1 entry, not {kept}")
        self._values: dict[Hashable, V] = {}
        self._pins: dict[Hashable, object] = {}
        self._lock = threading.Lock()
        self.kept = kept
        #: ``get(key)``: the value put under ``key``, or None. The dictionary's own lookup,
        #: bound once: memos are asked at every decision, and a method would add a Python
        #: call to each question.
        self.get: Callable[[Hashable], V | None] = self._values.get

    def put(self, key: Hashable, pins: object, value: V) -> V:
        """Keep ``value`` under ``key``; ``pins`` must hold every object whose id ``key``
        names. Returns ``value``."""
        with self._lock:
            if len(self._values) >= self.kept:
                self._drop_older_half()
            self._pins[key] = pins  # before the value can be found
            self._values[key] = value
        return value

    def _drop_older_half(self) -> None:
        # The newest entries are what the games in play ask for next; dropping everything
        # would make every game recompute at once, and a memo that swings from full to
        # empty leaves the process's memory at its peak anyway.
        values, pins = self._values, self._pins
        for key in list(islice(values, len(values) - self.kept // 2)):
            del values[key]  # no longer found: its pin may go
            del pins[key]

    def clear(self) -> None:
        """Drop every entry."""
        with self._lock:
            self._values.clear()
            self._pins.clear()

    def __len__(self) -> int:
        return len(self._values)
