"""The signals that stop a long-running command gracefully, and what a second one means.

SIGHUP is one of them: a closed terminal (an ssh session ended without nohup) and the
habit of logrotate scripts send it, and with no handler it ended a server at once, its
matches unfinished and its records unended, and a tournament runner with its games in
play. Nothing here has a configuration or log file to reload.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Iterator

__all__ = ["STOP_SIGNALS", "StopSignal", "exit_code", "stop_signals_caught"]

#: The signals that stop a command gracefully (SIGHUP where the platform has it).
STOP_SIGNALS: tuple[signal.Signals, ...] = tuple(
    s for s in (signal.SIGTERM, signal.SIGINT, getattr(signal, "SIGHUP", None)) if s is not None
)


class StopSignal(asyncio.Event):
    """Set by the first stop signal; ``again`` is set by a second one (stop waiting for
    what the first one let finish); ``received`` names them in order."""

    def __init__(self) -> None:
        super().__init__()
        self.received: list[str] = []
        self.again = asyncio.Event()

    def receive(self, sig: signal.Signals) -> None:
        """Note ``sig``: the first sets this event, any later one ``again``."""
        self.received.append(sig.name)
        if self.is_set():
            self.again.set()
        self.set()

    @property
    def first(self) -> str:
        """The first signal's name ('' before any)."""
        return self.received[0] if self.received else ""


@contextlib.contextmanager
def stop_signals_caught() -> Iterator[StopSignal]:
    """Inside the block the stop signals set the yielded event instead of ending the
    process (the running loop's handlers; restored to the default at the end)."""
    stop = StopSignal()
    loop = asyncio.get_running_loop()
    for sig in STOP_SIGNALS:
        loop.add_signal_handler(sig, stop.receive, sig)
    try:
        yield stop
    finally:
        for sig in STOP_SIGNALS:
            loop.remove_signal_handler(sig)


def exit_code(name: str) -> int:
    """The exit status of a command stopped by the signal named ``name`` (``SIGTERM``:
    143), as a shell reports a process that signal killed."""
    return 128 + signal.Signals[name].value
