"""A sandboxed tournament from the command line: limits from the file, a bot's own and the
command line's; entry validation names the limit a bot hits; played, the rogues are
charged with their limits and the bystanders' games -- two at once -- are clean."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from medina.storage.tournaments import TournamentStore
from tournament.cups import run_cli, standings_json

ROGUE = Path(__file__).resolve().parent / "bots" / "rogue.py"

pytestmark = [pytest.mark.timeout(600), pytest.mark.usefixtures("bwrap")]

CUP = f"""\
name = "caged"
games = 12
seed = 3
[[variants]]
ruleset = "medina-v2"
players = 2
[clock]
decision_ms = 10000
[sandbox]
memory_mb = 256
cpu_s = 60
processes = 32
[[bots]]
name = "greedy"
command = "python -m medina_client --bot greedy"
[[bots]]
name = "random"
command = "python -m medina_client --bot random"
[[bots]]
name = "hog"
command = ["python", "{ROGUE}", "--do", "hog"]
[[bots]]
name = "spinner"
command = ["python", "{ROGUE}", "--do", "spin"]
env = {{ SPIN_WAIT_S = "60" }}
sandbox = {{ cpu_s = 1 }}
"""


def test_a_sandboxed_tournament_charges_each_limit_to_its_bot(tmp_path: Path) -> None:
    os.chmod(tmp_path, 0o755)  # the bots' directory: the sandbox's user may read it
    (tmp_path / "caged.toml").write_text(CUP)
    limits = ("--sandbox-memory-mb", "128")  # the command line over the file's 256
    stopped = run_cli("tournament", "run", "caged.toml", *limits, cwd=tmp_path)
    assert stopped.returncode == 1, stopped.stderr
    assert "bot 'hog' failed its entry game" in stopped.stderr
    assert "stopped by its sandbox (memory limit 128 MiB reached)" in stopped.stderr
    assert "bot 'spinner' failed its entry game" in stopped.stderr
    assert "stopped by its sandbox (CPU time limit 1 s reached)" in stopped.stderr
    assert "entry: greedy (medina-v2 2p) ok" in stopped.stdout

    done = run_cli(
        "tournament",
        "run",
        "caged.toml",
        *limits,
        "--validation",
        "off",
        "--concurrency",
        "2",
        "--quiet",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    rows = {r["bot"]: r for r in standings_json(tmp_path, "caged.toml")}
    assert rows["hog"]["crashed"] == rows["hog"]["games"] == 6
    assert rows["spinner"]["crashed"] == rows["spinner"]["games"] == 6
    for bystander in ("greedy", "random"):
        assert rows[bystander]["games"] == 6
        faults = ("timeout", "illegal_action", "crashed", "disconnected", "stalled", "no_show")
        assert all(rows[bystander][f] == 0 for f in faults), rows[bystander]
        assert rows[bystander]["strikes"] == 0
    store = TournamentStore(str(tmp_path / "tournaments" / "caged" / "tournament.db"))
    tid = store.tournament("caged").id
    config = json.loads(store.tournament("caged").config)
    assert {b["name"]: b["sandbox"]["memory_mb"] for b in config["bots"]} == dict.fromkeys(
        ("greedy", "random", "hog", "spinner"), 128
    )
    assert next(b for b in config["bots"] if b["name"] == "spinner")["sandbox"]["cpu_s"] == 1
    for g in store.results(tid):
        for s in g.seats:
            if s.bot == "hog":
                assert "sandbox: memory limit 128 MiB reached" in s.detail
            elif s.bot == "spinner":
                assert "sandbox: CPU time limit 1 s reached" in s.detail
            else:
                assert (s.termination, s.strikes) == ("normal", 0), g


def test_sandboxed_bots_see_no_tournament_file_output_or_other_bot(tmp_path: Path) -> None:
    """The organiser's working directory holds this tournament's file (a bot's secret env),
    another tournament's file, output and records, and the bots' directories: a bot with a
    directory of its own sees none of it, and one without (it runs in the tournament file's
    directory) sees that directory but not the file, the outputs or the other bot."""
    os.chmod(tmp_path, 0o755)
    org = tmp_path / "org"
    old = org / "tournaments" / "old"
    (old / "records").mkdir(parents=True)
    (old / "tournament.db").write_bytes(b"SQLite format 3\x00 old games")
    (old / "records" / "m1.jsonl").write_text('{"hidden": "supply"}\n')
    (org / "other.toml").write_text('env = { THEIR_KEY = "sk-other-456" }\n')
    (org / "bots" / "snoop").mkdir(parents=True)
    for d in (org, org / "bots", org / "bots" / "snoop"):
        os.chmod(d, 0o755)
    targets = [
        org / "cup.toml",
        org / "other.toml",
        org / "tournaments",
        old / "tournament.db",
        old / "records" / "m1.jsonl",
        org / "tournaments" / "nosy" / "tournament.db",
        org / "bots",
        org / "bots" / "snoop",
    ]
    reads = f'READ_TARGETS = "{":".join(map(str, targets))}"'
    (org / "cup.toml").write_text(
        'name = "nosy"\ngames = 2\nvalidation = "off"\n'
        '[[variants]]\nruleset = "medina-v2"\nplayers = 2\n'
        "[clock]\ndecision_ms = 10000\n[sandbox]\nmemory_mb = 256\n"
        f'[[bots]]\nname = "snoop"\ncwd = "bots/snoop"\n'
        f'command = ["python", "{ROGUE}", "--do", "read"]\nenv = {{ {reads} }}\n'
        f'[[bots]]\nname = "lazy"\ncommand = ["python", "{ROGUE}", "--do", "read"]\n'
        f'env = {{ {reads}, OTHER_API_KEY = "sk-secret-123" }}\n'
    )
    done = run_cli("tournament", "run", "cup.toml", "--quiet", cwd=org)
    assert done.returncode == 0, done.stderr
    logs: dict[str, list[str]] = {"snoop": [], "lazy": []}
    store = TournamentStore(str(org / "tournaments" / "nosy" / "tournament.db"))
    records = org / "tournaments" / "nosy" / "records"
    for g in store.results(store.tournament("nosy").id):
        for n, s in enumerate(g.seats):
            logs[s.bot].append((records / f"{g.match_id}.seat{n}.log").read_text())
    for bot, texts in logs.items():
        assert len(texts) == 2, bot
        for log in texts:
            assert "sk-secret-123" not in log, log
            assert "SQLite" not in log and "supply" not in log, log
            assert f"cannot read {old / 'tournament.db'}: ENOENT" in log, log
    for log in logs["snoop"]:  # the working directory is hidden but for its own directory
        assert f"cannot read {org / 'cup.toml'}: ENOENT" in log, log
        assert f"cannot read {org / 'other.toml'}: ENOENT" in log and "sk-other" not in log, log
        assert f"cannot read {org / 'tournaments'}: ENOENT" in log, log
        assert f"listed {org / 'bots'}: ['snoop']" in log, log
    for log in logs["lazy"]:  # its own directory is the file's: visible, but not snoop's
        assert f"read {org / 'cup.toml'}: 0 bytes" in log, log  # blanked
        assert f"read {org / 'other.toml'}: 37 bytes" in log, log
        assert f"listed {org / 'tournaments'}: []" in log, log
        assert f"listed {org / 'bots' / 'snoop'}: []" in log, log


def test_a_bot_directory_given_through_dotdot_is_found_in_the_sandbox(tmp_path: Path) -> None:
    # cwd = "../bots/writer" (docs/tournaments.md's "../mybot") went to bwrap as it was:
    # "Can't chdir to .../cup/../bots/writer", through the tournament file's directory,
    # which the sandbox hides.
    os.chmod(tmp_path, 0o755)
    cup, bot = tmp_path / "cup", tmp_path / "bots" / "writer"
    cup.mkdir()
    bot.mkdir(parents=True)
    for d in (cup, tmp_path / "bots"):
        os.chmod(d, 0o755)
    os.chmod(bot, 0o777)  # it writes there
    (cup / "cup.toml").write_text(
        'name = "up"\ngames = 2\nvalidation = "off"\n'
        '[[variants]]\nruleset = "medina-v2"\nplayers = 2\n'
        "[clock]\ndecision_ms = 10000\n[sandbox]\nmemory_mb = 256\n"
        f'[[bots]]\nname = "writer"\ncwd = "../bots/writer"\n'
        f'command = ["python", "{ROGUE}", "--do", "write"]\n'
        '[[bots]]\nname = "greedy"\ncommand = "python -m medina_client --bot greedy"\n'
    )
    done = run_cli("tournament", "run", "cup.toml", "--quiet", cwd=cup)
    assert done.returncode == 0, done.stderr
    assert "chdir" not in done.stderr, done.stderr
    rows = {r["bot"]: r for r in standings_json(cup, "cup.toml")}
    assert rows["writer"]["games"] == 2 and rows["writer"]["crashed"] == 0, rows
    assert (bot / "own.txt").read_text() == "rogue was here\n"
