"""Commands that read a tournament database, and a worker, refuse a database that is not
there: opening it would create an empty one at a mistyped path (and a worker then said
"0 games played" and exited 0)."""

from __future__ import annotations

from pathlib import Path

from medina.storage.tournaments import TournamentStore

from .cups import run_cli


def test_a_mistyped_database_is_named_not_created(tmp_path: Path) -> None:
    typo = tmp_path / "typo_dir" / "typo.db"
    for argv in (
        ("tournament", "standings", "--db", str(typo)),
        ("tournament", "games", "--db", str(typo)),
        ("tournament", "export", "--format", "csv", "--db", str(typo)),
        ("tournament", "worker", "--db", str(typo)),
        ("tournament", "worker", "--db", f"sqlite:///{typo}"),
    ):
        done = run_cli(*argv, cwd=tmp_path, timeout=60)
        assert done.returncode == 2, (argv, done.stdout, done.stderr)
        assert f"no tournament database at {argv[-1]}" in done.stderr, argv
    assert not typo.parent.exists()


def test_a_worker_on_a_database_with_no_tournament_says_so(tmp_path: Path) -> None:
    empty = tmp_path / "empty.db"
    TournamentStore(str(empty)).engine.dispose()  # the tables, no tournament
    done = run_cli("tournament", "worker", "--db", str(empty), cwd=tmp_path, timeout=60)
    assert done.returncode == 2
    assert "no tournament in sqlite:///" in done.stderr and "tournament create" in done.stderr
