"""medina-arena whose reader goes away (`ladder standings | head`) stops without a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from medina.storage.ladder import LadderStore


def test_a_reader_that_went_away_ends_the_command_quietly(tmp_path: Path) -> None:
    # It printed a BrokenPipeError traceback (`ladder standings | head -3` on a long table).
    db = str(tmp_path / "ladder.db")
    store = LadderStore(db)
    store.add_bot("a-bot", "ann", "0123456789abcdef", "salt", "digest")
    store.engine.dispose()
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first line is written
    try:
        done = subprocess.run(
            [sys.executable, "-m", "medina.cli", "bots", "list", "--db", db],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
        )
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (141, "")
