"""Tournament files for the end-to-end tests: two example bots, a weak one and a broken one."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from medina.storage.tournaments import TournamentStore
from processes import stop_when

BOTS = Path(__file__).resolve().parent / "bots"


def cup_file(directory: Path, name: str = "cup", games: int = 8, extra: str = "") -> Path:
    """A 4-player medina-v2 round robin of greedy, random, weak and crashy (which crashes in
    every game: entry validation is off, or it would stop the run)."""
    path = directory / f"{name}.toml"
    path.write_text(
        f'name = "{name}"\ngames = {games}\nseed = 11\nvalidation = "off"\n{extra}\n'
        "[clock]\ndecision_ms = 10000\n\n"
        '[[bots]]\nname = "greedy"\ncommand = "python -m medina_client --bot greedy"\n\n'
        '[[bots]]\nname = "random"\ncommand = "python -m medina_client --bot random"\n\n'
        f'[[bots]]\nname = "weak"\ncommand = ["python", "{BOTS / "weak.py"}"]\n\n'
        f'[[bots]]\nname = "crashy"\ncommand = ["python", "{BOTS / "crashy.py"}"]\n'
        'env = { CRASH_AT = "5" }\n'
    )
    return path


def cli(*args: str, cwd: Path) -> list[str]:
    """The medina-arena command line."""
    return [sys.executable, "-m", "medina.cli", *args]


def run_cli(*args: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Run medina-arena to its end."""
    return subprocess.run(
        cli(*args, cwd=cwd), cwd=cwd, capture_output=True, text=True, timeout=timeout
    )


def standings_json(cwd: Path, *where: str) -> list[dict[str, Any]]:
    """The exported standings."""
    done = run_cli(
        "tournament", "export", *where, "--format", "json", "--table", "standings", cwd=cwd
    )
    assert done.returncode == 0, done.stderr
    rows: list[dict[str, Any]] = json.loads(done.stdout)
    return rows


def wait_for(predicate: Any, timeout: float, what: str) -> None:
    """Poll a condition of the outside world (a database) until it holds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def kill_group(proc: subprocess.Popen[str]) -> None:
    """SIGKILL a process and everything it started (its bots)."""
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)


@contextlib.contextmanager
def held_mid_game(directory: Path) -> Iterator[tuple[subprocess.Popen[str], Path]]:
    """``tournament run cup.toml`` (``cup_file``'s, 2 at once) in ``directory``, held still
    (SIGSTOP, with its bots) once two games are done and one is in play, so that the game
    cannot end first; the process and its database. On leaving, the runner and its bots are
    SIGKILLed."""
    db = directory / "tournaments" / "cup" / "tournament.db"
    proc = subprocess.Popen(
        cli("tournament", "run", "cup.toml", "--concurrency", "2", "--quiet", cwd=directory),
        cwd=directory,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    try:

        def some_done_some_running() -> bool:
            if not db.exists():
                return False
            counts = TournamentStore(str(db)).counts(1)
            return counts.get("done", 0) >= 2 and counts.get("running", 0) >= 1

        stop_when(proc.pid, some_done_some_running, 240, "two games done, one playing", group=True)
        yield proc, db
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # the runner and its bots
        proc.wait(timeout=30)
