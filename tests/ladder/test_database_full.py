"""A ladder whose database cannot be written (a full disk): the operator hears of it once,
the matchmaker backs off, bots joining are refused with a reason, and the results of the
matches that end meanwhile are held and rated, in order and once, when it can be written
again; a ladder stopped before that logs them, and its next start records them aborted.

The database is made unwritable with SQLite's own ``PRAGMA query_only`` on every connection
the store takes: a real SQLite refusal, on and off at a known moment. (``PRAGMA
max_page_count`` is not: an UPDATE that fits in the pages the file has, as a result's is,
still succeeds; and a disk filled to the last byte may still take a write-ahead log
rewritten in place.)"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import grpc
import pytest
from medina.ladder.recompute import compare
from medina.ladder.serve import LadderServerConfig, start_ladder
from medina.storage.ladder import LadderStore
from medina.v1 import ladder_pb2, ladder_pb2_grpc
from medina_client.bots import RandomBot
from medina_client.ladder import LadderOptions, play_ladder, seat_player
from sqlalchemy import Engine, event

from .test_lobby_faults import CONFIG, TOKEN, add, auth, hello, refusal, run, serving, until

pytestmark = pytest.mark.timeout(180)


class WriteSwitch:
    """``PRAGMA query_only`` on every connection ``engine`` checks out while ``readonly``."""

    def __init__(self, engine: Engine) -> None:
        self.readonly = False
        event.listen(engine, "checkout", self._checkout)

    def _checkout(self, dbapi_conn: Any, _record: Any, _proxy: Any) -> None:
        cursor = dbapi_conn.cursor()
        cursor.execute(f"PRAGMA query_only={'ON' if self.readonly else 'OFF'}")
        cursor.close()


def ladder_records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "medina.ladder"]


def test_results_held_while_the_database_cannot_be_written_are_rated_in_order_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # On a full disk each matchmaking round logged an error with its traceback (160 a
    # minute), a match whose result could not be stored stayed "in play" until a restart,
    # and its result was lost.
    caplog.set_level(logging.INFO, logger="medina.ladder")

    async def scenario() -> None:
        async with serving(str(tmp_path / "ladder.db"), tmp_path) as (ladder, address, stub):
            switch = WriteSwitch(ladder.store.engine)
            keys = [await add(stub, name) for name in ("a", "b", "late")]
            in_play: set[str] = set()
            flipped: list[bool] = []
            ended: list[ladder_pb2.LadderMatchEnded] = []
            inner = seat_player(lambda: RandomBot(1), None)

            async def play(assigned: ladder_pb2.MatchAssigned) -> None:
                in_play.add(assigned.match_id)
                if len(in_play) == 2 and not flipped:
                    # Both of a's matches were stored running and neither has ended.
                    flipped.append(True)
                    switch.readonly = True
                try:
                    await inner(assigned)
                finally:
                    in_play.discard(assigned.match_id)

            leave = asyncio.Event()
            two = LadderOptions(max_matches=2)
            players = [
                asyncio.create_task(play_ladder(play, address, keys[0], two, leave=leave)),
                asyncio.create_task(
                    play_ladder(
                        seat_player(lambda: RandomBot(2), None),
                        address,
                        keys[1],
                        two,
                        leave=leave,
                        on_result=ended.append,
                    )
                ),
            ]
            try:
                # Both matches end while the database refuses: their results are held.
                await until(lambda: switch.readonly and not ladder.ladder.running, 60)
                held = [h.running.mid for h in ladder.ladder.held]
                assert len(held) == 2 and all(h.aborted is None for h in ladder.ladder.held)
                assert ladder.store.counts().get("running") == 2  # "in play" while held
                told = len(ended)  # b is told their ends once they are stored
                formed = ladder.ladder.formed
                # The matchmaker backs off (its wait doubling, up to 5 s) and forms
                # nothing; a bot joining is refused with the problem named.
                await until(lambda: ladder.ladder.outage.backoff.wait_s >= 4 * CONFIG.tick_s, 30)
                code, reason = await refusal(stub.Lobby(iter([hello()]), metadata=auth(keys[2])))
                assert (code, reason) == (grpc.StatusCode.UNAVAILABLE, "LADDER_UNAVAILABLE")
                assert ladder.ladder.formed == formed and len(ended) == told
                failures = ladder.ladder.outage.failures
                assert failures >= 3
                logged = ladder_records(caplog)
                errors = [r for r in logged if r.levelno >= logging.ERROR]
                assert len(errors) == 1, [r.getMessage() for r in errors]
                assert "attempt to write a readonly database" in errors[0].getMessage()
                assert not any(r.exc_info for r in logged)

                switch.readonly = False
                await until(lambda: not ladder.ladder.held and ladder.ladder.formed > formed, 30)
                warnings = [
                    r.getMessage()
                    for r in ladder_records(caplog)
                    if "can be written again" in r.getMessage()
                ]
                assert len(warnings) == 1 and "2 held match end(s) stored" in warnings[0]
                assert len([r for r in ladder_records(caplog) if r.levelno >= logging.ERROR]) == 1
                assert len(ended) >= told + 2 and all(e.rated for e in ended[told : told + 2])
            finally:
                leave.set()
                await asyncio.gather(*players)
        store = ladder.store
        rows = {m.id: m for m in store.matches()}
        # Rated once each, in the order their matches ended.
        assert all(rows[mid].status == "finished" for mid in held)
        seqs = [rows[mid].rated_seq or 0 for mid in held]
        assert seqs == sorted(seqs) and 0 not in seqs
        rated = [m.rated_seq for m in rows.values() if m.rated_seq is not None]
        assert sorted(rated) == list(range(1, len(rated) + 1))
        assert compare(store) == (len(rated), [])
        assert "running" not in store.counts()

    run(scenario)


def test_a_ladder_stopped_with_held_results_logs_them_and_its_next_start_aborts_them(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    db = str(tmp_path / "ladder.db")
    config = LadderServerConfig(
        db=db,
        port=0,
        records_dir=tmp_path / "rec",
        organiser_token=TOKEN,
        ladder=CONFIG,
        server_id="held-test",
    )

    async def scenario() -> int:
        ladder = await start_ladder(config)
        address = f"127.0.0.1:{ladder.port}"
        channel = grpc.aio.insecure_channel(address)
        stub = ladder_pb2_grpc.LadderServiceStub(channel)
        switch = WriteSwitch(ladder.store.engine)
        keys = [await add(stub, name) for name in ("a", "b")]
        inner = seat_player(lambda: RandomBot(1), None)

        async def play(assigned: ladder_pb2.MatchAssigned) -> None:
            switch.readonly = True  # the match was stored running; it ends after this
            await inner(assigned)

        leave = asyncio.Event()
        players = [
            asyncio.create_task(play_ladder(play, address, keys[0], leave=leave)),
            asyncio.create_task(
                play_ladder(seat_player(lambda: RandomBot(2), None), address, keys[1], leave=leave)
            ),
        ]
        try:
            await until(lambda: bool(ladder.ladder.held), 60)
            mid = ladder.ladder.held[0].running.mid
        finally:
            leave.set()
            await ladder.stop()  # the database still refuses
            await asyncio.gather(*players)
            await channel.close()
        assert ladder.store.matches()[-1].status == "running"
        # Started again on the database (writable): that match is aborted, not rated.
        again = await start_ladder(config)
        await again.stop()
        return mid

    mid = run(scenario)
    never = [r.getMessage() for r in caplog.records if "never stored" in r.getMessage()]
    assert len(never) == 1 and f"ladder match {mid}:" in never[0]
    assert "rank" in never[0] and "record" in never[0]  # enough to rate it by hand
    store = LadderStore(db)
    row = {m.id: m for m in store.matches()}[mid]
    assert (row.status, row.rated_seq) == ("aborted", None)
    assert row.detail == "its ladder server stopped before the end"
    assert compare(store)[1] == []
    store.engine.dispose()
