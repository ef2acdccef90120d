"""The servers a command starts for its own matches (``tournament run``, ``match``) take
organiser calls from that command only: a bot, handed the server's address, could forfeit
its opponents or abort a game it was losing (a tournament replays an aborted game), and the
result looked like a crash of the victim (rpc/single/server.py: start_private_server)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from .cups import BOTS, run_cli

pytestmark = pytest.mark.timeout(300)

MEDDLER = BOTS / "meddler.py"


def meddled(out: Path) -> list[str]:
    """What the meddler's calls got, one ``call STATUS`` a line."""
    return out.read_text().splitlines()


def test_a_tournament_bot_cannot_forfeit_its_opponents_or_abort_its_game(
    tmp_path: Path,
) -> None:
    out = tmp_path / "meddled.txt"
    (tmp_path / "cup.toml").write_text(
        'name = "cup"\ngames = 2\nseed = 3\nvalidation = "off"\n'
        '[[variants]]\nruleset = "medina-v2"\nplayers = 2\n\n'
        "[clock]\ndecision_ms = 10000\n\n"
        f'[[bots]]\nname = "meddler"\ncommand = ["python", "{MEDDLER}"]\n'
        f'env = {{ MEDDLER_OUT = "{out}" }}\n\n'
        '[[bots]]\nname = "random"\ncommand = "python -m medina_client --bot random"\n'
    )
    done = run_cli("tournament", "run", "cup.toml", "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    # Two games at once: their lines interleave.
    assert sorted(meddled(out)) == sorted(["list UNAUTHENTICATED", "forfeit UNAUTHENTICATED",
                                           "abort UNAUTHENTICATED"] * 2)  # fmt: skip
    games = run_cli("tournament", "export", "cup.toml", "--format", "json", "--table", "games",
                    cwd=tmp_path)  # fmt: skip
    assert games.returncode == 0, games.stderr
    rows = json.loads(games.stdout)  # a row per seat of each game
    assert sorted((r["game"], r["seat"]) for r in rows) == [(1, 0), (1, 1), (2, 0), (2, 1)]
    assert {(r["ending"], r["termination"]) for r in rows} == {("complete", "normal")}, rows


def test_a_bot_of_the_match_command_cannot_forfeit_its_opponent(tmp_path: Path) -> None:
    out = tmp_path / "meddled.txt"
    done = run_cli(
        "match", "--players", "2", "--seed", "2", "--records", str(tmp_path), "--quiet",
        "--bot", f"env MEDDLER_OUT={out} {sys.executable} {MEDDLER}",
        "--bot", "python -m medina_client --bot random",
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert meddled(out) == ["list UNAUTHENTICATED", "forfeit UNAUTHENTICATED",
                            "abort UNAUTHENTICATED"]  # fmt: skip
    assert "forfeit" not in done.stdout.lower(), done.stdout
