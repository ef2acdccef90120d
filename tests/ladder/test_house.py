"""A ladder's house bots (medina.ladder.house): stopping a ladder while they finish."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from medina.ladder.house import drain_house
from medina_client.bots import RandomBot
from medina_client.ladder import play_ladder, seat_player

from .test_lobby_faults import add, run, serving, until, until_finished

pytestmark = pytest.mark.timeout(180)

#: A house bot still finishing its match: it ignores SIGTERM and exits when its stdin closes.
LINGERING = (
    "import signal, sys\n"
    "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    "print('ready', flush=True)\n"
    "sys.stdin.read()\n"
)


def test_a_stopping_ladder_forms_no_match_while_its_house_bots_finish(tmp_path: Path) -> None:
    # SIGTERM stopped the house bots first and only then matching: two visitors were given
    # new matches all the while the house bots finished theirs (up to 30 s), and each was
    # aborted when the ladder stopped.
    async def scenario() -> tuple[list[int], int]:
        async with serving(str(tmp_path / "ladder.db"), tmp_path) as (ladder, address, stub):
            leave = asyncio.Event()
            players = [
                asyncio.create_task(
                    play_ladder(seat_player(lambda: RandomBot(1), None), address, key, leave=leave)
                )
                for key in [await add(stub, f"visitor-{i}") for i in range(2)]
            ]
            house = await asyncio.create_subprocess_exec(
                sys.executable,
                "-c",
                LINGERING,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
            )
            assert house.stdin is not None and house.stdout is not None
            try:
                await until_finished(ladder, 1)
                assert await house.stdout.readline() == b"ready\n"
                drain = asyncio.create_task(drain_house(ladder.ladder, [house]))
                await until(lambda: not ladder.ladder.running)  # the visitors' match ended
                before = ladder.ladder.formed
                formed = await ladder.ladder.form_matches()  # both visitors idle and connected
                house.stdin.close()
                await drain
                return formed, ladder.ladder.formed - before
            finally:
                if house.returncode is None:
                    house.kill()
                    await house.wait()
                leave.set()
                await asyncio.gather(*players)

    assert run(scenario) == ([], 0)
