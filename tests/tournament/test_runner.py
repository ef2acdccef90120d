"""The runner in process: a stop that comes after a game's match ended keeps that game;
the bots of a game are killed and reaped before the runner ends."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from pathlib import Path

import grpc
import pytest
from bounded import run
from medina.rpc.common.config import ServerConfig
from medina.rpc.single.server import start_server
from medina.storage.tournaments import TournamentStore
from medina.tournament.config import BotSpec, TournamentConfig, Variant
from medina.tournament.play import play_game
from medina.tournament.runner import Runner, RunOptions, enter

from .cups import BOTS, run_cli

pytestmark = pytest.mark.timeout(120)


def lingering_cup(
    tmp_path: Path, think_s: float = 0, pids: Path | None = None, linger_s: float = 5
) -> tuple[TournamentStore, int]:
    """Two 2-player games of two bots that stay ``linger_s`` seconds after each match (and
    take ``think_s`` over each decision; write their process ids to ``pids`` as they begin
    to linger), stored."""
    command = ("python", str(BOTS / "lingering.py"))
    env: tuple[tuple[str, str], ...] = (("LINGER_S", str(linger_s)), ("THINK_S", str(think_s)))
    if pids is not None:
        env += (("PID_DIR", str(pids)),)
    cfg = TournamentConfig(
        name="linger",
        bots=(BotSpec("a", command, env=env), BotSpec("b", command, env=env)),
        variants=(Variant("medina-v2", 2),),
        games=2,
    )
    store = TournamentStore(str(tmp_path / "t.db"))
    row, _ = enter(store, cfg)
    return store, row.id


def test_a_stop_after_the_match_ended_stores_the_game(tmp_path: Path) -> None:
    # SIGTERM while a finished game's bots were still exiting threw the game away: a complete
    # record on disk that no result names, and the game played again
    store, tid = lingering_cup(tmp_path)
    records = tmp_path / "records"

    def ended() -> bool:
        return any('"outcome"' in p.read_text() for p in records.glob("*.jsonl"))

    async def main() -> None:
        runner = Runner(store, RunOptions(concurrency=1, records=records, tournament_id=tid))
        task = asyncio.create_task(runner.run())
        async with asyncio.timeout(60):
            while not ended():  # the first match is over; its bots linger
                await asyncio.sleep(0.05)
        runner.stop("runner stopped (SIGTERM)")
        tally = await asyncio.wait_for(task, 60)
        assert (tally.played, tally.given_back) == (1, 0)

    run(main(), timeout=110)
    assert store.counts(tid) == {"done": 1, "pending": 1}
    assert store.incidents(tid) == []
    (game,) = store.results(tid)
    assert Path(game.record_path).name in {p.name for p in records.glob("*.jsonl")}


def test_a_finished_game_is_stored_before_its_bots_are_given_their_time_to_exit(
    tmp_path: Path,
) -> None:
    # The result was stored only once the bots had exited (up to 10 s after the end): a
    # runner killed meanwhile lost a finished game, played it again, and left a complete
    # record that no result names.
    pids = tmp_path / "pids"
    pids.mkdir()
    store, tid = lingering_cup(tmp_path, pids=pids)
    records = tmp_path / "records"

    async def main() -> None:
        runner = Runner(store, RunOptions(concurrency=1, records=records, tournament_id=tid))
        task = asyncio.create_task(runner.run())
        async with asyncio.timeout(60):
            while store.counts(tid).get("done", 0) < 1:
                await asyncio.sleep(0.05)  # polling a database the runner writes
            while len(list(pids.iterdir())) < 2:  # both bots have begun to linger
                await asyncio.sleep(0.05)
        lingering = [alive(int(p.name)) for p in pids.iterdir()]
        runner.stop("runner stopped (SIGTERM)")
        tally = await asyncio.wait_for(task, 60)
        assert lingering == [True, True], "the result was stored once the bots had exited"
        assert (tally.played, tally.given_back) == (1, 0)

    run(main(), timeout=110)
    assert store.counts(tid) == {"done": 1, "pending": 1}
    assert store.incidents(tid) == []


def alive(pid: int) -> bool:
    """Whether process ``pid`` exists (a stopped bot is reaped by the runner)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_stop_mid_game_aborts_it_and_gives_it_back(tmp_path: Path) -> None:
    store, tid = lingering_cup(tmp_path, think_s=0.2)
    records = tmp_path / "records"

    def decided() -> bool:  # a few decisions into the first match (about 70 a seat)
        return any(p.read_text().count("\n") >= 4 for p in records.glob("*.jsonl"))

    async def main() -> None:
        runner = Runner(store, RunOptions(concurrency=1, records=records, tournament_id=tid))
        task = asyncio.create_task(runner.run())
        async with asyncio.timeout(60):
            while not decided():
                await asyncio.sleep(0.05)
        runner.stop("runner stopped (SIGTERM)")
        tally = await asyncio.wait_for(task, 60)
        assert (tally.played, tally.given_back) == (0, 1)

    run(main(), timeout=110)
    assert store.counts(tid) == {"pending": 2}
    assert [i.what for i in store.incidents(tid)] == [
        "interrupted: runner stopped (SIGTERM); replayed from scratch"
    ]
    (record,) = records.glob("*.jsonl")
    assert "MATCH_ENDING_ABORTED" in record.read_text().splitlines()[-1]


