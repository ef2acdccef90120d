"""The viewer of a running server whose records are pruned under it (``replay prune``): a
pruned match's replay, record and listing answer 404 / leave the list, never a traceback."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from medina.cli import main as cli
from medina.referee.config import MatchSettings
from records.test_verify import engine_record

from .conftest import ArenaThread
from .test_app import fetch


def test_a_pruned_record_is_a_clean_404(tmp_path: Path) -> None:
    old = engine_record(tmp_path, "medina-v2", 2, 1)
    kept = engine_record(tmp_path, "medina-v2", 2, 2)
    then = time.time() - 30 * 86_400
    os.utime(old, (then, then))
    a = ArenaThread(tmp_path)
    try:
        urls = [
            f"/replay/{old.stem}",
            f"/api/records/{old.stem}/replay",
            f"/api/records/{old.stem}/record.jsonl",
        ]
        assert [fetch(a.url + u)[0] for u in urls] == [200, 200, 200]
        assert cli(["replay", "prune", str(tmp_path), "--older-than-days", "7"]) == 0
        answers = [fetch(a.url + u) for u in urls]
        assert [status for status, _h, _b in answers] == [404, 404, 404], answers
        assert b"Traceback" not in b"".join(body for _s, _h, body in answers)
        error = json.loads(answers[1][2])["error"]
        assert error.startswith(f"no record '{old.stem}'"), error
        status, _h, body = fetch(a.url + "/api/matches")
        assert status == 200
        assert [r["match_id"] for r in json.loads(body)] == [kept.stem]
    finally:
        a.close()


def test_a_pruned_match_still_in_memory_leaves_the_list_and_its_live_page(
    tmp_path: Path,
) -> None:
    """A match of this run that ended moments ago (still in the server's memory) goes when
    its record is pruned, as the server's ListMatches drops it: no row, no live page."""
    a = ArenaThread(tmp_path)
    try:
        hosted = a.create(MatchSettings("medina-v2", 2, 1))
        a.play(hosted, seed=1).result(60)
        status, _h, body = fetch(a.url + "/api/matches")
        assert [r["match_id"] for r in json.loads(body)] == [hosted.match_id]
        assert fetch(a.url + f"/live/{hosted.match_id}")[0] == 200
        argv = ["replay", "prune", str(tmp_path), "--older-than-days", "0", "--max-mb", "0"]
        assert cli(argv) == 0
        status, _h, body = fetch(a.url + "/api/matches")
        assert status == 200 and json.loads(body) == []
        assert fetch(a.url + f"/live/{hosted.match_id}")[0] == 404
    finally:
        a.close()
