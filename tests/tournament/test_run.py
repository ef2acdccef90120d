"""End to end: `medina-arena tournament run` plays real matches between bot processes; killed
with SIGKILL and run again it finishes with the same standings as an uninterrupted run."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from medina.records.reader import read_record
from medina.records.verify import verify_record
from medina.storage.tournaments import TournamentStore
from processes import stop_when

from .cups import cli, cup_file, held_mid_game, run_cli, standings_json

pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope="module")
def uninterrupted(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[Path, subprocess.CompletedProcess[str]]]:
    """One whole run of the cup, shared by the tests of this module."""
    d = tmp_path_factory.mktemp("cup")
    cup_file(d)
    done = run_cli("tournament", "run", "cup.toml", "--concurrency", "2", cwd=d)
    yield d, done


def current_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def test_a_tournament_is_played_stored_and_reported(
    uninterrupted: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    d, done = uninterrupted
    assert done.returncode == 0, done.stderr
    assert "tournament cup: starting, 8 games (0 done)" in done.stdout
    assert "game 8/8" in done.stdout or "(8 done)" in done.stdout
    rows = standings_json(d, "cup.toml")
    assert [r["games"] for r in rows] == [8, 8, 8, 8]
    crashy = rows[-1]
    assert crashy["bot"] == "crashy" and crashy["crashed"] == 8 and crashy["mean_rank"] == 4.0
    for r in rows[:-1]:
        assert r["crashed"] == r["timeout"] == r["illegal_action"] == r["disconnected"] == 0
    store = TournamentStore(str(d / "tournaments" / "cup" / "tournament.db"))
    tid = store.tournament("cup").id
    assert store.tournament("cup").status == "finished"
    results = store.results(tid)
    assert len(results) == 8 and all(g.attempts == 1 for g in results)
    for g in results:  # every record kept and verifiable, from any directory
        path = Path(g.record_path)
        assert path.is_absolute() and path.is_relative_to(d), path
        report = verify_record(read_record(path))
        assert report.complete, report
    # the same command again plays nothing more
    again = run_cli("tournament", "run", "cup.toml", cwd=d)
    assert again.returncode == 0 and "continuing, 8 games (8 done)" in again.stdout
    assert standings_json(d, "cup.toml") == rows


def test_standings_games_and_export(
    uninterrupted: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    d, _ = uninterrupted
    shown = run_cli("tournament", "standings", "cup.toml", cwd=d)
    assert shown.returncode == 0 and "crashy" in shown.stdout and "head to head" in shown.stdout
    games = run_cli("tournament", "games", "--out", "tournaments/cup", cwd=d)
    assert games.returncode == 0 and games.stdout.count("medina-v2 4p") == 8
    out = d / "exports" / "standings.csv"
    done = run_cli("tournament", "export", "cup.toml", "--format", "csv", "-o", str(out), cwd=d)
    assert done.returncode == 2 and "cannot write" in done.stderr  # a mistyped directory
    assert not out.parent.exists()
    out.parent.mkdir()
    done = run_cli("tournament", "export", "cup.toml", "--format", "csv", "-o", str(out), cwd=d)
    assert done.returncode == 0, done.stderr
    assert out.stat().st_mode & 0o777 == 0o666 & ~current_umask()  # as open() would make it
    lines = out.read_text().splitlines()
    assert lines[0].startswith("place,bot,games,mean_rank") and len(lines) == 5
    everything = run_cli("tournament", "export", "cup.toml", "--format", "json", cwd=d)
    data = json.loads(everything.stdout)
    # '-' is stdout, as leaving the option out is (it wrote a file named '-')
    dash = run_cli("tournament", "export", "cup.toml", "--format", "json", "-o", "-", cwd=d)
    assert (dash.returncode, dash.stdout) == (0, everything.stdout), dash.stderr
    assert not (d / "-").exists()
    assert {"standings", "head_to_head", "games", "rating_history"} <= set(data)
    assert len(data["games"]) == 8
    # what decided the games travels with them; the bots' commands and environments do not
    settings = data["settings"]
    assert settings["games_per_variant"] == 8 and settings["seed"] == 11
    assert settings["variants"] == [{"ruleset": "medina-v2", "players": 4}]
    assert settings["time"]["decision_ms"] == 10000 and settings["paired"] is True
    assert [b["name"] for b in settings["bots"]] == ["greedy", "random", "weak", "crashy"]
    assert (
        settings["digest"]
        == TournamentStore(str(d / "tournaments/cup/tournament.db")).tournament("cup").digest
    )
    assert "CRASH_AT" not in everything.stdout and "weak.py" not in everything.stdout
    # games count from 1 in the export, as in the progress lines and `tournament games`
    assert sorted(g["game"] for g in data["games"]) == list(range(1, 9))
    bad = run_cli("tournament", "export", "cup.toml", "--format", "csv", "--table", "all", cwd=d)
    assert bad.returncode == 2 and "CSV holds one table" in bad.stderr
    # an empty path is not stdout, and a directory is not a file: one line each, exit 2
    empty = run_cli("tournament", "export", "cup.toml", "--format", "json", "-o", "", cwd=d)
    assert (empty.returncode, empty.stdout) == (2, "")
    assert empty.stderr.count("\n") == 1 and "the path is empty" in empty.stderr
    folder = run_cli("tournament", "export", "cup.toml", "--format", "json", "-o", ".", cwd=d)
    assert folder.returncode == 2 and folder.stderr.count("\n") == 1
    assert "cannot write .: Is a directory" in folder.stderr
    missing = run_cli("tournament", "standings", "--out", "nowhere", cwd=d)
    assert (
        missing.returncode == 2
        and "no tournament database at nowhere/tournament.db" in missing.stderr
    )


def test_a_changed_file_is_refused(
    uninterrupted: tuple[Path, subprocess.CompletedProcess[str]], tmp_path: Path
) -> None:
    d, _ = uninterrupted
    changed = (d / "cup.toml").read_text().replace("seed = 11", "seed = 12")
    (tmp_path / "cup.toml").write_text(changed)
    done = run_cli(
        "tournament",
        "run",
        str(tmp_path / "cup.toml"),
        "--out",
        str(d / "tournaments" / "cup"),
        cwd=d,
    )
    assert done.returncode == 2
    assert "was started from a different file (this one differs in seed); " in done.stderr
    assert done.stderr.rstrip().endswith("give this one another name, or another --out DIR")


def test_a_changed_file_is_refused_naming_what_differs(tmp_path: Path) -> None:
    # The refusal named a fixed list (bots, variants, format, games, seeds or clock), not
    # what differed, left out policies and env, and suggested --db.
    cup = cup_file(tmp_path, games=4)
    first = run_cli("tournament", "create", "cup.toml", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    text = cup.read_text().replace('CRASH_AT = "5"', 'CRASH_AT = "6"')
    text = text.replace("[clock]", "[policies]\nmax_strikes = 9\n[clock]")
    text += '[[bots]]\nname = "extra"\ncommand = "python -m medina_client --bot random"\n'
    cup.write_text(text)
    again = run_cli("tournament", "create", "cup.toml", cwd=tmp_path)
    assert again.returncode == 2
    assert (
        "was started from a different file (this one differs in bot 'crashy' (env), bot 'extra' "
        "added, policies); give this one another name, or another --out DIR"
    ) in again.stderr


def test_sigkill_mid_run_then_resume_gives_the_same_standings(
    uninterrupted: tuple[Path, subprocess.CompletedProcess[str]], tmp_path: Path
) -> None:
    d, _ = uninterrupted
    expected = standings_json(d, "cup.toml")
    cup_file(tmp_path)
    with held_mid_game(tmp_path) as (proc, db):
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    store = TournamentStore(str(db))
    before = store.counts(1)
    assert before.get("running", 0) >= 1 and before.get("done", 0) < 8
    done_before = {g.number: g.match_id for g in store.results(1)}
    resumed = run_cli("tournament", "run", "cup.toml", "--concurrency", "2", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert f"continuing, 8 games ({before['done']} done)" in resumed.stdout
    results = store.results(1)
    assert len(results) == 8
    # finished games were kept, not replayed; the interrupted ones were replayed from scratch
    for g in results:
        if g.number in done_before:
            assert g.match_id == done_before[g.number] and g.attempts == 1
    replayed = [g for g in results if g.attempts > 1]
    assert replayed, "the game that was being played was replayed"
    assert {i.what for i in store.incidents(1)} == {
        "interrupted: its runner is gone; replayed from scratch"
    }
    assert standings_json(tmp_path, "cup.toml") == expected
    checked = run_cli("tournament", "verify", "cup.toml", cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "record(s) of attempts given back; their games were replayed\n" in checked.stdout


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_sigterm_gives_games_back(tmp_path: Path, sig: signal.Signals, code: int) -> None:
    # SIGHUP (a closed terminal) killed the runner at once, its games in play left leased.
    cup_file(tmp_path)
    db = tmp_path / "tournaments" / "cup" / "tournament.db"
    proc = subprocess.Popen(
        cli("tournament", "run", "cup.toml", "--concurrency", "2", cwd=tmp_path),
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    records = db.parent / "records"

    def one_done_one_in_play() -> bool:
        # A record without its outcome line: a match in play (a record more than the results
        # was not enough: a match that had just ended, its result being stored, is kept),
        # and early in its game: one stopped at its last decisions could end by itself as
        # the group resumes, before the runner's stop (no game given back; once in CI).
        if not db.exists() or not TournamentStore(str(db)).counts(1).get("done", 0):
            return False
        return any(
            '"outcome"' not in (text := r.read_text()) and text.count("\n") < 40
            for r in records.glob("*.jsonl")
        )

    try:
        # held still (with its bots) until SIGTERM is sent, so that the game cannot end first
        stop_when(proc.pid, one_done_one_in_play, 240, "a game done, one in play", group=True)
        proc.send_signal(sig)
        os.killpg(proc.pid, signal.SIGCONT)
        _out, err = proc.communicate(timeout=60)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == code, err
    assert f"runner stopped ({sig.name})" in err and "run the same command to continue" in err
    counts = TournamentStore(str(db)).counts(1)
    assert counts.get("running", 0) == 0  # nothing left leased
    whats: set[Any] = {i.what for i in TournamentStore(str(db)).incidents(1)}
    assert whats == {f"interrupted: runner stopped ({sig.name}); replayed from scratch"}
    # the aborted attempts' games wait to be played: verify said they "were replayed"
    checked = run_cli("tournament", "verify", "cup.toml", cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    said = "aborted record(s) of attempts given back; their games are pending or were replayed"
    assert re.search(rf"^note: {re.escape(str(records))}: [12] {re.escape(said)}$",
                     checked.stdout, re.M), checked.stdout  # fmt: skip


def test_the_viewer_shows_a_tournament_database(
    uninterrupted: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    d, _ = uninterrupted
    proc = subprocess.Popen(
        cli(
            "web",
            "--records",
            "tournaments/cup/records",
            "--db",
            "tournaments/cup/tournament.db",
            "--http",
            "0",
            cwd=d,
        ),
        cwd=d,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "viewer on" in line, line
        url = line.split("viewer on ", 1)[1].split()[0].rstrip("/")
        with urllib.request.urlopen(f"{url}/standings", timeout=30) as page:
            html = page.read().decode()
        with urllib.request.urlopen(f"{url}/standings/bot/crashy", timeout=30) as page:
            bot_html = page.read().decode()
        with pytest.raises(urllib.error.HTTPError) as missing_bot:
            urllib.request.urlopen(f"{url}/standings/bot/nobody", timeout=30)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    assert "Tournament cup" in html and "8 games counted" in html
    for bot in ("greedy", "random", "weak", "crashy"):
        assert f'data-bot="{bot}"' in html
    assert "crashed 8" in html
    assert '<td class="mean-rank">4.00</td>' in html  # crashy: last in every game
    assert 'id="head-to-head"' in html
    assert '<svg class="rating-plot"' in bot_html and "Rating over 8 games" in bot_html
    assert 'href="/standings/bot/crashy"' in html
    assert bot_html.count("<tr data-game=") == 8 and bot_html.count(">crashed<") == 8
    assert bot_html.count('href="/replay/') == 8  # each game links to its replay
    assert missing_bot.value.code == 404
    missing = run_cli("web", "--records", ".", "--db", "nowhere.db", "--tournament", "x", cwd=d)
    assert missing.returncode == 2 and "no tournament database at nowhere.db" in missing.stderr


def test_verify_replays_every_result_and_names_what_was_edited(
    uninterrupted: tuple[Path, subprocess.CompletedProcess[str]], tmp_path: Path
) -> None:
    d, _ = uninterrupted
    done = run_cli("tournament", "verify", "cup.toml", cwd=d)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1] == (
        "tournament cup: OK: the schedule is the file's, and 8 results match their records, "
        "each replayed through the engine (8 done)"
    )
    # a copy of the database, edited behind the runner's back
    db = tmp_path / "edited.db"
    shutil.copy(d / "tournaments" / "cup" / "tournament.db", db)
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE seat_results SET total = total + 1 WHERE game_id = 1 AND seat = 0")
        conn.execute("UPDATE games SET seed = 999 WHERE id = 2")
        conn.execute("DELETE FROM seat_results WHERE game_id = 3")
        conn.execute("UPDATE seat_results SET strikes = 3 WHERE game_id = 4 AND seat = 1")
    edited = run_cli("tournament", "verify", "--db", str(db), cwd=d)
    assert edited.returncode == 1, edited.stdout + edited.stderr
    lines = edited.stdout.splitlines()
    assert any(
        line.startswith("game 1: seat 0 (") and "stored total" in line and "its record says" in line
        for line in lines
    ), lines
    assert "game 2: stored seed 999, but the configuration schedules 11" in lines
    assert "game 2: stored seed 999, but its record says 11" in lines
    assert "game 3: done, but no result of it is stored" in lines
    assert any(
        line.startswith("game 4: seat 1 (")
        and line.endswith("stored strikes 3, but its record says 0")
        for line in lines
    ), lines
    assert lines[-1] == "tournament cup: 5 problem(s) in 7 results and the schedule (8 done)"
    # records published elsewhere are found by their file names
    copy = tmp_path / "published"
    copy.mkdir()
    for record in (d / "tournaments" / "cup" / "records").glob("*.jsonl"):
        shutil.copy(record, copy)
    db = tmp_path / "published.db"
    shutil.copy(d / "tournaments" / "cup" / "tournament.db", db)
    moved = run_cli("tournament", "verify", "--db", str(db), "--records", str(copy), cwd=d)
    assert moved.returncode == 0, moved.stdout + moved.stderr


def test_a_tournament_looked_for_from_another_directory_says_where_it_looked(
    tmp_path: Path,
) -> None:
    # `run` writes under the directory it runs in: from elsewhere, `standings cup/cup.toml`
    # said only "no tournament database at tournaments/cup/tournament.db".
    (tmp_path / "cup").mkdir()
    cup_file(tmp_path / "cup")
    done = run_cli("tournament", "standings", "cup/cup.toml", cwd=tmp_path)
    assert done.returncode == 2
    assert f"no tournament database at tournaments/cup/tournament.db under {tmp_path}" in (
        done.stderr
    )
    assert "writes under the directory it runs in" in done.stderr
