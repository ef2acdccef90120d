"""Run in a subprocess by ``test_full_disk``: a match of the in-process ``Arena`` whose
record meets the process's file size limit (RLIMIT_FSIZE, a real write error: EFBIG, as a full
disk gives ENOSPC), then the limit lifted ("space back"). Prints what it saw as one JSON line.

Usage: ``python fsize_play.py RECORDS_DIR LIMIT_BYTES``."""

from __future__ import annotations

import asyncio
import json
import logging
import resource
import sys
from pathlib import Path

from medina.records.reader import read_record
from medina.records.verify import verify_record
from medina.referee.config import MatchSettings
from medina.referee.local import random_policy
from medina.rpc.single.host import Arena, RecordsFullError


class Lines(logging.Handler):
    """Keeps every log line of ``medina.records`` at WARNING or above."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(f"{record.levelname} {record.getMessage()}")


async def main(records: Path, limit: int) -> dict[str, object]:
    lines = Lines()
    logging.getLogger("medina.records").addHandler(lines)
    _, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
    arena = Arena(records, records_reserve_bytes=0)
    settings = MatchSettings(ruleset="medina-v2", players=2, seed=5)
    local = {0: random_policy(1), 1: random_policy(2)}
    hosted = arena.create(settings, local=local)
    assert hosted.task is not None
    outcome = await hosted.task
    size = hosted.record_path.stat().st_size
    ends_whole = hosted.record_path.read_bytes().endswith(b"\n")
    try:
        arena.create(settings, local=local)
        refused = ""
    except RecordsFullError as exc:
        refused = str(exc)
    still_held = not arena.space.retry()  # no room yet
    resource.setrlimit(resource.RLIMIT_FSIZE, (hard, hard))  # room again
    completed = arena.space.retry()
    record = read_record(hosted.record_path)
    report = verify_record(record)
    again = arena.create(settings, local=local)
    assert again.task is not None
    second = await again.task
    return {
        "phase": hosted.match.phase.name,
        "details": [s.detail for s in outcome.seats],
        "size": size,
        "ends_whole": ends_whole,
        "refused": refused,
        "still_held": still_held,
        "completed": completed,
        "verified": report.ok,
        "note": report.note,
        "record_ended": record.outcome is not None,
        "second_complete": second.complete,
        "log": lines.lines,
    }


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(Path(sys.argv[1]), int(sys.argv[2])))))
