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

from .cups import cli, run_cli

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
