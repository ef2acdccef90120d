"""The server's garbage collector: young objects looked at on a timer, survivors frozen.

CPython starts a young collection when its allocations minus deallocations reach a
threshold, and counts the deallocation of *any* object, old ones too. A server in a steady
state frees about as many old objects (the game states its matches leave behind, finished
matches leaving memory) as it makes, so the count crawls while the young list grows far past
it. Measured on 27 November 2026 (256 matches of bots thinking 20-80 ms, 2 cores): with the
threshold at 20,000, young collections came every 1-2 s, found 20,000-70,000 objects and
stalled every match for 3-50 ms each, growing as the run went on; at 2,000 they still found
10,000-37,000 (3-13 ms). An object costs the collector about 0.3 µs, so the pause is set by
how many objects a collection looks at, not by how often it runs.

So the collector here runs by the clock: every ``YOUNG_EVERY_S`` it collects the young
generation (the objects made since the last look that are still alive) and freezes what
survived, so no object is looked at twice and the older generations never fill. Frozen
objects are still freed as soon as nothing refers to them; only garbage *cycles* among them
wait, for the full collection every ``FULL_EVERY_S`` (a pause of 30-200 ms, by the heap's
size). The server is written to leave few cycles (docs/operations.md, "Memory and clocks"),
and the clocks never charge a bot for a pause: a deadline noticed late is extended.

The period, measured the same way: every 50 ms, young collections took up to 7.8 ms (a
young list is mostly the objects of decisions in flight, and the shorter the period the
more of them are looked at before they are freed: 660 ms of collection in the run); every
100 ms, at most 5.0 ms (90 % under 3.7 ms; 420 ms); every
200 ms, up to 12 ms; every 500 ms, up to 17 ms. CPython's own scheme spent about 190 ms in
the same run, in pauses of up to 39 ms.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import time

#: How often the young generation is collected (and its survivors frozen): the longest
#: pause is shortest near 100 ms (the module's docstring).
YOUNG_EVERY_S = 0.1
#: How often everything is collected: garbage cycles among frozen objects wait this long.
FULL_EVERY_S = 600.0


class Collector:
    """Runs the process's garbage collection on the event loop's clock (see the module's
    docstring); ``start`` on a running loop, ``stop`` to give collection back to CPython, or
    ``async with`` for both."""

    def __init__(
        self, young_every_s: float = YOUNG_EVERY_S, full_every_s: float = FULL_EVERY_S
    ) -> None:
        if not young_every_s > 0:
            raise ValueError(f"young_every_s must be above 0, got {young_every_s}")
        if not full_every_s >= young_every_s:
            raise ValueError(
                f"full_every_s ({full_every_s}) must be at least young_every_s ({young_every_s})"
            )
        self.young_every_s = young_every_s
        self.full_every_s = full_every_s
        #: Collections run so far, young and full; and the longest pause, in seconds.
        self.young = 0
        self.full = 0
        self.longest_s = 0.0
        self._task: asyncio.Task[None] | None = None
        self._was_enabled = True

    def start(self) -> None:
        """Collect everything once (start-up's garbage), freeze the rest (modules, classes:
        never looked at again) and take over from CPython's automatic collection."""
        if self._task is not None:
            raise RuntimeError("the collector is already running")
        self._was_enabled = gc.isenabled()
        gc.collect()
        gc.freeze()
        gc.disable()
        self._task = asyncio.get_running_loop().create_task(self._run(), name="collector")

    async def stop(self) -> None:
        """Stop collecting on the clock; everything frozen may be collected again, and
        CPython's automatic collection is back as it was."""
        task, self._task = self._task, None
        if task is None:
            return
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        gc.unfreeze()
        if self._was_enabled:
            gc.enable()

    async def __aenter__(self) -> Collector:
        self.start()
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.stop()

    def collect(self, *, full: bool) -> None:
        """One collection now: the young generation, or everything; then freeze the rest."""
        started = time.perf_counter()
        if full:
            gc.unfreeze()
            gc.collect()
            self.full += 1
        else:
            gc.collect(0)
            self.young += 1
        gc.freeze()
        self.longest_s = max(self.longest_s, time.perf_counter() - started)

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        full_at = loop.time() + self.full_every_s
        while True:
            await asyncio.sleep(self.young_every_s)
            full = loop.time() >= full_at
            self.collect(full=full)
            if full:
                full_at = loop.time() + self.full_every_s
