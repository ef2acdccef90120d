"""The report: aligned PASS/FAIL lines, a summary, JSON with paths only when kept."""

from __future__ import annotations

import json

from medina.checkbot import CheckResult, Report, result_line

GOOD = CheckResult("kind-wall", True, "request 1: only walls", "m1", "/r/m1.jsonl", "/r/w.log")
BAD = CheckResult("match-end", False, "still running 5 s after MatchEnded", "m2", "/r/m2", "/r/e")


def test_lines_align_the_reasons() -> None:
    assert result_line(GOOD) == "  PASS  kind-wall              request 1: only walls"
    assert result_line(BAD).startswith("  FAIL  match-end              still running")
    long = CheckResult("kind-blocking-rooftop", True, "x")
    assert result_line(long) == "  PASS  kind-blocking-rooftop  x"


def test_text_and_summary() -> None:
    report = Report(("python", "-m", "bot x"), (GOOD, BAD), 3.21, "/r")
    assert not report.passed and report.failed() == [BAD]
    assert report.text().splitlines() == [
        "check-bot: python -m 'bot x'",
        result_line(GOOD),
        result_line(BAD),
        "2 checks: 1 passed, 1 failed (3.2 s)",
        "records and bot logs: /r",
    ]
    assert Report(("b",), (GOOD,), 1.0, None).summary() == "1 check: 1 passed, 0 failed (1.0 s)"


def test_json_keeps_paths_only_when_the_files_are_kept() -> None:
    kept = json.loads(Report(("b",), (GOOD, BAD), 2.0, "/r").to_json())
    assert kept["passed"] is False and kept["records"] == "/r" and kept["command"] == ["b"]
    assert kept["checks"][1] == {
        "name": "match-end",
        "passed": False,
        "reason": "still running 5 s after MatchEnded",
        "match_id": "m2",
        "record": "/r/m2",
        "log": "/r/e",
    }
    gone = json.loads(Report(("b",), (GOOD,), 2.0, None).to_json())
    assert gone["passed"] is True and gone["records"] is None
    assert gone["checks"][0]["record"] is None and gone["checks"][0]["log"] is None
