"""``medina-arena check-bot`` end to end: the SDK's bots pass every check, and each broken bot in
``broken_bots/`` fails the check made for it, with a reason naming what it got wrong."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from medina.checkbot import CHECKS
from medina.records.reader import read_record
from medina.records.verify import verify_record

ARENA = [sys.executable, "-m", "medina.cli", "check-bot"]
#: The broken bots run as ``python -m e2e.broken_bots.NAME`` (the kit passes its environment on).
TESTS = Path(__file__).resolve().parent.parent
ENV = dict(
    os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")]))
)


def check_bot(*args: str, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ARENA, *args], capture_output=True, text=True, timeout=timeout, env=ENV)


def report_of(*args: str) -> tuple[int, dict[str, Any]]:
    """Run with --json; the exit status and the checks by name."""
    done = check_bot("--json", *args)
    assert done.returncode in (0, 1), done.stderr
    report = json.loads(done.stdout)
    return done.returncode, {c["name"]: c for c in report["checks"]}


def broken(name: str, records: Path) -> list[str]:
    """The command of a broken bot; its records and logs go to ``records`` (a failed check
    keeps them, and a test must not leave them behind)."""
    return ["--records", str(records), "--", "python", "-m", f"e2e.broken_bots.{name}"]


@pytest.mark.timeout(120)
def test_the_random_bot_passes_every_check_and_the_records_verify(tmp_path: Path) -> None:
    done = check_bot("--records", str(tmp_path), "--", "python", "-m", "medina_client")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "check-bot: python -m medina_client"
    passed = [line.split()[1] for line in lines if line.startswith("  PASS  ")]
    assert passed == list(CHECKS)
    assert f"{len(CHECKS)} checks: {len(CHECKS)} passed, 0 failed" in done.stdout
    records = sorted(tmp_path.glob("*.jsonl"))
    assert len(records) == len(CHECKS)
    for path in records:  # scripted openings included, every match replays to its result
        report = verify_record(read_record(path))
        assert report.ok and report.complete, report.summary()
    assert len(list(tmp_path.glob("*.log"))) == len(CHECKS)


@pytest.mark.timeout(120)
def test_the_greedy_bot_passes_every_check_and_json_reports_it() -> None:
    code, checks = report_of("--", "python", "-m", "medina_client", "--bot", "greedy")
    assert code == 0
    assert list(checks) == list(CHECKS)
    assert all(c["passed"] for c in checks.values()), checks
    assert checks["kind-stable"]["reason"].startswith("request 1: only stables were legal")
    assert checks["kind-stable"]["record"] is None  # the temporary directory is gone


@pytest.mark.timeout(60)
@pytest.mark.skipif(shutil.which("node") is None, reason="needs node for the stdio example bot")
def test_a_stdio_bot_is_checked_through_the_sdk_bridge(tmp_path: Path) -> None:
    bot = str(TESTS.parent / "clients" / "stdio" / "random_bot.js")
    code, checks = report_of(
        "--only", "kind-blocking-rooftop", "--only", "match-end",
        "--", "python", "-m", "medina_client", "stdio", "--log-dir", str(tmp_path),
        "--", "node", bot,
    )  # fmt: skip
    assert code == 0, checks
    assert len(list(tmp_path.glob("bot-*.log"))) == 2  # one bridge per check
    assert checks["kind-blocking-rooftop"]["reason"].startswith(
        "request 1: only blocking rooftops were legal"
    )


@pytest.mark.timeout(60)
def test_a_bot_that_never_answers_fails_with_the_request_it_left_open(tmp_path: Path) -> None:
    code, checks = report_of(
        "--only", "kind-stable", "--only", "tight-clock",
        "--decision-ms", "300", "--tight-ms", "300", "--first-extra-ms", "0",
        *broken("silent", tmp_path),
    )  # fmt: skip
    assert code == 1
    assert re.fullmatch(
        r"seat 0 sent no reply to request \d+ within 300 ms \(only stables were legal there\)",
        checks["kind-stable"]["reason"],
    )
    assert re.fullmatch(
        r"seat 2 sent no reply to request \d+ within 300 ms", checks["tight-clock"]["reason"]
    )
    assert Path(checks["tight-clock"]["log"]).is_file()  # kept: a check failed


@pytest.mark.timeout(60)
def test_a_bot_that_does_not_retry_fails_the_rejection_drill_only(tmp_path: Path) -> None:
    code, checks = report_of(
        "--only", "rejection-retry", "--only", "kind-wall", "--decision-ms", "500",
        *broken("no_retry", tmp_path),
    )  # fmt: skip
    assert code == 1
    assert re.fullmatch(
        r"did not answer request \d+ again within 500 ms after the drill rejection",
        checks["rejection-retry"]["reason"],
    )
    assert checks["kind-wall"]["passed"]


@pytest.mark.timeout(60)
def test_a_bot_that_crashes_on_stables_fails_the_stable_check(tmp_path: Path) -> None:
    code, checks = report_of(
        "--only", "kind-stable", "--only", "kind-wall", *broken("stable_crash", tmp_path)
    )
    assert code == 1
    assert checks["kind-stable"]["reason"] == (
        "the bot exited with code 1 while request 1 was open (only stables were legal); "
        "its log ends: RuntimeError: this bot does not know how to place a stable"
    )
    assert checks["kind-wall"]["passed"]


@pytest.mark.timeout(60)
def test_a_bot_that_never_reconnects_fails_the_reconnect_check(tmp_path: Path) -> None:
    code, checks = report_of(
        "--only", "reconnect", "--reconnect-s", "1", *broken("no_reconnect", tmp_path)
    )
    assert code == 1
    assert checks["reconnect"]["reason"] == (
        "did not reconnect within 1 s after its stream was dropped (the kit ended it with "
        "status OK and no MatchEnded, which means: resume)"
    )


@pytest.mark.timeout(60)
def test_a_bot_that_lingers_after_the_match_fails_the_match_end_check(tmp_path: Path) -> None:
    code, checks = report_of(
        "--only", "match-end", "--only", "kind-wall", "--exit-s", "1", *broken("no_exit", tmp_path)
    )
    assert code == 1
    assert checks["match-end"]["reason"] == "still running 1 s after MatchEnded"
    assert checks["kind-wall"]["passed"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "no bot command: put it after --"),
        (("--",), "no bot command"),
        (("--only", "kind-palace", "--", "bot"), "unknown check 'kind-palace'; the checks are"),
        (("--decision-ms", "0", "--", "bot"), "decision_ms must be 1..3600000 ms, got 0"),
        (("--exit-s", "-1", "--", "bot"), "exit_s must be more than 0"),
        (("--only", "kind-wall", "--", "/no/such/bot"), "cannot start bot '/no/such/bot'"),
    ],
)
@pytest.mark.timeout(60)
def test_usage_errors_exit_2_naming_the_problem(args: tuple[str, ...], message: str) -> None:
    done = check_bot(*args)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.startswith("medina-arena check-bot: ") and message in done.stderr


def test_list_names_every_check() -> None:
    done = check_bot("--list")
    assert done.returncode == 0
    assert [line.split()[0] for line in done.stdout.splitlines()] == list(CHECKS)


def stdio(name: str, records: Path) -> list[str]:
    """A stdio test bot under the SDK's bridge."""
    return ["--records", str(records), "--", "python", "-m", "medina_client", "stdio", "--",
            sys.executable, str(TESTS / "e2e" / "broken_bots" / f"{name}.py")]  # fmt: skip


