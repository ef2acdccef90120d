"""The bots' own garbage collection, held off while a window is measured.

The benchmarks' bots are Python, all in one process: a full collection of that process
(1,024 streams' objects) stalls every bot for 40-65 ms, which its latency rows would
report as the server's (measured 27 November 2026: bot-seen p99 at 256 thinking matches
37-47 ms with the bots' collector on, 19-21 ms with it off, the server unchanged). The
bots of other languages that users write have no such pause to lend the server, and the
raw ping-pong beside each row runs in the same process, so both sides are measured
without it: start-up objects are frozen and the collector is off for the window only.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


def hold() -> bool:
    """Collect now, freeze what is left and turn the collector off; whether it was on."""
    was_on = gc.isenabled()
    gc.collect()
    gc.freeze()
    gc.disable()
    return was_on


def release(was_on: bool) -> None:
    """Undo ``hold``: what it froze may be collected again, and the collector is back on
    if it was."""
    gc.unfreeze()
    if was_on:
        gc.enable()


@contextlib.contextmanager
def no_collection() -> Iterator[None]:
    """No garbage collection of this process inside the block."""
    was_on = hold()
    try:
        yield
    finally:
        release(was_on)
