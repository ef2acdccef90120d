"""``medina-arena replay list DIR``: the operator's view of a records directory."""

from __future__ import annotations

from pathlib import Path

import pytest
from medina.cli import main

from .test_verify import engine_record


def test_lists_each_record_and_fails_on_unfinished_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    done = engine_record(tmp_path, "medina-v2", 3, 1)
    assert main(["replay", "list", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert done.stem in out and "finished" in out and "medina-v2 3p" in out
    assert "1 record(s), 0 unfinished or unreadable" in out
    cut = engine_record(tmp_path, "medina-v1-2p", 2, 2, stop_after=9)
    lines = cut.read_text().splitlines(keepends=True)
    cut.write_text("".join(lines[:-2]))  # no ABORTED incident, no outcome: a crash, or in play
    (tmp_path / "junk.jsonl").write_text("not json\n")
    assert main(["replay", "list", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith(cut.stem))
    # the file does not tell a crash from a match in play: it said "the server stopped"
    assert row.split()[1] == "unfinished" and "9 decisions" in row
    assert row.endswith(
        "(unfinished: no outcome line yet (still being played, or its server stopped during "
        "the match); the record is readable up to its last complete entry (9 decisions))"
    ), row
    assert "junk" in out and "unreadable" in out
    assert "3 record(s), 2 unfinished or unreadable" in out


def test_verify_calls_a_record_without_an_outcome_unfinished_as_list_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Run on a live directory, a record with no outcome line may be a match being played:
    ``verify`` says so in ``list``'s words, not that it was interrupted."""
    cut = engine_record(tmp_path, "medina-v1-2p", 2, 2, stop_after=9)
    lines = cut.read_text().splitlines(keepends=True)
    cut.write_text("".join(lines[:-2]))  # no ABORTED incident, no outcome: in play, or a crash
    assert main(["replay", "verify", str(cut)]) == 0
    assert capsys.readouterr().out == (
        f"{cut}: OK, 9 decisions replayed; unfinished: no outcome line yet (still being "
        "played, or its server stopped during the match); verified up to the last complete "
        "entry\n"
    )
    cut.write_text("".join(lines[:-2]) + lines[-2][:7])  # a line cut mid-write
    assert main(["replay", "verify", str(cut)]) == 0
    out = capsys.readouterr().out
    assert "interrupted" not in out
    assert out.rstrip().endswith(
        "; verified up to the last complete entry; its last line was cut off mid-write"
    ), out


def test_a_missing_directory_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["replay", "list", str(tmp_path / "nope")]) == 2
    assert "no such records directory" in capsys.readouterr().err
    # The other kind of path than asked for is named as such, not as missing.
    record = tmp_path / "one.jsonl"
    record.write_text("{}\n")
    assert main(["replay", "list", str(record)]) == 2
    assert "one.jsonl is a file, not a records directory" in capsys.readouterr().err
    for command in ("verify", "show"):
        assert main(["replay", command, str(tmp_path)]) == 2
        assert "is a directory, not a record file" in capsys.readouterr().err
    record.unlink()
    assert main(["replay", "list", str(tmp_path)]) == 0
    assert "no records" in capsys.readouterr().out