@pytest.mark.timeout(60)
def test_an_unflushed_stdio_bot_is_told_about_output_buffering(tmp_path: Path) -> None:
    code, checks = report_of(
        "--only", "kind-stable", "--decision-ms", "400", *stdio("stdio_unflushed", tmp_path)
    )
    assert code == 1
    reason = checks["kind-stable"]["reason"]
    assert reason.startswith("seat 0 sent no reply to request ")
    assert "the stdio bridge said:" in reason and "output buffering" in reason
    assert "print(..., flush=True)" in reason and "mawk -W interactive" in reason


@pytest.mark.timeout(60)
def test_a_debug_line_on_stdout_is_named_in_the_report(tmp_path: Path) -> None:
    code, checks = report_of(
        "--only", "kind-stable", "--decision-ms", "400", *stdio("stdio_chatty", tmp_path)
    )
    assert code == 1
    reason = checks["kind-stable"]["reason"]
    assert "the stdio bridge said: line 1 from the bot" in reason
    assert "thinking about" in reason  # the offending line is quoted
    assert "and anything else to stderr" in reason  # and the fix


@pytest.mark.timeout(60)
def test_a_crashing_stdio_bot_is_reported_with_its_programs_own_words(tmp_path: Path) -> None:
    # The report quoted the bridge's last line, naming a log file already moved, and the
    # bridge's exit status 3 for the program's.
    code, checks = report_of("--only", "kind-building", *stdio("stdio_crash", tmp_path))
    assert code == 1
    reason = checks["kind-building"]["reason"]
    assert reason.startswith(
        "the bot's program exited with status 5 and its stdio bridge with code 3 while "
        "request 2 was open"
    )
    found = re.search(r"; its log ends: oops: cannot handle request 2 \(in (.+)\)$", reason)
    assert found is not None, reason
    kept = Path(found.group(1))
    assert kept.parent == tmp_path and kept.name.startswith("kind-building.")
    assert "oops: cannot handle request 2" in kept.read_text()
