"""The viewer's heavy work done in a child process at a low priority: replaying a whole record
for the replay page (tens of milliseconds of pure Python a record).

Why not a thread: the viewer shares its process, and so its interpreter lock, with the
referee when it runs inside ``serve --http``. A thread replaying records holds the lock in
5 ms slices against the event loop, and a flood of replay requests (8 clients cycling more
records than the viewer kept) took a server refereeing 64 matches from about 1,240
decisions a second to 28-51, its latency's p99 from 5-7 ms to 82-138. In a child the
work has its own interpreter, and at niceness 10 the kernel gives the referee's process
and the bots the cores first: a replay waits, a match does not.

One child serves every viewer of the process (started at the first replay, with the
``spawn`` method: forking a process that runs gRPC's threads is unsafe); it dies with its
parent, and one that died (killed, out of memory) is replaced at the next build (a WARNING
line says so, once per death). Requests for one replay while it is being built share that
build; at most ``MAX_PENDING`` distinct builds wait for the child or run in it at once, the
next are refused (``BuildsBusyError``) rather than queued behind minutes of work.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
import threading
import time
from collections.abc import Callable, Hashable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

__all__ = [
    "MAX_PENDING",
    "NICENESS",
    "BuildCancelledError",
    "BuildUnavailableError",
    "BuilderDiedError",
    "Builds",
    "BuildsBusyError",
    "builder_pids",
]

log = logging.getLogger("medina.web")

#: Distinct builds a ``Builds`` keeps waiting for the child or running in it at most: past
#: them a new one is refused at once. Unbounded, 600 requests dropped after a second kept the
#: child busy 27 s, and a replay asked for then waited 7.8 s.
MAX_PENDING = 32
#: How much lower the child's scheduling priority is than the server's (``nice``).
NICENESS = 10
#: How often the child checks that its parent is alive (it exits within this once not).
PARENT_CHECK_S = 0.5

T = TypeVar("T")


class BuildUnavailableError(RuntimeError):
    """A build not made for want of the builder (too busy, dead, stopping): it may be asked
    for again in a few seconds (the viewer answers ``503``)."""


class BuildsBusyError(BuildUnavailableError):
    """A new build refused: ``MAX_PENDING`` others are pending already."""


class BuilderDiedError(BuildUnavailableError):
    """The child died while the build was pending, and the new child it was sent to died too."""


class BuildCancelledError(BuildUnavailableError):
    """The build was cancelled for its requesters (``Builds.stop``: the viewer is stopping)."""


_pool: ProcessPoolExecutor | None = None
_pool_lock = threading.Lock()


def _child_start(parent: int) -> None:
    """In the child, before any work: lower its priority, and exit once the parent is gone
    (watched, not Linux's parent-death signal: that one follows the thread that started
    the child, and a viewer whose loop runs on a thread that ends would lose it)."""
    os.nice(NICENESS)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_CHECK_S)
        os._exit(0)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def _the_pool() -> ProcessPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ProcessPoolExecutor(
                max_workers=1,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_child_start,
                initargs=(os.getpid(),),
            )
        return _pool


def _replace(broken: ProcessPoolExecutor) -> None:
    """Forget a pool whose child died (the next build starts another); said once per death,
    however many builds it failed."""
    global _pool
    with _pool_lock:
        first = _pool is broken
        if first:
            _pool = None
    if first:
        # The pool keeps its dead processes' entries (pid: process) once broken.
        processes: dict[int, Any] = getattr(broken, "_processes", None) or {}
        pids = ", ".join(str(pid) for pid in processes) or "?"
        log.warning("the replay builder (pid %s) died; a new one starts at the next replay", pids)
    broken.shutdown(wait=False, cancel_futures=True)


def builder_pids() -> list[int]:
    """The child processes building for this process's viewers (none before the first
    build)."""
    pool = _pool
    processes: dict[int, Any] = getattr(pool, "_processes", None) or {}
    return [pid for pid, p in list(processes.items()) if p.is_alive()]


async def _in_child(work: Callable[..., T], *args: object) -> T:
    """``work(*args)`` in the child; once more in a new child if the child died."""
    loop = asyncio.get_running_loop()
    for attempt in (1, 2):
        pool = _the_pool()
        try:
            return await loop.run_in_executor(pool, work, *args)
        except BrokenProcessPool:
            _replace(pool)
            if attempt == 2:
                raise BuilderDiedError(
                    "the replay builder died twice in a row; try again in a few seconds"
                ) from None
    raise AssertionError("unreachable")


_STOPPING = "the viewer is stopping; the replay was not built"


class Builds:
    """Work sent to the child, one build per key at a time: a request for something already
    being built waits for that build, a requester that goes away (a closed tab) does not
    cancel it for the others, and a build nobody waits for any more is dropped if it has
    not started (a client asking for many replays and leaving costs nothing). At most
    ``most`` distinct builds are pending at once."""

    def __init__(self, most: int = MAX_PENDING) -> None:
        if most < 1:
            raise ValueError(f"most must be 1 or more, not {most}")
        self.most = most
        self._building: dict[Hashable, asyncio.Future[Any]] = {}
        self._waiting: dict[Hashable, int] = {}
        self._stopped = False

    @property
    def pending(self) -> int:
        """Distinct builds waiting for the child or running in it."""
        return len(self._building)

    @property
    def waiting(self) -> int:
        """Requests waiting for a pending build (each of those sharing one counts)."""
        return sum(self._waiting.values())

    def stop(self) -> None:
        """Cancel every pending build, its requesters getting ``BuildCancelledError`` at once,
        and refuse every later one the same way (the viewer is stopping: its requests are
        answered now, not cancelled at the end of the server's grace period)."""
        self._stopped = True
        building = list(self._building.values())
        self._building.clear()
        for running in building:
            running.cancel()

    async def run(self, key: Hashable, work: Callable[..., T], *args: object) -> T:
        """What ``work(*args)`` returns (bytes, as a rule), built in the child (``work`` must be a
        module-level function, its arguments picklable); its exception if it raised. Raises
        ``BuildUnavailableError`` when the build cannot be made now: ``BuildsBusyError`` (a
        new build past ``most`` pending), ``BuilderDiedError``, ``BuildCancelledError``."""
        if self._stopped:
            raise BuildCancelledError(_STOPPING)
        running = self._building.get(key)
        if running is None:
            if len(self._building) >= self.most:
                raise BuildsBusyError(
                    f"the viewer is building too many replays ({self.most}); "
                    "try again in a few seconds"
                )
            running = asyncio.ensure_future(_in_child(work, *args))
            self._building[key] = running
            running.add_done_callback(lambda done: self._finished(key, done))
        self._waiting[key] = self._waiting.get(key, 0) + 1
        try:
            try:
                made: T = await asyncio.shield(running)
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if (task is not None and task.cancelling()) or not running.cancelled():
                    raise  # this requester itself is cancelled
                # The build was cancelled under a requester still waiting: stop().
                raise BuildCancelledError(
                    _STOPPING if self._stopped else "the replay's build was cancelled"
                ) from None
            return made
        finally:
            left = self._waiting[key] - 1
            if left:
                self._waiting[key] = left
            else:
                del self._waiting[key]
                if not running.done():
                    # Dropped if the child has not taken it; a later request builds anew.
                    running.cancel()
                    if self._building.get(key) is running:
                        del self._building[key]

    def _finished(self, key: Hashable, done: asyncio.Future[Any]) -> None:
        if self._building.get(key) is done:
            del self._building[key]
        if not done.cancelled():
            done.exception()  # retrieved: every requester may have gone
