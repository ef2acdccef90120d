"""Three workers on several 'machines' share one tournament through a real PostgreSQL; one
is killed with SIGKILL mid-game: its game comes back when its lease runs out, and every
scheduled game is played and counted exactly once."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from pathlib import Path

import pytest
from medina.records.reader import read_record
from medina.records.verify import verify_record
from medina.storage.tournaments import TournamentStore
from processes import stop_when

from .cups import cli, cup_file, run_cli, standings_json
from .postgres import PostgresServer

pytestmark = pytest.mark.timeout(600)


def test_three_workers_one_killed_every_game_once(pg: PostgresServer, tmp_path: Path) -> None:
    url = pg.create_database()
    cup_file(tmp_path)
    made = run_cli("tournament", "create", "cup.toml", "--db", url, cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert "created" in made.stdout and "8 games (8 pending)" in made.stdout
    store = TournamentStore(url)
    tid = store.tournament("cup").id
    workers = [
        subprocess.Popen(
            cli(
                "tournament",
                "worker",
                "--db",
                url,
                "--concurrency",
                "1",
                "--lease-s",
                "4",
                "--poll-s",
                "0.5",
                "--records",
                str(tmp_path / f"machine{i}"),
                cwd=tmp_path,
            ),
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        for i in range(3)
    ]
    victim = workers[0]
    try:

        def victim_games() -> list[int]:
            return [
                g.number
                for g in store.schedule(tid)
                if g.status == "running" and f":{victim.pid}:" in (g.lease_owner or "")
            ]

        # Stopped (with its bots) while it plays a game, so that the game cannot end first.
        playing = stop_when(victim.pid, victim_games, 240, "worker 0 to be playing", group=True)
        killed_game = playing[0]
        os.killpg(victim.pid, signal.SIGKILL)  # the worker and its bots, as a machine dying
        victim.wait(timeout=30)
        outputs = [w.communicate(timeout=400) for w in workers[1:]]
    finally:
        for w in workers:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(w.pid, signal.SIGKILL)
    for w, (out, err) in zip(workers[1:], outputs, strict=True):
        assert w.returncode == 0, err
        assert "games played" in out
    assert store.counts(tid) == {"done": 8}
    assert store.tournament("cup").status == "finished"
    results = store.results(tid)
    assert sorted(g.number for g in results) == list(range(8))
    assert all(len(g.seats) == 4 for g in results)
    redone = next(g for g in results if g.number == killed_game)
    assert redone.attempts >= 2 and f":{victim.pid}:" not in redone.played_by
    # the takeover left an incident naming the dead worker: its lease ran out, or (a worker
    # that started after the kill on this same machine) its runner is gone
    assert any(
        i.number == killed_game
        and f":{victim.pid}:" in i.worker
        and ("lease ran out" in i.what or "runner is gone" in i.what)
        for i in store.incidents(tid)
    )
    assert len({g.played_by for g in results}) >= 2  # the work was shared
    for g in results:
        report = verify_record(read_record(Path(g.record_path)))
        assert report.complete
    rows = standings_json(tmp_path, "--db", url)
    assert rows[-1]["bot"] == "crashy" and rows[-1]["crashed"] == 8