def test_bots_that_outstay_a_stored_game_are_killed_and_reaped_before_the_runner_ends(
    tmp_path: Path,
) -> None:
    # The lease of a stored game was taken for lost at its next renewal, the game cancelled
    # during its bots' 10 s to exit and the bots left running: `tournament run` ended with
    # "Loop <...closed=True...> that handles pid N is closed", N a bot killed only at exit.
    pids = tmp_path / "pids"
    pids.mkdir()
    bot = f'command = ["python", "{BOTS / "lingering.py"}"]\n'
    bot += f'env = {{ LINGER_S = "60", PID_DIR = "{pids}", FREEZE = "1" }}\n'
    (tmp_path / "cup.toml").write_text(
        'name = "stay"\ngames = 2\nvalidation = "off"\n'
        '[[variants]]\nruleset = "medina-v2"\nplayers = 2\n'
        f'[[bots]]\nname = "a"\n{bot}[[bots]]\nname = "b"\n{bot}'
    )
    started = time.monotonic()
    # a lease renewed every second: renewals come while the bots are given their time
    run_args = ("--lease-s", "3", "--concurrency", "2")
    done = run_cli("tournament", "run", "cup.toml", *run_args, cwd=tmp_path, timeout=100)
    assert done.returncode == 0, done.stderr
    assert "that handles pid" not in done.stderr, done.stderr
    assert "lease" not in done.stderr, done.stderr
    lingered = [int(p.name) for p in pids.iterdir()]
    assert len(lingered) == 4 and not any(alive(p) for p in lingered)
    assert time.monotonic() - started > 10  # they were given their 10 s


def test_a_game_cancelled_while_its_bots_are_given_their_time_kills_them(
    tmp_path: Path,
) -> None:
    # The bots' time to exit was shielded from the game's cancellation and left running
    # once the game was cancelled: nothing killed them before the runner's loop closed.
    pids = tmp_path / "pids"
    pids.mkdir()
    store, _tid = lingering_cup(tmp_path, pids=pids, linger_s=60)
    records = tmp_path / "records"
    cfg = TournamentConfig.from_json(store.tournament("linger").config)
    settings = cfg.settings(Variant("medina-v2", 2), 7, ("a", "b"))

    async def main() -> list[int]:
        server = await start_server(ServerConfig(host="127.0.0.1", port=0, records_dir=records))
        try:
            async with grpc.aio.insecure_channel(server.address) as channel:
                game = asyncio.create_task(
                    play_game(channel, server.address, settings, cfg.bots, tmp_path, records)
                )
                async with asyncio.timeout(60):
                    while len(list(pids.iterdir())) < 2:  # both bots have begun to linger
                        await asyncio.sleep(0.05)
                game.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await asyncio.wait_for(game, 30)
                return [int(p.name) for p in pids.iterdir()]
        finally:
            await server.stop(grace_s=1)

    lingered = run(main(), timeout=110)
    assert not any(alive(p) for p in lingered)
