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
parent, and one that died (killed, out of memory) is replaced at the next build. Requests for
one replay while it is being built share that build.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import multiprocessing
import os
import signal
import sys
import threading
from collections.abc import Callable, Hashable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

__all__ = ["NICENESS", "Builds", "builder_pids"]

#: How much lower the child's scheduling priority is than the server's (``nice``).
NICENESS = 10
#: Linux's ``prctl`` option that sends the child a signal when its parent dies.
_PR_SET_PDEATHSIG = 1

T = TypeVar("T")

_pool: ProcessPoolExecutor | None = None
_pool_lock = threading.Lock()


def _child_start(parent: int) -> None:
    """In the child, before any work: lower its priority; ask to be killed with the parent
    (Linux), and exit if the parent is already gone."""
    os.nice(NICENESS)
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:
        os._exit(0)


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
    """Forget a pool whose child died (the next build starts another)."""
    global _pool
    with _pool_lock:
        if _pool is broken:
            _pool = None
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
                raise
    raise AssertionError("unreachable")


class Builds:
    """Work sent to the child, one build per key at a time: a request for something already
    being built waits for that build, a requester that goes away (a closed tab) does not
    cancel it for the others, and a build nobody waits for any more is dropped if it has
    not started (a client asking for many replays and leaving costs nothing)."""

    def __init__(self) -> None:
        self._building: dict[Hashable, asyncio.Future[Any]] = {}
        self._waiting: dict[Hashable, int] = {}

    async def run(self, key: Hashable, work: Callable[..., T], *args: object) -> T:
        """What ``work(*args)`` returns (bytes, as a rule), built in the child (``work`` must be a
        module-level function, its arguments picklable); its exception if it raised."""
        running = self._building.get(key)
        if running is None:
            running = asyncio.ensure_future(_in_child(work, *args))
            self._building[key] = running
            running.add_done_callback(lambda done: self._finished(key, done))
        self._waiting[key] = self._waiting.get(key, 0) + 1
        try:
            made: T = await asyncio.shield(running)
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
