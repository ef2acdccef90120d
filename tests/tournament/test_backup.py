"""``medina-arena tournament backup`` of a tournament being played: the copy, taken with a game
in play, has the standings and results the runner had stored, verifies against the records,
and resumed with ``--db COPY`` it replays the game that was in play (as after a SIGKILL) and
finishes the tournament."""

from __future__ import annotations

from pathlib import Path

import pytest
from medina.storage.tournaments import TournamentStore

from .cups import cup_file, held_mid_game, run_cli, standings_json

pytestmark = pytest.mark.timeout(600)


def test_a_backup_mid_run_resumes_as_after_a_sigkill(tmp_path: Path) -> None:
    cup_file(tmp_path)
    copy = tmp_path / "backups" / "cup.db"
    copy.parent.mkdir()
    # Held still while a game runs, so that the original does not move past the copy.
    with held_mid_game(tmp_path) as (_proc, db):
        done = run_cli("tournament", "backup", "cup.toml", str(copy), cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        store = TournamentStore(str(db))
        counts = store.counts(1)
        expected = standings_json(tmp_path, "cup.toml"), store.results(1), counts
    assert done.stdout.startswith(f"backed up tournaments/cup/tournament.db to {copy} (")
    assert (
        f"integrity ok): 1 tournament (cup), {counts['done']} of 8 games done "
        f"({counts['running']} in play); in play: replayed from scratch when the run resumes "
        "on the copy"
    ) in done.stdout

    restored = TournamentStore(str(copy))
    assert restored.counts(1) == counts
    assert (standings_json(tmp_path, "--db", str(copy)), restored.results(1), counts) == expected
    checked = run_cli("tournament", "verify", "cup.toml", "--db", str(copy), cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.splitlines()[-1].startswith("tournament cup: OK: ")

    resumed = run_cli("tournament", "run", "cup.toml", "--db", str(copy), cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert f"continuing, 8 games ({counts['done']} done)" in resumed.stdout
    results = restored.results(1)
    assert len(results) == 8 and any(g.attempts > 1 for g in results)
    assert {i.what for i in restored.incidents(1)} == {
        "interrupted: its runner is gone; replayed from scratch"
    }
    checked = run_cli("tournament", "verify", "cup.toml", "--db", str(copy), cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.splitlines()[-1].endswith("(8 done)")
