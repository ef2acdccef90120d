"""Misbehaving bots in the sandbox (Debian's bubblewrap, real processes, real matches on
127.0.0.1): each is stopped at its limit, charged with it alone, and the bystander in the
same match -- sandboxed too -- plays a clean game."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
from pathlib import Path

import grpc
import pytest
from medina.referee.config import MatchSettings, TimeControl
from medina.referee.outcome import Termination
from medina.rpc.common.config import ServerConfig
from medina.rpc.single.server import start_server
from medina.sandbox import SandboxLimits
from medina.sandbox.box import INSIDE, _take_uid
from medina.tournament.config import BotSpec
from medina.tournament.play import GameError, PlayedGame, play_game

ROGUE = Path(__file__).resolve().parent / "bots" / "rogue.py"
AWK_BOT = Path(__file__).resolve().parents[2] / "clients" / "stdio" / "first_bot.awk"

pytestmark = [pytest.mark.timeout(180), pytest.mark.usefixtures("bwrap")]

LIMITS = SandboxLimits(memory_mb=128, cpu_s=3, cores=1, processes=24, output_kb=256)


def duel(
    tmp_path: Path,
    act: str,
    limits: SandboxLimits = LIMITS,
    env: dict[str, str] | None = None,
    command: tuple[str, ...] = (),
) -> tuple[PlayedGame, str]:
    """A 2-player game on a server of this process: the rogue in seat 0 (or ``command``), a
    well-behaved bystander in seat 1, both sandboxed, each in its own directory. The rogue's
    log."""
    for d in ("rogue", "bystander"):
        (tmp_path / d).mkdir(exist_ok=True)
        os.chmod(tmp_path / d, 0o777)  # the sandbox user may write in its own directory
    os.chmod(tmp_path, 0o755)
    records = tmp_path / "records"
    bots = [
        BotSpec("rogue", command or ("python", str(ROGUE), "--do", act), "rogue",
                tuple((env or {}).items()), limits),
        BotSpec("bystander", ("python", str(ROGUE), "--do", "none"), "bystander", (), limits),
    ]  # fmt: skip
    settings = MatchSettings(
        "medina-v2", 2, 7, time=TimeControl(decision_ms=10_000), seat_names=("rogue", "bystander")
    )

    async def main() -> PlayedGame:
        server = await start_server(ServerConfig(host="127.0.0.1", port=0, records_dir=records))
        try:
            async with grpc.aio.insecure_channel(server.address) as channel:
                async with asyncio.timeout(150):
                    return await play_game(
                        channel,
                        server.address,
                        settings,
                        bots,
                        tmp_path,
                        records,
                        hide=(records,),
                    )
        finally:
            await server.stop(grace_s=1)

    played = asyncio.run(main())
    log = (records / f"{played.match_id}.seat0.log").read_text(errors="replace")
    return played, log


def assert_bystander_clean(played: PlayedGame) -> None:
    assert played.ending == "complete"
    seat = played.outcome.seats[1]
    assert (seat.termination, seat.strikes) == (Termination.NORMAL, 0), seat


def test_a_fork_bomb_stops_at_the_process_limit(tmp_path: Path) -> None:
    played, log = duel(tmp_path, "fork")
    rogue = played.outcome.seats[0]
    assert rogue.termination is Termination.CRASHED, log[-3000:]
    assert "sandbox: process limit 24 (processes and threads) reached" in rogue.detail
    assert_bystander_clean(played)


def test_unbounded_allocation_stops_at_the_memory_limit(tmp_path: Path) -> None:
    played, _log = duel(tmp_path, "hog")
    rogue = played.outcome.seats[0]
    assert rogue.termination is Termination.CRASHED
    assert "sandbox: memory limit 128 MiB reached" in rogue.detail
    assert_bystander_clean(played)


def test_spinning_on_every_core_is_held_to_one_core_and_its_cpu_time(tmp_path: Path) -> None:
    # the rogue does not answer while its spinners run: 1 CPU second is soon spent (long
    # before its first timeout)
    limits = SandboxLimits(memory_mb=128, cpu_s=1, cores=1, processes=24, output_kb=256)
    played, log = duel(tmp_path, "spin", limits, env={"SPIN_WAIT_S": "60"})
    assert "affinity [" in log and "sched_setaffinity refused: EPERM" in log
    mine = log.split("affinity [", 1)[1].split("]", 1)[0]
    assert len(mine.split(",")) == 1  # one core, however many the machine has
    rogue = played.outcome.seats[0]
    assert rogue.termination is Termination.CRASHED
    assert "sandbox: CPU time limit 1 s reached" in rogue.detail
    assert_bystander_clean(played)


def test_endless_output_stops_at_the_output_limit(tmp_path: Path) -> None:
    played, log = duel(tmp_path, "shout")
    rogue = played.outcome.seats[0]
    assert rogue.termination is Termination.CRASHED
    assert "sandbox: output limit 256 KiB reached" in rogue.detail
    assert len(log) <= 256 * 1024  # the log holds no more than the limit
    assert_bystander_clean(played)


def test_a_stdio_bot_through_the_bridge_keeps_its_program_log(tmp_path: Path) -> None:
    awk = shutil.which("mawk") or shutil.which("awk")
    if awk is None:
        pytest.skip("no awk")
    bridge = ("python", "-m", "medina_client", "stdio", "--", awk, "-W", "interactive")
    played, _log = duel(tmp_path, "", command=(*bridge, "-f", str(AWK_BOT)))
    assert played.outcome.seats[0].termination is Termination.NORMAL
    assert_bystander_clean(played)
    # the bridge wrote its program's stderr in the sandbox's log directory: kept beside
    # the seat's own log
    kept = list((tmp_path / "records").glob(f"{played.match_id}.seat0.bot-*.log"))
    assert len(kept) == 1 and "first_bot.awk: connected" in kept[0].read_text()


def test_what_a_bot_writes_to_its_log_directory_is_kept_as_logs_beside_its_seat_log(
    tmp_path: Path,
) -> None:
    # A file named x.jsonl was kept as MATCH.seat0.x.jsonl, which replay list took for a
    # finished match; one named log replaced the seat log the sandbox had written.
    names = ("x.jsonl", "log", "a", "a.log", "notes.txt")
    targets = ":".join(str(INSIDE / "logs" / n) for n in names)
    played, log = duel(tmp_path, "write", env={"WRITE_TARGETS": targets})
    assert "rogue: wrote own.txt" in log, log  # the seat log is the sandbox's, not the bot's
    records = tmp_path / "records"
    seat = f"{played.match_id}.seat0"
    kept = {p.name: p.read_text() for p in records.glob(f"{seat}.*.log")}
    assert kept == dict.fromkeys(
        (f"{seat}.x.jsonl.log", f"{seat}.log.log", f"{seat}.a.log", f"{seat}.a.1.log",
         f"{seat}.notes.txt.log"),
        "rogue was here\n",
    )  # fmt: skip
    assert [p.name for p in records.glob("*.jsonl")] == [f"{played.match_id}.jsonl"]
    assert all(p.stat().st_uid == os.geteuid() for p in records.glob(f"{seat}.*.log"))


def test_writes_outside_its_directory_fail(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"  # the test's directory, beside the bot's
    records_file = tmp_path / "records" / "planted.jsonl"
    repo_file = Path(__file__).resolve().parent / "planted.txt"
    targets = [str(outside), str(records_file), str(repo_file), "/etc/planted", "../up.txt"]
    played, log = duel(tmp_path, "write", env={"WRITE_TARGETS": ":".join(targets)})
    assert "wrote own.txt" in log  # its own directory is its own
    assert (tmp_path / "rogue" / "own.txt").read_text() == "rogue was here\n"
    for target in targets:
        assert f"cannot write {target}" in log
    for path in (outside, records_file, repo_file, Path("/etc/planted"), tmp_path / "up.txt"):
        assert not path.exists(), path
    assert played.outcome.seats[0].termination is Termination.NORMAL  # writing is no fault
    assert_bystander_clean(played)


def test_what_a_bot_wrote_in_one_game_it_may_rewrite_in_the_next_under_another_user(
    tmp_path: Path,
) -> None:
    # User ids are handed out in turn: a file the bot wrote in game 1 (0644, its user then)
    # could not be written in game 2 (another user): "Permission denied".
    _first, _log = duel(tmp_path, "write")
    own = tmp_path / "rogue" / "own.txt"
    writer = own.stat().st_uid
    uid, lock = _take_uid()  # held: the next sandboxes take other ids
    try:
        played, log = duel(tmp_path, "write", env={"WRITE_TARGETS": "again.txt"})
    finally:
        os.close(lock)
    assert (tmp_path / "rogue" / "again.txt").stat().st_uid not in (writer, uid)
    assert "rogue: wrote own.txt" in log, log
    assert own.read_text() == "rogue was here\n"
    assert played.outcome.seats[0].termination is Termination.NORMAL


def test_connections_elsewhere_fail_but_the_arena_is_reached(tmp_path: Path) -> None:
    with socket.socket() as listener:  # a service on the host's loopback
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.setblocking(False)
        port = listener.getsockname()[1]
        played, log = duel(tmp_path, "probe", env={"PROBE_PORT": str(port)})
        with pytest.raises(BlockingIOError):
            listener.accept()  # nobody ever connected
    assert f"cannot connect to 127.0.0.1:{port}: ECONNREFUSED" in log
    assert played.outcome.seats[0].termination is Termination.NORMAL  # it played over the relay
    assert_bystander_clean(played)


def test_the_bot_runs_as_its_own_user_without_the_arena_environment(tmp_path: Path) -> None:
    os.environ["MEDINA_ORGANISER_TOKEN"] = "s3cret"
    try:
        played, log = duel(tmp_path, "env")
    finally:
        del os.environ["MEDINA_ORGANISER_TOKEN"]
    said = log.split("environment: ", 1)[1].split("\n", 1)[0].split()
    assert "MEDINA_ORGANISER_TOKEN" not in said
    assert {"MEDINA_TOKEN", "MEDINA_SERVER", "PATH", "HOME"} <= set(said)
    user = int(log.split("user ", 1)[1].split(",", 1)[0])
    assert user >= 1_900_000_000  # a user id of its own, not root's
    assert f"home /tmp, cwd {tmp_path / 'rogue'}" in log
    assert played.outcome.seats[0].termination is Termination.NORMAL
    assert_bystander_clean(played)


def test_a_machine_that_cannot_sandbox_plays_no_sandboxed_game(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap, prlimit or taskset to be found
    with pytest.raises(GameError, match=r"cannot run sandboxed bots here: .*bubblewrap") as err:
        duel(tmp_path, "none")
    assert err.value.fatal  # a worker stops rather than lose the bots' games
