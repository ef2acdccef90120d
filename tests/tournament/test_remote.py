"""A tournament played on a running server (`--server` with the organiser credential); a
server that refuses the credential stops the runner with the reason instead of looping."""

from __future__ import annotations

import contextlib
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from medina.storage.tournaments import TournamentStore

from .cups import BOTS, cli, run_cli

pytestmark = pytest.mark.timeout(300)

DUEL = """\
name = "duel"
games = 4
[[variants]]
ruleset = "medina-v1-2p"
players = 2
[clock]
decision_ms = 10000
[[bots]]
name = "greedy"
command = "python -m medina_client --bot greedy"
[[bots]]
name = "random"
command = "python -m medina_client --bot random"
"""


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    """`medina-arena serve` with an organiser token, as its own process."""
    proc = subprocess.Popen(
        cli(
            "serve",
            "--port",
            "0",
            "--records",
            str(tmp_path / "server-records"),
            "--organiser-token",
            "s3cret",
            cwd=tmp_path,
        ),
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "listening on" in line, line
        yield line.rsplit(" ", 1)[1].strip()
    finally:
        proc.send_signal(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=30)
        if proc.poll() is None:
            proc.kill()


def test_games_are_played_on_the_given_server(server: str, tmp_path: Path) -> None:
    (tmp_path / "duel.toml").write_text(DUEL)
    done = run_cli(
        "tournament",
        "run",
        "duel.toml",
        "--server",
        server,
        "--organiser-token",
        "s3cret",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    store = TournamentStore(str(tmp_path / "tournaments" / "duel" / "tournament.db"))
    results = store.results(store.tournament("duel").id)
    assert len(results) == 4
    for g in results:  # the server wrote the records
        assert Path(g.record_path).resolve().parent == (tmp_path / "server-records").resolve()


def test_a_refused_credential_stops_the_run_with_the_reason(server: str, tmp_path: Path) -> None:
    (tmp_path / "duel.toml").write_text(DUEL)
    done = run_cli(
        "tournament",
        "run",
        "duel.toml",
        "--server",
        server,
        "--organiser-token",
        "wrong",
        cwd=tmp_path,
    )
    assert done.returncode == 1
    assert "UNAUTHENTICATED" in done.stderr and "cannot create a match at" in done.stderr
    store = TournamentStore(str(tmp_path / "tournaments" / "duel" / "tournament.db"))
    assert store.counts(store.tournament("duel").id) == {"pending": 4}


def test_a_bot_that_exits_forfeits_at_once_on_the_given_server(server: str, tmp_path: Path) -> None:
    # Reconnect grace and clocks far longer than the run may take: only the forfeit sent
    # when crashy's process exits (ForfeitSeat) can end these games in time.
    (tmp_path / "crash.toml").write_text(
        'name = "crash"\ngames = 2\nseed = 3\nvalidation = "off"\n'
        '[[variants]]\nruleset = "medina-v1-2p"\nplayers = 2\n'
        "[clock]\ndecision_ms = 600000\nbank_ms = 0\n"
        "[policies]\nreconnect_grace_ms = 3600000\n"
        '[[bots]]\nname = "random"\ncommand = "python -m medina_client --bot random"\n'
        f'[[bots]]\nname = "crashy"\ncommand = ["python", "{BOTS / "crashy.py"}"]\n'
        'env = { CRASH_AT = "2" }\n'
    )
    done = run_cli(
        "tournament",
        "run",
        "crash.toml",
        "--server",
        server,
        "--organiser-token",
        "s3cret",
        cwd=tmp_path,
        timeout=150,
    )
    assert done.returncode == 0, done.stderr
    store = TournamentStore(str(tmp_path / "tournaments" / "crash" / "tournament.db"))
    results = store.results(store.tournament("crash").id)
    assert len(results) == 2
    for g in results:
        crashed = [s for s in g.seats if s.bot == "crashy"]
        assert [(s.termination, s.detail) for s in crashed] == [
            ("crashed", "its bot exited with code 3 during the match")
        ], g
