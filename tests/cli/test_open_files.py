"""The servers raise their soft open-files limit to the hard one: a soft limit of 1,024 (a
login shell's, a service manager's) would otherwise end at about 250 matches whose bots each
connect on their own (medina/cli/open_files.py)."""

from __future__ import annotations

import asyncio
import logging
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import grpc
import pytest
from bounded import run
from e2e.rawbot import RawBot
from medina.cli import open_files
from medina.rpc.common.admission import AdmissionLimits, match_files, matches_within
from medina.rpc.organiser import refusal_of
from medina.v1 import admin_pb2, admin_pb2_grpc, common_pb2, match_pb2

ROOT = Path(__file__).resolve().parents[2]


def soft_limit(pid: int) -> int:
    """The soft 'Max open files' of a running process, as the kernel reports it."""
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
        if line.startswith("Max open files"):
            return int(line.split()[3])
    raise AssertionError(f"no open-files limit for process {pid}")


def lowered(soft: int) -> None:
    """In the child before exec: start with a soft limit of ``soft``."""
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_the_soft_limit_is_raised_to_the_hard_one_within_the_ceiling() -> None:
    before = resource.getrlimit(resource.RLIMIT_NOFILE)
    hard = before[1]
    wanted = open_files.CEILING if hard == resource.RLIM_INFINITY else min(hard, open_files.CEILING)
    if wanted <= 256:
        pytest.skip(f"the hard limit here ({hard}) leaves nothing to raise")
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))
        assert open_files.raise_open_files_limit() == (256, wanted)
        assert resource.getrlimit(resource.RLIMIT_NOFILE) == (wanted, hard)
        # Already there: nothing changes.
        assert open_files.raise_open_files_limit() == (wanted, wanted)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, before)


def test_an_operators_lower_hard_limit_is_the_ceiling() -> None:
    before = resource.getrlimit(resource.RLIMIT_NOFILE)
    if before[1] != resource.RLIM_INFINITY and before[1] < 512:
        pytest.skip(f"the hard limit here ({before[1]}) is below the test's")
    pid = os.fork()  # lowering a hard limit cannot be undone: do it in a child
    if pid == 0:  # pragma: no cover - the child reports through its exit code
        code = 1
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (256, 512))
            ok = open_files.raise_open_files_limit() == (256, 512)
            code = 0 if ok and resource.getrlimit(resource.RLIMIT_NOFILE) == (512, 512) else 1
        finally:
            os._exit(code)
    _pid, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_serve_raises_its_limit_before_it_listens(tmp_path: Path) -> None:
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    wanted = open_files.CEILING if hard == resource.RLIM_INFINITY else min(hard, open_files.CEILING)
    if wanted <= 256:
        pytest.skip(f"the hard limit here ({hard}) leaves nothing to raise")
    argv = [sys.executable, "-m", "medina.cli", "--log-level", "INFO", "serve"]
    argv += ["--host", "127.0.0.1", "--port", "0", "--records", str(tmp_path / "records")]
    proc = subprocess.Popen(
        argv,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: lowered(256),
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "listening" in line, line
        assert soft_limit(proc.pid) == wanted
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    assert proc.returncode == 0, err
    assert f"open-files limit raised from 256 to {wanted}" in err


def test_the_budget_is_logged_and_a_larger_explicit_limit_warned_of(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, "medina.cli")
    assert open_files.report_budget(AdmissionLimits(), max_queued_given=False) is None
    assert not caplog.records  # no limit weighed (Windows, unlimited): nothing to say
    limits = AdmissionLimits(max_open_files=1024)
    assert open_files.report_budget(limits, max_queued_given=False) == (179, 298)
    levels = [(r.levelno, r.getMessage()) for r in caplog.records]
    assert all(level == logging.INFO for level, _ in levels), levels
    assert "holds at most 179 4-player matches waiting or running (298 2-player" in levels[0][1]
    assert "the start queue's default of 1024 matches cannot fill" in levels[1][1]
    caplog.clear()
    given = AdmissionLimits(max_open_files=1024, max_matches=5000, max_queued=500)
    open_files.report_budget(given, max_queued_given=True)
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warned) == 2, warned
    assert warned[0].startswith("--max-matches 5000 will not be reached")
    assert warned[1].startswith("--max-queued 500 will not be reached")
    assert all("ulimit -Hn" in w and "LimitNOFILE=" in w for w in warned)
    caplog.clear()
    # Within the budget, or no queue (0 is no queue, not a default): no warning.
    within = AdmissionLimits(max_open_files=1024, max_matches=100, max_queued=0)
    open_files.report_budget(within, max_queued_given=True)
    assert [r.levelno for r in caplog.records] == [logging.INFO]
    caplog.clear()
    # With workers each has the limit, and the front, forwarding 1.0 bots, counts every
    # match as 4 seats (it does not know theirs): 224 of any size.
    assert open_files.report_budget(limits, max_queued_given=False, workers=2) == (224, 224)
    assert "across 2 workers and their front" in caplog.records[0].getMessage()


