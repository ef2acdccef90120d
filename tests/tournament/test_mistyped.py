"""Mistyped places are named, not acted on: commands that read a tournament database, and
a worker, refuse a database that is not there (opening it created an empty one at the
mistyped path, and a worker then said "0 games played" and exited 0); `run --server` at an
address nobody answers at says so at once."""

from __future__ import annotations

from pathlib import Path

from medina.storage.tournaments import TournamentStore

from .cups import cup_file, run_cli


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


def test_run_with_a_server_nobody_answers_at_says_so_and_stores_nothing(tmp_path: Path) -> None:
    # It was silent for two minutes, then retried every game for good.
    cup_file(tmp_path)
    done = run_cli(
        "tournament", "run", "cup.toml", "--server", "127.0.0.1:1", cwd=tmp_path, timeout=60
    )
    assert done.returncode == 2
    assert "cannot reach a server at 127.0.0.1:1 within 10 s" in done.stderr
    assert not (tmp_path / "tournaments").exists()


def test_a_records_directory_that_cannot_be_made_is_named_before_any_game(tmp_path: Path) -> None:
    # It was a FileNotFoundError traceback out of entry validation.
    cup = cup_file(tmp_path, extra='records = "/proc/none/records"')
    cup.write_text(cup.read_text().replace('validation = "off"', 'validation = "stop"'))
    for command in ("run", "create"):
        done = run_cli("tournament", command, "cup.toml", cwd=tmp_path, timeout=60)
        assert done.returncode == 2, done.stderr
        assert done.stderr == (
            "medina-arena tournament: cup.toml: records: cannot use /proc/none: "
            "No such file or directory\n"
        )
    assert not (tmp_path / "tournaments").exists()


def test_a_worker_of_one_tournament_writes_its_records_beside_the_tournaments_own(
    tmp_path: Path,
) -> None:
    # They went to ./records, while create had made tournaments/NAME/records, empty, where
    # run writes and verify looks.
    cup_file(tmp_path, games=1, extra="paired = false")
    db = str(tmp_path / "cup.db")
    made = run_cli("tournament", "create", "cup.toml", "--db", db, cwd=tmp_path, timeout=60)
    assert made.returncode == 0, made.stderr
    done = run_cli("tournament", "worker", "--db", db, "--tournament", "cup", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert list((tmp_path / "tournaments" / "cup" / "records").glob("*.jsonl"))
    assert not (tmp_path / "records").exists()
