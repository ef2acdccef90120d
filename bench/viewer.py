"""Web viewer costs: drawing a board as JSON, replaying a whole record for the replay page,
and the size of what the live page and the replay page receive.

For each configuration this section plays ``N`` seeded random games in process (a local
match writing a real record), then for each game (the table shows the means)

* ``view``: ``board_view`` of every decision state (best of three passes, divided by the
  number of states): the server's work per live-page message;
* ``replay``: ``replay_json`` of the game's record (parsing, replaying through the
  engine and one view per step; best of three): the replay page's one request;
* ``live KB/msg``: the mean size of a live-stream message (spectator messages plus the
  view) if every decision were sent on its own (the stream batches what piles up);
* ``replay KB`` and ``gzipped``: the replay JSON's size for the whole game, plain and as
  the viewer sends it to a browser (gzip).

Then the matches list over a directory of ``LIST_RECORDS`` records (copies of one game's):
the first page's HTML size, and the time to build it on a fresh shelf (nothing cached:
what the first visitor after a start waits for) and again (cached).
"""

from __future__ import annotations

import asyncio
import gzip
import itertools
import json
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from medina.engine import GameState, observe
from medina.engine.variants import CONFIGURATIONS
from medina.records.reader import read_record
from medina.records.replay import replay, start_state
from medina.records.writer import RecordWriter
from medina.referee.config import MatchSettings
from medina.referee.local import local_match, random_policy
from medina.v1 import admin_pb2
from medina.web import records_viewer
from medina.web.listing import Query
from medina.web.live import proto_json
from medina.web.pages import matches_page
from medina.web.shelf import replay_json
from medina.web.view import board_view
from medina.wire import convert

from bench import games as games_setting


def _record(directory: Path, ruleset: str, players: int, seed: int) -> Path:
    writer = RecordWriter(directory, f"bench-{ruleset}-{players}-{seed}")
    settings = MatchSettings(ruleset, players, seed)
    policies = [random_policy(seed * 10 + i) for i in range(players)]
    asyncio.run(local_match(f"b{seed}", settings, policies, writer).run())
    writer.close()
    return writer.path


def _best_of_three(run: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - started)
    return best


def _live_sizes(states: list[GameState]) -> float:
    sizes = []
    for before, after in itertools.pairwise(states):
        events = after.events_since(before.n_events)
        update = convert.update_to_proto(before.n_events, events)
        message = {
            "watch": [proto_json(admin_pb2.WatchResponse(update=update))],
            "view": board_view(after),
        }
        sizes.append(len(json.dumps(message, separators=(",", ":"))))
    first = {
        "watch": [
            proto_json(
                admin_pb2.WatchResponse(
                    snapshot=convert.observation_to_proto(observe(states[0], None))
                )
            )
        ],
        "view": board_view(states[0]),
    }
    sizes.append(len(json.dumps(first, separators=(",", ":"))))
    return sum(sizes) / len(sizes) / 1024


def _measure(record_path: Path) -> tuple[int, float, float, float, int, int]:
    """(decisions, view s per state, replay s, live KB/msg, replay bytes plain and gzipped)
    of one game."""
    record = read_record(record_path)
    _settings, state = start_state(record)
    states = [state, *(step.after for step in replay(record))]
    per_view = _best_of_three(lambda: [board_view(s) for s in states]) / len(states)
    whole = _best_of_three(lambda: replay_json("r", record))
    body = json.dumps(replay_json("r", record), separators=(",", ":")).encode()
    packed = len(gzip.compress(body, 6))
    return len(states) - 1, per_view, whole, _live_sizes(states), len(body), packed


#: Records in the directory the matches-list measurement pages through.
LIST_RECORDS = 500


def _list_costs(record: Path, directory: Path) -> tuple[float, float, float]:
    """(first page KB, ms on a fresh shelf, ms again) of the matches list over
    ``LIST_RECORDS`` copies of ``record``."""
    data = record.read_bytes()
    for n in range(LIST_RECORDS):
        path = directory / f"rec-{n:04d}.jsonl"
        path.write_bytes(data)
        os.utime(path, (1_700_000_000 + n, 1_700_000_000 + n))
    viewer = records_viewer(directory)

    def page() -> str:
        listing = asyncio.run(viewer.listing(Query()))
        return matches_page(listing, listing.etag(), 3000)

    started = time.perf_counter()
    html = page()
    cold = time.perf_counter() - started
    warm = _best_of_three(page)
    return len(html.encode()) / 1024, cold * 1000, warm * 1000


def main() -> None:
    """Print the table (means over the games)."""
    n = games_setting(3, 1)
    print(f"{n} game(s) per configuration; times are per call (best of three), then averaged")
    print(f"{'ruleset':<14}{'players':>8}{'decisions':>10}{'view ms':>9}{'replay ms':>11}"
          f"{'live KB/msg':>13}{'replay KB':>11}{'gzipped':>9}")  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        last = Path(tmp)
        for ruleset, players in CONFIGURATIONS:
            paths = [_record(Path(tmp), ruleset, players, seed) for seed in range(1, n + 1)]
            last = paths[-1]
            rows = [_measure(path) for path in paths]
            d, view, whole, live, size, packed = (sum(col) / n for col in zip(*rows, strict=True))
            print(
                f"{ruleset:<14}{players:>8}{d:>10.0f}{view * 1000:>9.3f}"
                f"{whole * 1000:>11.1f}{live:>13.1f}{size / 1024:>11.0f}{packed / 1024:>9.0f}"
            )
        listed = Path(tmp) / "listed"
        listed.mkdir()
        kb, cold, warm = _list_costs(last, listed)
        print(
            f"matches list over {LIST_RECORDS} records: first page {kb:.1f} KB, "
            f"{cold:.0f} ms on a fresh shelf, {warm:.1f} ms again"
        )