def create_until_refused(address: str, players: int, most: int) -> tuple[list[Any], Any]:
    """CreateMatch (bots never come) until refused: the matches and the refusal."""

    async def main() -> tuple[list[Any], Any]:
        async with grpc.aio.insecure_channel(address) as channel:
            stub = admin_pb2_grpc.MatchServiceStub(channel)
            created: list[Any] = []
            cfg = match_pb2.MatchConfig(
                ruleset=common_pb2.RULESET_MEDINA_V2, players=players, seed=1
            )
            for _ in range(most):
                try:
                    created.append(await stub.CreateMatch(admin_pb2.CreateMatchRequest(config=cfg)))
                except grpc.aio.AioRpcError as exc:
                    return created, exc
        raise AssertionError(f"{most} matches created and none refused")

    return run(main(), 120)


def test_a_burst_under_a_low_hard_limit_is_refused_before_the_process_runs_out(
    tmp_path: Path,
) -> None:
    """The tester's case, scaled down: a hard limit of 384 (a service manager's 1,024 needs
    the same), CreateMatch until refused with bots that never come, then every seat's bot
    connecting on its own: the process never runs out, and a normal match still plays."""
    limit = 384
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < limit:
        pytest.skip(f"the hard limit here ({hard}) is below the test's")
    argv = [sys.executable, "-m", "medina.cli", "--log-level", "INFO", "serve"]
    argv += ["--host", "127.0.0.1", "--port", "0", "--records", str(tmp_path / "records")]
    argv += ["--workers", "1", "--max-queued", "1000"]
    proc = subprocess.Popen(
        argv,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit)),
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "listening" in line, line
        address = line.split()[-1]
        most = matches_within(limit, match_files(4))
        created, refused = create_until_refused(address, 4, 10 * most)
        assert len(created) == most == 51
        assert refused.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
        assert refusal_of(refused)[0] == "SERVER_FULL"
        details = refused.details() or ""
        for fragment in (f"may open {limit} files", "ulimit -Hn", "LimitNOFILE="):
            assert fragment in details, (fragment, details)
        run(connect_every_seat_then_abort(address, created), 120)
        run(play_one_match(address), 120)
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    assert proc.returncode == 0, err
    assert "Too many open files" not in err and "File descriptor limit reached" not in err
    assert "--max-queued 1000 will not be reached with 4-player matches" in err


#: A connection of its own for each bot (gRPC shares one between a process's channels to an
#: address otherwise): as bots in their own processes connect.
OWN_CONNECTION = (("grpc.use_local_subchannel_pool", 1),)


async def connect_every_seat_then_abort(address: str, created: list[Any]) -> None:
    """Every seat of ``created`` taken up by a bot on a connection of its own (all welcomed:
    the server accepted and served each), then every match aborted and its bots ended."""
    bots = [
        RawBot(address, t.token, channel_options=OWN_CONNECTION)
        for match in created
        for t in match.tokens
    ]
    tasks = [asyncio.create_task(bot.play()) for bot in bots]
    await asyncio.gather(*(bot.welcomed.wait() for bot in bots))
    async with grpc.aio.insecure_channel(address) as channel:
        stub = admin_pb2_grpc.MatchServiceStub(channel)
        for match in created:
            await stub.AbortMatch(admin_pb2.AbortMatchRequest(match_id=match.match_id))
    await asyncio.gather(*tasks)
    assert all(bot.ended is not None for bot in bots)


async def play_one_match(address: str) -> None:
    """A 2-player match created, played to its end and found FINISHED."""
    async with grpc.aio.insecure_channel(address) as channel:
        stub = admin_pb2_grpc.MatchServiceStub(channel)
        cfg = match_pb2.MatchConfig(ruleset=common_pb2.RULESET_MEDINA_V2, players=2, seed=5)
        created = await stub.CreateMatch(admin_pb2.CreateMatchRequest(config=cfg))
        bots = [RawBot(address, t.token, channel_options=OWN_CONNECTION) for t in created.tokens]
        await asyncio.gather(*(bot.play() for bot in bots))
        got = await stub.GetMatch(admin_pb2.GetMatchRequest(match_id=created.match_id))
        assert got.match.state == admin_pb2.MATCH_STATE_FINISHED
