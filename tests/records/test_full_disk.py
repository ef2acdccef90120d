"""A record that cannot be written (a full disk; here the process's file size limit, a real
write error): the file keeps whole lines only, the match is aborted saying why, new matches
are refused, and the record is completed once there is room (docs/operations.md, "Records: a
full disk")."""

from __future__ import annotations

import json
import re
import resource
import subprocess
import sys
from pathlib import Path

from medina.records.space import RecordsSpace
from medina.records.writer import RecordWriter, entry_line
from medina.referee.record import RecordWriteError
from medina.v1 import record_pb2

HERE = Path(__file__).parent


def test_a_match_whose_record_cannot_be_written_is_aborted_then_completed(tmp_path: Path) -> None:
    records = tmp_path / "records"
    done = subprocess.run(
        [sys.executable, str(HERE / "fsize_play.py"), str(records), "6000"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen["phase"] == "ABORTED"
    assert set(seen["details"]) == {"the match record could not be written (File too large)"}
    assert seen["size"] <= 6000 and seen["ends_whole"]  # never half a line
    assert "is not writable (File too large)" in seen["refused"]
    assert seen["still_held"] and seen["completed"]
    assert seen["verified"] and seen["record_ended"] and seen["note"].startswith("aborted")
    assert seen["second_complete"]
    # One line when the trouble starts, one when it ends: not one a decision, or a retry.
    assert len(seen["log"]) == 2, seen["log"]
    assert seen["log"][0].startswith("ERROR new matches are refused: the records directory")
    assert seen["log"][1].startswith("WARNING the records directory")
    assert "writable again" in seen["log"][1]


def _fill(path: Path, limit: int) -> None:
    """In a child process: write lines past ``limit`` bytes, then lift the limit and flush."""
    _, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
    writer = RecordWriter(path, "m1")
    line = entry_line(record_pb2.RecordEntry(incident=record_pb2.RecordIncident(detail="x" * 90)))
    failed_at = -1
    for n in range(40):
        try:
            writer._write_line(line)
        except RecordWriteError:
            failed_at = n
    assert failed_at >= 0 and len(writer.unwritten) == 40 - failed_at
    data = writer.path.read_bytes()
    assert data.endswith(b"\n") and len(data) == failed_at * len(line)
    assert not writer.flush()  # still no room: nothing more written, nothing lost
    assert writer.path.read_bytes() == data
    resource.setrlimit(resource.RLIMIT_FSIZE, (hard, hard))
    writer.close()  # held open until its lines are out
    assert writer.flush() and not writer.unwritten
    assert writer.path.read_bytes() == line * 40


def test_a_line_that_cannot_be_written_is_cut_back_and_kept_in_order(tmp_path: Path) -> None:
    code = (
        f"import sys; sys.path.insert(0, {str(HERE.parent)!r}); from pathlib import Path; "
        f"from records.test_full_disk import _fill; _fill(Path({str(tmp_path)!r}), 1000)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr


def test_the_reserve_refusal_names_a_section_the_operations_guide_has(tmp_path: Path) -> None:
    # it named "Records", which the guide splits into "Records: a full disk" and "...: retention"
    why = RecordsSpace(tmp_path, reserve_bytes=1 << 62).refusal()  # more than any disk has
    assert why is not None
    cited = re.search(r"docs/operations\.md, '([^']+)'", why)
    assert cited is not None, why
    guide = (HERE.parents[1] / "docs" / "operations.md").read_text()
    headings = {line.lstrip("#").strip() for line in guide.splitlines() if line.startswith("#")}
    assert cited[1] in headings
