"""``medina-arena replay prune DIR``: records deleted by age or size with their bot logs,
never a record in play, unreadable, or named by a tournament; bad input named."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest
from medina.cli import main
from medina.records.catalog import UNFINISHED
from medina.storage.tournaments import NewGame, SeatRow, TournamentStore

from .test_verify import engine_record

DAY = 86_400.0


def aged(path: Path, days: float, now: float) -> Path:
    """Set the file's times ``days`` before ``now``."""
    t = now - days * DAY
    os.utime(path, (t, t))
    return path


def finished(directory: Path, seed: int, days: float, now: float, logs: int = 2) -> Path:
    """A finished record ``days`` old with ``logs`` bot logs beside it."""
    path = engine_record(directory, "medina-v1-2p", 2, seed)
    for seat in range(logs):
        log = directory / f"{path.stem}.seat{seat}.log"
        log.write_text("x" * 1000)
        aged(log, days, now)
    return aged(path, days, now)


def interrupted(directory: Path, seed: int, days: float, now: float) -> Path:
    """A record without its outcome line: a match in play or a server's crash."""
    path = engine_record(directory, "medina-v1-2p", 2, seed, stop_after=9)
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:-2]))
    return aged(path, days, now)


def names(directory: Path) -> set[str]:
    return {p.name for p in directory.iterdir()}


