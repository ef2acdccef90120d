"""A match the ladder stored but never started (a bot left while it was being stored) is no
one's aborted match (ladder/service.py: form_matches, storage/ladder.py: discard)."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from .test_lobby_faults import add, ladder_players, run, serving, until

pytestmark = pytest.mark.timeout(180)

#: How long the held store waits for the test at most.
HOLD_S = 30.0


def test_a_bot_that_leaves_while_its_match_is_stored_costs_the_others_no_aborted_match(
    tmp_path: Path,
) -> None:
    # An attacker saying hello and leaving 60 times in half a second had 57 matches stored
    # as aborted, "evil2 left as it formed", each one on every other seat's public aborted
    # count, and none on its own faults.
    async def scenario() -> tuple[dict[str, int], dict[str, int]]:
        async with serving(str(tmp_path / "ladder.db"), tmp_path) as (ladder, address, stub):
            service = ladder.ladder
            store = service.store
            real = store.new_match
            stored, proceed = threading.Event(), threading.Event()

            # The leave has to come while the match is being stored: the store is held
            # there (once) until the leaver's session says so.
            def held(*args: object) -> int:
                mid = real(*args)  # type: ignore[arg-type]
                if not stored.is_set():
                    stored.set()
                    proceed.wait(HOLD_S)
                return mid

            store.new_match = held  # type: ignore[method-assign,assignment]
            stays, goes = asyncio.Event(), asyncio.Event()
            players = ladder_players(address, [await add(stub, "stays")], stays)
            players += ladder_players(address, [await add(stub, "goes")], goes)
            try:
                assert await asyncio.to_thread(stored.wait, HOLD_S)
                goes.set()
                await until(
                    lambda: all(
                        s.leaving or s.closed
                        for s in service.sessions.values()
                        if s.account.name == "goes"
                    )
                )
                proceed.set()
                await until(lambda: "starting" not in store.counts())
                aborted = {row.bot: row.aborted for row in store.lines()}
                return store.counts(), aborted
            finally:
                proceed.set()
                stays.set()
                goes.set()
                await asyncio.gather(*players)

    counts, aborted = run(scenario)
    assert counts == {}  # forgotten: it never reached the arena
    assert aborted == {"stays": 0, "goes": 0}
