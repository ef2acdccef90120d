"""An SPRT tournament from the command line, on real games: a stronger candidate against a
weaker baseline stops early with H1, the other way round with H0; the LLR is shown live and
exported."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from medina.cli.web_cmd import tournament_standings
from medina.storage.tournaments import TournamentStore

from .cups import run_cli

pytestmark = pytest.mark.timeout(600)


def sprt_file(directory: Path, candidate: str, baseline: str) -> Path:
    path = directory / "ab.toml"
    path.write_text(
        f'name = "ab"\nformat = "sprt"\ncandidates = ["{candidate}"]\nbaseline = "{baseline}"\n'
        'games = 200\nseed = 3\nvalidation = "off"\n'
        '[[variants]]\nruleset = "medina-v2"\nplayers = 2\n'
        "[clock]\ndecision_ms = 10000\n"
        "[sprt]\nelo0 = 0\nelo1 = 200\nalpha = 0.05\nbeta = 0.05\n"
        '[[bots]]\nname = "greedy"\ncommand = "python -m medina_client --bot greedy"\n'
        '[[bots]]\nname = "random"\ncommand = "python -m medina_client --bot random"\n'
    )
    return path


@pytest.mark.parametrize(
    ("candidate", "baseline", "verdict"),
    [("greedy", "random", "H1"), ("random", "greedy", "H0")],
)
def test_the_sprt_stops_with_the_right_verdict(
    tmp_path: Path, candidate: str, baseline: str, verdict: str
) -> None:
    sprt_file(tmp_path, candidate, baseline)
    done = run_cli("tournament", "run", "ab.toml", "--concurrency", "2", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if line.startswith("SPRT ")]
    assert len(lines) >= 3  # shown after every game, and at the end
    said = "H1 accepted: the candidate is better" if verdict == "H1" else "H0 accepted"
    assert said in lines[-1] and "[-2.94, 2.94]" in lines[-1]
    assert "stopped early: the SPRT reached its verdict" in done.stdout
    store = TournamentStore(str(tmp_path / "tournaments" / "ab" / "tournament.db"))
    row = store.tournament("ab")
    assert row.status == f"sprt-{verdict.lower()}"
    counts = store.counts(row.id)
    assert counts.get("cancelled", 0) > 150  # stopped long before the 200 games
    exported = run_cli("tournament", "export", "ab.toml", "--format", "json", cwd=tmp_path)
    test = json.loads(exported.stdout)["sprt"]
    assert test["verdict"] == verdict and test["candidate"] == candidate
    assert (test["llr"] >= test["upper"]) if verdict == "H1" else (test["llr"] <= test["lower"])
    assert test["los"] > 0.99 if verdict == "H1" else test["los"] < 0.01
    # the viewer's standings page says it too
    page = tournament_standings(str(tmp_path / "tournaments" / "ab" / "tournament.db"), "ab")()
    assert said in page.note
