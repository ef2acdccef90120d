"""Entry validation: a bot whose command is misspelt stops the tournament before its first
game, naming the bot and the reason; set to drop, the run goes on without it and remembers."""

from __future__ import annotations

from pathlib import Path

import pytest
from medina.storage.tournaments import TournamentStore
from medina.tournament.config import TournamentConfigError, load

from .cups import run_cli, standings_json

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
