"""The server's garbage collector on the clock (rpc/common/collector.py): young objects are
collected by a timer and survivors frozen; cycles among frozen objects wait for the full
collection; stopping gives collection back to CPython as it was."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from medina.rpc.common.collector import FULL_EVERY_S, YOUNG_EVERY_S, Collector

BOUND_S = 10.0


class Node:
    """Something the collector tracks, which can be made into a cycle."""

    def __init__(self) -> None:
        self.other: Node | None = None


def cycle() -> tuple[Node, weakref.ref[Node]]:
    """A two-node cycle: one node and a weak reference to it."""
    a, b = Node(), Node()
    a.other, b.other = b, a
    return a, weakref.ref(a)


@contextmanager
def collections_seen() -> Iterator[dict[int, asyncio.Event]]:
    """Per generation, an event that a collection of it ended (set by gc's callback, which
    runs on the thread that collects: the event loop's). ``reset`` by clearing."""
    seen = {generation: asyncio.Event() for generation in (0, 1, 2)}

    def callback(phase: str, info: dict[str, Any]) -> None:
        if phase == "stop":
            seen[info["generation"]].set()

    gc.callbacks.append(callback)
    try:
        yield seen
    finally:
        gc.callbacks.remove(callback)


async def next_collection(event: asyncio.Event) -> None:
    """Wait (bounded) for the next collection the event stands for."""
    event.clear()
    await asyncio.wait_for(event.wait(), BOUND_S)


def run(test: Callable[[], Awaitable[None]]) -> None:
    """Run an async test, and leave the collector as this process had it."""
    was_enabled = gc.isenabled()
    try:
        asyncio.run(asyncio.wait_for(test(), 60))
    finally:
        gc.unfreeze()
        if was_enabled:
            gc.enable()


def test_the_defaults_are_a_young_collection_every_100_ms_and_a_full_one_every_10_minutes() -> None:
    c = Collector()
    assert (c.young_every_s, c.full_every_s) == (YOUNG_EVERY_S, FULL_EVERY_S) == (0.1, 600.0)


@pytest.mark.parametrize(
    ("young", "full", "words"),
    [
        (0.0, 1.0, "young_every_s must be above 0, got 0.0"),
        (-1.0, 1.0, "young_every_s must be above 0, got -1.0"),
        (1.0, 0.5, "full_every_s (0.5) must be at least young_every_s (1.0)"),
    ],
)
def test_bad_periods_are_refused_by_name(young: float, full: float, words: str) -> None:
    with pytest.raises(ValueError, match=words.replace("(", r"\(").replace(")", r"\)")):
        Collector(young, full)


def test_it_takes_over_from_cpython_and_gives_collection_back_as_it_was() -> None:
    async def body() -> None:
        gc.enable()
        c = Collector(0.01, 60)
        c.start()
        assert not gc.isenabled()
        assert gc.get_freeze_count() > 0  # start-up's objects: never looked at again
        with pytest.raises(RuntimeError, match="already running"):
            c.start()
        await c.stop()
        assert gc.isenabled() and gc.get_freeze_count() == 0
        await c.stop()  # a second stop does nothing

        gc.disable()
        c = Collector(0.01, 60)
        c.start()
        await c.stop()
        assert not gc.isenabled()  # it was off: it stays off

    run(body)


def test_young_garbage_cycles_are_collected_on_the_clock() -> None:
    async def body() -> None:
        c = Collector(0.01, 60)
        with collections_seen() as seen:
            async with c:
                node, ref = cycle()
                del node
                assert ref() is not None  # automatic collection is off
                await next_collection(seen[0])
                assert ref() is None
                assert c.young >= 1 and c.full == 0

    run(body)


def test_survivors_are_frozen_freed_when_unreferenced_and_their_cycles_wait_for_the_full() -> None:
    async def body() -> None:
        c = Collector(0.01, 60)
        with collections_seen() as seen:
            async with c:
                plain = Node()
                plain_ref = weakref.ref(plain)
                node, ref = cycle()
                kept = [Node() for _ in range(1000)]
                frozen = gc.get_freeze_count()
                await next_collection(seen[0])  # they survive it: frozen
                assert gc.get_freeze_count() >= frozen + len(kept)
                del plain  # no cycle: freed at once, frozen or not
                assert plain_ref() is None
                del node
                await next_collection(seen[0])
                await next_collection(seen[0])
                assert ref() is not None  # young collections never look at frozen objects
                c.collect(full=True)
                assert ref() is None
                assert c.full == 1

    run(body)


def test_the_full_collection_runs_on_the_clock() -> None:
    async def body() -> None:
        c = Collector(0.01, 0.05)
        with collections_seen() as seen:
            async with c:
                node, ref = cycle()
                await next_collection(seen[0])  # frozen
                del node
                await next_collection(seen[2])
                assert ref() is None
                assert c.full >= 1 and c.longest_s > 0

    run(body)
