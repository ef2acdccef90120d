"""Files the arena writes for others to read (exports, standings): whole or not at all,
readable as a plain ``open`` would leave them, and never in place of a device or a link."""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from pathlib import Path

__all__ = ["write_atomically"]


def _umask() -> int:
    """This process's file-creation mask (read without changing it where Linux says it)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)  # elsewhere: read by setting, then put back
    os.umask(mask)
    return mask


def write_atomically(path: Path, text: str) -> None:
    """Write ``path`` whole or not at all (a temporary file renamed over it), with the
    permissions a plain ``open`` would give it (the temporary file's own are 0600: standings
    meant for publishing came out unreadable to a web server). Its directory must exist:
    a mistyped one is an error, not created.

    A symbolic link is followed: the file it names is replaced and the link kept. What is not
    a regular file (``/dev/stdout``, a pipe) is written to as it is, never replaced: renaming
    over a device would put a regular file in its place."""
    try:
        mode: int | None = path.stat().st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
    if mode is not None and not stat.S_ISREG(mode):
        with open(path, "w") as f:
            f.write(text)
        return
    real = Path(os.path.realpath(path))
    fd, tmp = tempfile.mkstemp(dir=real.parent, prefix=f".{real.name}.")
    try:
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, real)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
