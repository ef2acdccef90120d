"""An arena that refuses the ladder's CreateMatch (full: ``--max-matches``): the ladder logs
the refusals once when they begin and once when they end, with their count, and counts them
by reason on its /metrics (a ladder refused 126 times said nothing at all)."""

from __future__ import annotations

import asyncio
import logging
import re
from dataclasses import replace
from pathlib import Path

import grpc
import pytest
from medina.cli.web_cmd import ladder_probe
from medina.rpc.common.admission import AdmissionLimits
from medina.rpc.common.config import ServerConfig
from medina.rpc.single.server import start_server
from medina.v1 import admin_pb2_grpc
from medina.web.metrics import ArenaProbe, Metrics
from medina.wire import matches as wire_matches
from medina.wire.shared.client import create_match

from .test_lobby_faults import CONFIG, TOKEN, add, auth, ladder_players, run, serving, until

pytestmark = pytest.mark.timeout(180)


def test_a_full_arenas_refusals_are_logged_once_when_they_begin_and_end_and_counted(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="medina.ladder")

    async def scenario() -> tuple[int, str]:
        arena = await start_server(
            ServerConfig(
                host="127.0.0.1", port=0, records_dir=tmp_path / "arena",
                organiser_token=TOKEN,
                admission=AdmissionLimits(max_matches=1, max_queued=0, retry_after_ms=20),
            )
        )  # fmt: skip
        leave = asyncio.Event()
        try:
            async with grpc.aio.insecure_channel(arena.address) as channel:
                matches = admin_pb2_grpc.MatchServiceStub(channel)
                # The arena's one room, taken by a match whose bots never come.
                taken = await matches.CreateMatch(
                    create_match("medina-v2", 2, 1), metadata=auth(TOKEN)
                )
                one_at_a_time = replace(CONFIG, max_matches_per_bot=1)
                db = str(tmp_path / "ladder.db")
                async with serving(db, tmp_path, one_at_a_time, arena=arena.address) as (
                    ladder,
                    address,
                    stub,
                ):
                    keys = [await add(stub, name) for name in ("a", "b")]
                    players = ladder_players(address, keys, leave)
                    refusals = ladder.ladder.refusals.by_reason
                    await until(lambda: refusals.get("SERVER_FULL", 0) >= 3)
                    await matches.AbortMatch(
                        wire_matches.abort_request(taken.match_id, "room for the ladder"),
                        metadata=auth(TOKEN),
                    )
                    await until(lambda: ladder.ladder.rated >= 1, 60)
                    scraped = Metrics(ArenaProbe(), ladder_probe(ladder.ladder)).exposition()
                    refused = refusals["SERVER_FULL"]
                    leave.set()
                    await asyncio.gather(*players)
                    return refused, scraped.decode()
        finally:
            leave.set()
            await arena.stop(1)

    refused, scraped = run(scenario)
    said = [r.getMessage() for r in caplog.records if r.name == "medina.ladder"]
    began = [s for s in said if "the arena refuses new matches" in s]
    ended = [s for s in said if "takes new matches again" in s]
    assert began and began[0].startswith("ladder: the arena refuses new matches (SERVER_FULL, ")
    found = re.search(r"\((\d+) refused: SERVER_FULL (\d+)\)$", ended[0])
    assert found and int(found[1]) == int(found[2]) >= 3, ended
    # Once each, not once a refusal.
    assert len(began) - len(ended) in (0, 1) and len(began) < refused, said
    assert all(r.levelno == logging.WARNING for r in caplog.records if "refus" in r.getMessage())
    assert f'medina_ladder_create_match_refused_total{{reason="SERVER_FULL"}} {refused}.0' in (
        scraped
    )
