"""``ladder serve --http``'s /metrics tells of the ladder, not only of its arena: bots
connected, matches in play, formed, rated and aborted, the arena's refusals and whether the
database can be written, each equal to what the database holds once the bots have left."""

from __future__ import annotations

import re
import urllib.request
from pathlib import Path

import pytest
from medina.storage.ladder import LadderStore

from .harness import Bots, LadderServer, add_bot, finished, wait_until

pytestmark = pytest.mark.timeout(240)


def scrape(viewer: str) -> dict[str, float]:
    """The ladder's samples on /metrics, by name (and labels)."""
    with urllib.request.urlopen(f"{viewer}/metrics", timeout=30) as response:
        text = response.read().decode()
    return {m[1]: float(m[2]) for m in re.finditer(r"^(medina_ladder_\S+) (\S+)$", text, re.M)}


def test_the_ladders_metrics_count_what_it_does(tmp_path: Path) -> None:
    db = str(tmp_path / "ladder.db")
    keys = {name: add_bot(db, name) for name in ("a", "b")}
    server = LadderServer.start(
        db, tmp_path, "metrics", "--offer", "medina-v2:2:300", "--seed", "4", "--http", "0"
    )
    bots = Bots(tmp_path)
    store = LadderStore(db)
    try:
        before = scrape(server.viewer)
        assert before["medina_ladder_matches_formed_total"] == 0
        assert before["medina_ladder_bots_connected"] == 0
        for name, key in keys.items():
            bots.sdk(name, server.address, key)
        wait_until(lambda: finished(store) >= 2, 120, "2 finished ladder matches")
        playing = scrape(server.viewer)
        assert playing["medina_ladder_bots_connected"] == 2
        assert playing["medina_ladder_matches_rated_total"] >= 2
        assert playing["medina_ladder_database_unwritable"] == 0
        for bot in bots.procs:
            assert bot.stop() == 0, bot.output()
        wait_until(lambda: scrape(server.viewer)["medina_ladder_bots_connected"] == 0, 30, "no bot")
        after = scrape(server.viewer)
    finally:
        bots.kill_all()
        server.stop()
    counts = store.counts()
    rated = len(store.rated_results())
    unrated = counts.get("aborted", 0) + counts.get("finished", 0) - rated
    assert after == {
        "medina_ladder_bots_connected": 0,
        "medina_ladder_matches_playing": 0,
        "medina_ladder_database_unwritable": 0,
        "medina_ladder_results_held": 0,
        "medina_ladder_matches_formed_total": rated + unrated,
        "medina_ladder_matches_rated_total": rated,
        "medina_ladder_matches_aborted_total": unrated,
    }, after  # and no refusal: the arena had room
    assert rated >= 2
