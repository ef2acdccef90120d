"""Running a test's coroutine on a fresh event loop, bounded in time (no test waits forever)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

T = TypeVar("T")


def run(coro: Awaitable[T], timeout: float = 60) -> T:
    """Run ``coro`` on a fresh event loop; TimeoutError after ``timeout`` seconds."""

    async def bounded() -> T:
        async with asyncio.timeout(timeout):
            return await coro

    return asyncio.run(bounded())
