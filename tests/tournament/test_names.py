"""Two bots that give the same name in their handshake stay apart: results, records and the
viewer name each seat by its tournament bot name (the handshake's name kept beside it)."""

from __future__ import annotations

from pathlib import Path

import pytest
from medina.records.catalog import seat_labels
from medina.records.reader import read_record
from medina.storage.tournaments import TournamentStore
from medina.web.shelf import replay_json

from .cups import run_cli

pytestmark = pytest.mark.timeout(300)

TWINS = """\
name = "twins"
games = 2
validation = "off"
[[variants]]
ruleset = "medina-v2"
players = 2
[clock]
decision_ms = 10000
[[bots]]
name = "greedy"
command = "python -m medina_client --bot greedy --name twin"
[[bots]]
name = "random"
command = "python -m medina_client --bot random --name twin"
"""


def test_records_and_the_viewer_use_the_tournament_names(tmp_path: Path) -> None:
    (tmp_path / "twins.toml").write_text(TWINS)
    done = run_cli("tournament", "run", "twins.toml", "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    store = TournamentStore(str(tmp_path / "tournaments" / "twins" / "tournament.db"))
    results = store.results(store.tournament("twins").id)
    assert len(results) == 2
    for g in results:
        seats = [s.bot for s in g.seats]
        record = read_record(tmp_path / g.record_path)
        assert record.outcome is not None
        assert [s.name for s in record.outcome.result.seats] == seats
        assert [s.bot_name for s in record.header.seats] == ["twin", "twin"]  # kept
        assert seat_labels(record.header.config, record.header.seats, 2) == seats
        assert replay_json(g.match_id, record)["names"] == seats
