"""Where an export goes: the file its option names, written whole or not at all, or stdout
(the option left out, or ``-`` as most Unix tools take it)."""

from __future__ import annotations

import sys
from pathlib import Path

from medina.boundary.files import write_atomically

from .errors import CommandError

#: The file name that means stdout.
STDOUT = "-"


def write_output(text: str, path: str | None, option: str) -> None:
    """Write ``text`` to ``path`` whole or not at all (a device or pipe as it is), or to
    stdout when ``path`` is None or ``-``; CommandError naming ``option`` for an empty path
    (never taken for stdout) and for a file that cannot be written."""
    if path == "":
        raise CommandError(f"{option}: the path is empty (leave the option out for stdout)")
    if path is None or path == STDOUT:
        sys.stdout.write(text)
        return
    try:
        write_atomically(Path(path), text)
    except OSError as exc:
        raise CommandError(f"cannot write {path}: {exc.strerror}") from None
