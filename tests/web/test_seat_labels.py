"""The viewer names seats as results do: the organiser's seat name (a tournament's bot
name), else the name the bot gave, else ``seat N``; in the list of hosted matches, of
records, and of another server's matches alike."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

from medina.records import catalog
from medina.referee.config import MatchSettings
from medina.rpc.single import local_matches
from medina.v1 import admin_pb2

from .conftest import ArenaThread


def listed_bots(arena: ArenaThread) -> dict[str, list[str]]:
    with urllib.request.urlopen(f"{arena.url}/api/matches", timeout=30) as response:
        return {r["match_id"]: r["bots"] for r in json.loads(response.read())}


def test_the_organisers_seat_names_come_before_the_bots_own(tmp_path: Path) -> None:
    # The bots call themselves random-0 and random-1; the organiser named seat 0 only.
    named = MatchSettings("medina-v2", 2, 7, seat_names=("alpha", ""))
    arena = ArenaThread(tmp_path)
    try:
        hosted = arena.create(named)
        arena.play(hosted, 70).result(120)
        match_id = hosted.match.match_id
        assert listed_bots(arena)[match_id] == ["alpha", "random-1"]
        summary = local_matches.summary(hosted)
    finally:
        arena.close()
    # The same match from its record, on a server started afresh.
    again = ArenaThread(tmp_path)
    try:
        assert listed_bots(again)[match_id] == ["alpha", "random-1"]
    finally:
        again.close()
    # And from a match summary, as `web --server` lists another server's matches.
    assert isinstance(summary, admin_pb2.MatchSummary)
    assert [s.name for s in summary.seats] == ["alpha", "seat 1"]
    assert catalog.seat_labels(summary.config, summary.seats, 2) == ["alpha", "random-1"]
