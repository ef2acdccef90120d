"""Processes the arena starts (a seat's bot, a ladder's house bot) die with the process that
started them, however it dies: Linux's parent-death signal, asked through util-linux's
``setpriv``. A tournament runner SIGKILLed mid-tournament left its bots running under init,
and a SIGKILLed ladder its house bots, retrying the lobby for good."""

from __future__ import annotations

import errno
import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

__all__ = ["SETPRIV", "dying_with_parent"]

#: util-linux's setpriv, where the kernel can be asked to kill a child when its parent dies
#: (Linux's parent-death signal); None elsewhere.
SETPRIV = shutil.which("setpriv") if sys.platform.startswith("linux") else None


def dying_with_parent(argv: Sequence[str], env: Mapping[str, str], cwd: Path | None) -> list[str]:
    """``argv`` started so that the kernel kills it (SIGKILL) when the process that started
    it dies, however it dies: a runner SIGKILLed mid-tournament left its bots running under
    init, and one that ignored SIGTERM ran on for good. Where that cannot be asked (no
    setpriv), ``argv`` as it is. The program is looked up first (on ``env``'s PATH, or in
    ``cwd`` for a path) so that a missing one is still an OSError here, not setpriv's exit
    status."""
    if SETPRIV is None:
        return list(argv)
    program = argv[0]
    found: str | None
    if os.sep in program:
        path = (cwd or Path.cwd()) / program
        found = str(path) if path.exists() else None
    else:
        found = shutil.which(program, path=env.get("PATH", os.defpath))
    if found is None:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), program)
    if not os.access(found, os.X_OK) or os.path.isdir(found):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), program)
    return [SETPRIV, "--pdeathsig", "KILL", "--", *argv]
