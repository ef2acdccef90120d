"""What an unsandboxed bot leaves behind: processes it started in the background, in its
process group (``sleep 9 &``) or out of it (``setsid sleep 9 &``), which outlived the game
and the runner (the parent-death signal covers the bot's own process, not its children).

Each bot runs in a process group of its own, killed as a whole when it ends. On Linux the
arena also makes itself the child subreaper of its descendants: a bot's process whose
parent exits is reparented to the arena rather than to init, so that it is found among the
arena's children -- by the seat token it inherited in ``MEDINA_TOKEN`` -- killed and
reaped. At the arena's exit every child carrying a seat token is killed. A process that
both leaves its group and drops ``MEDINA_TOKEN`` from its environment is not found; nor is
anything once the arena itself is SIGKILLed (its orphans go to init). A sandboxed bot needs
none of this: its sandbox's process namespace ends with everything in it.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import ctypes
import os
import signal
import sys
import time
from collections.abc import Collection
from pathlib import Path

__all__ = ["TOKEN_VARIABLE", "adopt", "reap_leftovers"]

#: prctl(2): make this process the child subreaper of its descendants.
PR_SET_CHILD_SUBREAPER = 36
#: The variable every bot inherits, different for each seat: how its leftovers are known.
TOKEN_VARIABLE = "MEDINA_TOKEN"
#: How long the processes of an ended bot are looked for (they die within milliseconds).
SETTLE_S = 2.0

_adopting: bool | None = None
#: Process groups of bots still running, killed at exit: group -> seat token.
_groups: dict[int, str] = {}


def adopt(group: int, token: str) -> bool:
    """Note a started bot (its process group and seat token) and, the first time, make this
    process the subreaper of its descendants (Linux; False elsewhere or when refused)."""
    global _adopting
    _groups[group] = token
    if _adopting is None:
        _adopting = _set_subreaper()
        atexit.register(_kill_all)
    return _adopting


async def reap_leftovers(group: int, token: str) -> None:
    """After a bot's own process exited: kill its process group, then, until its group is
    gone (at most ``SETTLE_S``), kill and reap the children of this process that carry its
    seat token (reparented here) and reap its group's zombies."""
    _groups.pop(group, None)
    _kill_group(group)
    deadline = time.monotonic() + SETTLE_S
    while True:
        found = _sweep(token, group)
        if not found and not _group_alive(group):
            return
        if time.monotonic() > deadline:
            return
        await asyncio.sleep(0.01)


def _set_subreaper() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def _kill_group(group: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, signal.SIGKILL)


def _group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _children() -> list[tuple[int, str, int]]:
    """This process's children: (pid, state, process group)."""
    me = os.getpid()
    found: list[tuple[int, str, int]] = []
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                stat = Path(entry.path, "stat").read_text()
            except OSError:
                continue
            # after the command's closing parenthesis: state, ppid, pgrp, ...
            fields = stat[stat.rfind(")") + 2 :].split()
            if len(fields) > 2 and int(fields[1]) == me:
                found.append((int(entry.name), fields[0], int(fields[2])))
    return found


def _carries(pid: int, token: str | None) -> bool:
    """Whether ``pid``'s environment holds the seat token ``token`` (any, when None)."""
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return False
    prefix = f"{TOKEN_VARIABLE}=".encode()
    if token is None:
        return any(v.startswith(prefix) for v in environ)
    return prefix + token.encode() in environ


def _sweep(token: str | None, group: int | None, keep: Collection[int] = ()) -> int:
    """Kill and reap the children of this process that carry ``token`` and reap the zombies
    of ``group``; never one of ``keep`` (bots still running, awaited elsewhere)."""
    hit: list[int] = []
    for pid, state, pgrp in _children():
        if pid in keep or pid in _groups:
            continue
        if (state == "Z" and group is not None and pgrp == group) or _carries(pid, token):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            hit.append(pid)
    for pid in hit:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)
    return len(hit)


def _kill_all() -> None:
    """At exit: the groups of bots still running, then every child with a seat token."""
    for group in list(_groups):
        _kill_group(group)
    _groups.clear()
    for _ in range(32):  # each pass may orphan the next generation
        if not _sweep(None, None):
            return