def test_old_records_go_with_their_bot_logs_and_a_dry_run_only_lists_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    now = time.time()
    old = finished(tmp_path, 1, 10, now)
    older = finished(tmp_path, 2, 40, now)
    new = finished(tmp_path, 3, 1, now)
    (tmp_path / "notes.txt").write_text("an operator's file")
    before = names(tmp_path)
    args = ["replay", "prune", str(tmp_path), "--older-than-days", "3"]
    assert main([*args, "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert names(tmp_path) == before
    assert f"would delete {older}" in out and "40.0 days old" in out
    assert f"would delete {old}" in out and str(new) not in out
    assert out.index(str(older)) < out.index(str(old))  # oldest first
    assert re.search(rf"would delete {re.escape(str(old))}.*: \d+\.\d KB,", out), out  # not 0.0 MB
    assert "would delete 2 record(s) and 4 bot log(s)" in out and "1 kept" in out
    assert main(args) == 0
    out = capsys.readouterr().out
    assert len(out.splitlines()) == 1
    assert "deleted 2 record(s) and 4 bot log(s)" in out and "1 kept, 0 of them" in out
    assert names(tmp_path) == {
        new.name,
        f"{new.stem}.seat0.log",
        f"{new.stem}.seat1.log",
        "notes.txt",
    }


def test_a_size_bound_keeps_the_newest_records_within_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    now = time.time()
    made = [finished(tmp_path, seed, days, now, logs=1) for seed, days in ((1, 3), (2, 2), (3, 1))]
    sizes = [p.stat().st_size + 1000 for p in made]
    # Room for the two newest (record and log), not the third.
    limit_mb = (sizes[1] + sizes[2] + 10) / 1_000_000
    assert main(["replay", "prune", str(tmp_path), "--max-mb", f"{limit_mb:.6f}"]) == 0
    assert "deleted 1 record(s) and 1 bot log(s)" in capsys.readouterr().out
    assert not made[0].exists() and made[1].exists() and made[2].exists()
    # Either bound deletes: the age takes the next one although the size would keep it.
    assert (
        main(["replay", "prune", str(tmp_path), "--max-mb", "100", "--older-than-days", "1.5"]) == 0
    )
    assert not made[1].exists() and made[2].exists()
    # --max-mb 0 keeps none.
    assert main(["replay", "prune", str(tmp_path), "--max-mb", "0"]) == 0
    assert names(tmp_path) == set()


def test_records_in_play_unreadable_or_named_by_a_tournament_are_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    now = time.time()
    records = tmp_path / "records"
    records.mkdir()
    named = finished(records, 1, 30, now)
    other = finished(records, 2, 30, now)
    cut = interrupted(records, 3, 30, now)
    junk = records / "junk.jsonl"
    junk.write_text("not json\n")
    aged(junk, 30, now)
    # A tournament whose stored result names the first record, as its runner stores it
    # (here a relative path: it is recognised by its file name).
    db = tmp_path / "cup.db"
    store = TournamentStore(str(db))
    row, _ = store.ensure_tournament(
        "cup",
        "d",
        "{}",
        [("a", ["a"], None, []), ("b", ["b"], None, [])],
        [NewGame(0, 0, "medina-v1-2p", 2, 1, 0, ("a", "b"))],
    )
    claim = store.claim("w", 60, row.id)
    assert claim is not None
    seats = [SeatRow(s, b, 10, s + 1, "normal", 0, "") for s, b in enumerate(claim.seats)]
    record_path = f"records/{named.name}"
    assert store.finish(
        claim, match_id=named.stem, record_path=record_path, ending="complete", seats=seats
    )
    store.close()
    code = main(["replay", "prune", str(records), "--older-than-days", "0", "--keep-for", str(db)])
    assert code == 0
    out, err = capsys.readouterr()
    assert "deleted 1 record(s) and 2 bot log(s)" in out
    assert (
        "3 kept, 3 of them because protected (1 without an outcome line, 1 named by a "
        "tournament, 1 unreadable)" in out
    )
    assert f"{junk}: kept, unreadable" in err
    assert not other.exists()
    assert named.exists() and cut.exists() and junk.exists()
    assert (records / f"{named.stem}.seat0.log").exists()
    assert main(["replay", "prune", str(records), "--max-mb", "0", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert f"would keep {cut}: {UNFINISHED}" in out
    assert f"would delete {named}" in out  # no --keep-for: nothing names it


def test_zero_days_means_whatever_the_age_even_a_record_written_just_now(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    now = time.time()
    future = finished(tmp_path, 1, -1, now)  # a clock that moved back
    assert main(["replay", "prune", str(tmp_path), "--older-than-days", "0.5"]) == 0
    assert future.exists()
    assert main(["replay", "prune", str(tmp_path), "--older-than-days", "0"]) == 0
    assert not future.exists()
    assert "deleted 1 record(s)" in capsys.readouterr().out


def test_symlinks_and_subdirectories_are_left_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    now = time.time()
    records = tmp_path / "records"
    outside = tmp_path / "elsewhere"
    (records / "house").mkdir(parents=True)
    outside.mkdir()
    target = finished(outside, 1, 30, now)
    (records / "link.jsonl").symlink_to(target)
    (records / "link.seat0.log").symlink_to(outside / f"{target.stem}.seat0.log")
    nested = finished(records / "house", 2, 30, now)
    mine = finished(records, 3, 30, now, logs=0)
    (records / f"{mine.stem}.seat0.log").symlink_to(outside / f"{target.stem}.seat1.log")
    assert main(["replay", "prune", str(records), "--older-than-days", "1"]) == 0
    out, err = capsys.readouterr()
    assert "deleted 1 record(s) and 0 bot log(s)" in out
    assert "link.jsonl: not a regular file" in err
    assert not mine.exists()
    assert (records / "link.jsonl").is_symlink() and (
        records / f"{mine.stem}.seat0.log"
    ).is_symlink()
    assert names(outside) == {target.name, f"{target.stem}.seat0.log", f"{target.stem}.seat1.log"}
    assert nested.exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["MISSING", "--max-mb", "1"], "no such records directory"),
        (["FILE", "--max-mb", "1"], "not a directory"),
        (["DIR"], "say what to prune: --older-than-days N, --max-mb M, or both"),
        (["DIR", "--older-than-days", "-1"], "argument --older-than-days: -1: must be"),
        (["DIR", "--older-than-days", "ten"], "argument --older-than-days: 'ten' is not a number"),
        (["DIR", "--max-mb", "nan"], "argument --max-mb: nan: must be a finite number"),
        (["DIR", "--max-mb", "inf"], "argument --max-mb: inf: must be a finite number"),
        (["DIR", "--max-mb", "1", "--keep-for", "MISSING"], "no tournament database (--keep-for)"),
        (["DIR", "--max-mb", "1", "--keep-for", "EMPTYDB"], "--keep-for EMPTYDB: no tournament in"),
    ],
)
def test_bad_input_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    (tmp_path / "file").write_text("")
    TournamentStore(str(tmp_path / "empty.db")).close()
    where = {
        "MISSING": str(tmp_path / "missing"),
        "FILE": str(tmp_path / "file"),
        "DIR": str(tmp_path),
        "EMPTYDB": str(tmp_path / "empty.db"),
    }
    expected = message.replace("EMPTYDB", where["EMPTYDB"])
    with pytest.raises(SystemExit) as exit_:
        code = main(["replay", "prune", *[where.get(a, a) for a in args]])
        raise SystemExit(code)
    assert exit_.value.code == 2
    assert expected in capsys.readouterr().err
    assert not (tmp_path / "missing").exists()


def test_the_stdio_bridges_logs_are_left_uncounted_and_the_help_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # bot-NAME-PID.log (the bridge's, MEDINA_LOG_DIR) names no record: docs/operations.md
    now = time.time()
    finished(tmp_path, 1, 40, now)
    bridge = tmp_path / "bot-mybot-4242.log"
    bridge.write_text("[bridge] started")
    aged(bridge, 40, now)
    assert main(["replay", "prune", str(tmp_path), "--max-mb", "0"]) == 0
    assert "deleted 1 record(s) and 2 bot log(s)" in capsys.readouterr().out
    assert names(tmp_path) == {bridge.name}
    with pytest.raises(SystemExit):
        main(["replay", "prune", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "bot-<name>-<pid>.log" in text and "-name 'bot-*.log' -mtime +30 -delete" in text


def test_a_sandboxed_bots_own_log_moved_beside_its_seat_log_goes_with_the_record(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A sandbox moves what its program logged in the box to MATCH.seatN.NAME.log: it belongs
    # to the record, but prune left it (and --max-mb did not count it).
    now = time.time()
    old = finished(tmp_path, 1, 40, now)
    boxed = tmp_path / f"{old.stem}.seat1.bot-mybot-4242.log"
    boxed.write_text("[bridge] started")
    aged(boxed, 40, now)
    assert main(["replay", "prune", str(tmp_path), "--older-than-days", "3"]) == 0
    assert "deleted 1 record(s) and 3 bot log(s)" in capsys.readouterr().out
    assert names(tmp_path) == set()
