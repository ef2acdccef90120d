"""Catching another process in a state seen by polling: stopped (SIGSTOP) while it is in it.

A test that kills a server or worker "mid-game" polls a database until a game is running,
then kills: the game can end between the look and the kill. Stopping the process first (and
waiting until the kernel has stopped it: a signal is delivered later) and looking again
closes that window; the process stays stopped for the caller to kill.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from pathlib import Path
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
            wait_stopped(pid)
            seen = look()
            if seen:
                return seen
            send(pid, signal.SIGCONT)
        time.sleep(0.1)  # polling a database another process writes
    raise AssertionError(f"timed out after {timeout_s:g} s waiting for {what}")


def state_of(pid: int) -> str:
    """The process's state letter in /proc (T: stopped; "" once it is gone)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return ""


# "D" counts as stopped: a thread in uninterruptible sleep runs no code of its own before
# the pending stop takes it on its way back from the kernel. And it may never get there while
# the group is stopped: a process that is spawning a child with vfork waits in "D" until the
# child execs, and the child, in the same process group, was stopped too (seen in CI: a
# tournament worker starting a bot).
STOPPED = ("T", "t", "D", "Z", "")


def wait_stopped(pid: int, timeout_s: float = 10.0) -> None:
    """Wait until ``pid`` is stopped (or has ended, or can run nothing of its own before it
    stops): SIGSTOP takes effect when the kernel next schedules the process, not when
    ``kill`` returns."""
    deadline = time.monotonic() + timeout_s
    while (state := state_of(pid)) not in STOPPED:
        if time.monotonic() > deadline:
            raise AssertionError(f"process {pid} was sent SIGSTOP but is still {state!r}")
        time.sleep(0.001)
