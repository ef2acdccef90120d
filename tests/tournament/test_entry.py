"""Entry validation: a bot whose command is misspelt stops the tournament before its first
game, naming the bot and the reason; set to drop, the run goes on without it and remembers."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

import pytest
from medina.storage.tournaments import TournamentStore
from medina.tournament.config import TournamentConfigError, load

from .cups import cli, run_cli, standings_json, wait_for

pytestmark = pytest.mark.timeout(300)

TRIO = """\
name = "trio"
games = {games}
{extra}
[[variants]]
ruleset = "medina-v2"
players = 2
[clock]
decision_ms = 10000
[[bots]]
name = "greedy"
command = "python -m medina_client --bot greedy"
[[bots]]
name = "random"
command = "python -m medina_client --bot random"
[[bots]]
name = "typo"
command = "python -m medina_client --bot greddy"
"""


def trio(directory: Path, extra: str = "", games: int = 2) -> Path:
    path = directory / "trio.toml"
    path.write_text(TRIO.format(extra=extra, games=games))
    return path


def test_a_misspelt_command_stops_the_run_before_the_first_game(tmp_path: Path) -> None:
    trio(tmp_path)
    done = run_cli("tournament", "run", "trio.toml", "--concurrency", "2", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "bot 'typo' failed its entry game" in done.stderr
    assert "exited with code 2 before connecting" in done.stderr
    assert "invalid choice: 'greddy'" in done.stderr  # the bot's own words, from its log
    assert "nothing was played" in done.stderr
    assert "entry: greedy (medina-v2 2p) ok" in done.stdout
    assert "entry: random (medina-v2 2p) ok" in done.stdout
    assert "starting" not in done.stdout
    store = TournamentStore(str(tmp_path / "tournaments" / "trio" / "tournament.db"))
    assert store.tournaments() == []  # no tournament, no game: nothing to resume or count


def test_dropped_bots_are_left_out_with_a_warning_and_stay_out(tmp_path: Path) -> None:
    trio(tmp_path, 'validation = "drop"')
    done = run_cli("tournament", "run", "trio.toml", "--concurrency", "2", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "warning: bot 'typo' is dropped from the tournament" in done.stderr
    assert "invalid choice: 'greddy'" in done.stderr
    rows = standings_json(tmp_path, "trio.toml")
    assert sorted(r["bot"] for r in rows) == ["greedy", "random"]
    assert all(r["games"] == 2 and r["crashed"] == 0 for r in rows)
    # run again: the tournament continues as it started (typo still out), nothing replayed
    again = run_cli("tournament", "run", "trio.toml", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "continuing, 2 games (2 done)" in again.stdout
    assert "entry validation" not in again.stdout
    assert "(left out at entry: typo)" in again.stdout
    # and `standings` names them too, as the run's last table does
    shown = run_cli("tournament", "standings", "trio.toml", cwd=tmp_path)
    assert shown.returncode == 0 and "(left out at entry: typo)" in shown.stdout, shown.stdout


def test_validation_off_on_the_command_line_plays_the_typo(tmp_path: Path) -> None:
    trio(tmp_path, games=6)  # every pair meets once
    done = run_cli("tournament", "run", "trio.toml", "--validation", "off", "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    rows = {r["bot"]: r for r in standings_json(tmp_path, "trio.toml")}
    assert rows["typo"]["games"] == 4 and rows["typo"]["crashed"] == 4  # as it did before


def test_validation_is_checked_and_dropping_keeps_enough_bots(tmp_path: Path) -> None:
    path = trio(tmp_path, 'validation = "sometimes"')
    with pytest.raises(TournamentConfigError, match=r"trio.toml:3: validation: unknown"):
        load(path)
    cfg = load(trio(tmp_path))
    assert [b.name for b in cfg.without([("typo", "why")]).bots] == ["greedy", "random"]
    assert cfg.without([("typo", "why")]).dropped == (("typo", "why"),)
    assert cfg.without([("typo", "why")]).digest != cfg.digest
    with pytest.raises(TournamentConfigError, match="1 bots are left after dropping"):
        cfg.without([("typo", "a"), ("random", "b")])


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_during_entry_validation_says_nothing_was_stored(
    tmp_path: Path, sig: signal.Signals
) -> None:
    # SIGTERM there exited 143 without a word (SIGINT with a traceback).
    started = tmp_path / "started"
    hang = f"import pathlib, time; pathlib.Path({str(started)!r}).touch(); time.sleep(600)"
    text = TRIO.format(extra="", games=2).replace(
        'command = "python -m medina_client --bot greddy"', f"command = ['python', '-c', {hang!r}]"
    )
    (tmp_path / "trio.toml").write_text(text)
    proc = subprocess.Popen(
        cli("tournament", "run", "trio.toml", "--concurrency", "3", cwd=tmp_path),
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        wait_for(started.exists, 60, "the hanging bot's entry game")
        proc.send_signal(sig)
        _out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 128 + sig.value, err
    assert err.strip().splitlines()[-1] == (
        f"tournament trio: runner stopped ({sig.name}) during entry validation; nothing was "
        "stored, run the same command to start"
    )
    assert (
        TournamentStore(str(tmp_path / "tournaments" / "trio" / "tournament.db")).tournaments()
        == []
    )
