"""Catching another process in a state seen by polling: stopped (SIGSTOP) while it is in it.

A test that kills a server or worker "mid-game" polls a database until a game is running,
then kills: the game can end between the look and the kill. Stopping the process first and
looking again closes that window; the process stays stopped for the caller to kill.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def stop_when(
    pid: int, look: Callable[[], T], timeout_s: float, what: str, *, group: bool = False
) -> T:
    """Poll ``look`` until it returns something true, then SIGSTOP ``pid`` (its process
    group with ``group``) and look again: return that if still true, else SIGCONT and go on
    polling. AssertionError naming ``what`` after ``timeout_s``."""
    send = os.killpg if group else os.kill
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if look():
            send(pid, signal.SIGSTOP)
            seen = look()
            if seen:
                return seen
            send(pid, signal.SIGCONT)
        time.sleep(0.1)  # polling a database another process writes
    raise AssertionError(f"timed out after {timeout_s:g} s waiting for {what}")
