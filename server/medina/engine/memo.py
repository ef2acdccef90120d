"""Values computed from immutable objects, found again by the objects' identity.

Game states share their palaces, scores and views with the states before them until these
change, and one action changes one or two of them. Observations, scores and the
environments' tensors are built for every decision, mostly from objects already seen. A
key made of such an object's fields (big bitboards, nested dataclasses whose hash runs in
Python) costs more to hash than the value costs to build; its ``id()`` costs nothing.

An ``id()`` is unique only while its object lives, so every entry holds the objects whose
ids its key names (its "pins"): while the entry is there, no other object can take an id
it names. Entries are dropped all at once when the memo is full; a dropped value is only
computed again.
"""

from __future__ import annotations

from collections.abc import Hashable
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

    __slots__ = ("_entries", "kept")

    def __init__(self, kept: int = 8192) -> None:
        if kept < 1:
            raise ValueError(f"an identity memo must keep at least 1 entry, not {kept}")
        self._entries: dict[Hashable, tuple[object, V]] = {}
        self.kept = kept

    def get(self, key: Hashable) -> V | None:
        """The value put under ``key``, or None."""
        entry = self._entries.get(key)
        return None if entry is None else entry[1]

    def put(self, key: Hashable, pins: object, value: V) -> V:
        """Keep ``value`` under ``key``; ``pins`` must hold every object whose id ``key``
        names. Returns ``value``."""
        if len(self._entries) >= self.kept:
            self._entries.clear()
        self._entries[key] = (pins, value)
        return value

    def clear(self) -> None:
        """Drop every entry."""
        self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)
