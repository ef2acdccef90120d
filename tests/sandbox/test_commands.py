"""`match --sandbox` and `check-bot --sandbox`: the same sandbox from the other commands, a
limit named where the command reports a bot's end."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from tournament.cups import run_cli

ROGUE = Path(__file__).resolve().parent / "bots" / "rogue.py"

pytestmark = [pytest.mark.timeout(300), pytest.mark.usefixtures("bwrap")]


def test_match_sandboxes_every_bot_and_names_the_limit(tmp_path: Path) -> None:
    os.chmod(tmp_path, 0o755)  # the bots' directory (the current one)
    done = run_cli(
        "match",
        "--players",
        "2",
        "--decision-ms",
        "10000",
        "--sandbox-memory-mb",
        "128",
        "--bot",
        f"python {ROGUE} --do hog",
        "--bot",
        "python -m medina_client --bot random",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert "seat 0's bot exited with code 137 during the match" in done.stderr
    assert "(sandbox: memory limit 128 MiB reached)" in done.stderr
    assert "crashed" in done.stdout


def test_check_bot_reports_the_limit_as_the_reason(tmp_path: Path) -> None:
    os.chmod(tmp_path, 0o755)
    good = run_cli(
        "check-bot", "--sandbox", "--only", "kind-building", "--",
        "python", "-m", "medina_client", "--bot", "greedy", cwd=tmp_path,
    )  # fmt: skip
    assert good.returncode == 0, good.stdout + good.stderr
    assert "PASS  kind-building" in good.stdout
    bad = run_cli(
        "check-bot", "--sandbox-memory-mb", "128", "--only", "kind-building", "--",
        "python", str(ROGUE), "--do", "hog", cwd=tmp_path,
    )  # fmt: skip
    assert bad.returncode == 1
    assert "the bot was stopped by its sandbox (memory limit 128 MiB reached)" in bad.stdout
