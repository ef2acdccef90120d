"""Admission control weighs the process's open files: a match waiting or running may hold its
record and a connection per bot, and a CreateMatch that could take the process past its
open-files limit (less a reserve) is refused as SERVER_FULL, naming the limit and how to
raise it, before gRPC runs out and stops accepting connections (rpc/common/admission.py).
An EMFILE met creating a record anyway is reported as that, not as the disk."""

from __future__ import annotations

import errno
import resource
from pathlib import Path
from typing import Any

import grpc
import pytest
from bounded import run
from medina.referee.local import random_policy
from medina.rpc.common import admission
from medina.rpc.common.admission import (
    FILES_RESERVE_MIN,
    AdmissionLimits,
    Load,
    files_budget,
    files_refusal,
    files_reserve,
    match_files,
    matches_within,
    out_of_files,
    refusal,
)
from medina.rpc.common.config import ServerConfig
from medina.rpc.organiser import refusal_of
from medina.rpc.single import host
from medina.rpc.single.server import start_server
from medina.v1 import admin_pb2, admin_pb2_grpc, common_pb2, match_pb2


def config(players: int) -> match_pb2.MatchConfig:
    return match_pb2.MatchConfig(ruleset=common_pb2.RULESET_MEDINA_V2, players=players, seed=3)


def test_the_budget_arithmetic() -> None:
    assert match_files(4) == 5 and match_files(2) == 3 and match_files(0) == 1
    # A small limit keeps the floor; a large one a share of itself.
    assert files_reserve(1024) == FILES_RESERVE_MIN == 128
    assert files_reserve(20_000) == 1250
    assert files_budget(1024) == 896
    assert matches_within(1024, match_files(4)) == 179
    assert matches_within(1024, match_files(2)) == 298
    assert matches_within(20_000, match_files(4)) == 3750
    # A limit below the reserve holds nothing (never a negative budget) ...
    assert files_budget(100) == 0 and matches_within(100, 5) == 0
    # ... and 0 is a limit like any other, not "unlimited".
    assert files_budget(0) == 0


def test_a_match_that_would_cross_the_budget_is_refused_naming_the_limit() -> None:
    limits = AdmissionLimits(max_open_files=1024)
    fits = Load(active=178, shortest_clock_ms=None, files=890, new_files=5)
    assert refusal(limits, fits, 0.0) is None  # 895 of the 896 budgeted
    crosses = Load(active=179, shortest_clock_ms=None, files=895, new_files=5)
    why = refusal(limits, crosses, 0.0)
    assert why is not None
    for fragment in ("open-files limit", "1024", "179 matches", "ulimit -Hn", "LimitNOFILE="):
        assert fragment in why, (fragment, why)
    # Not weighed when absent; a limit of 0 refuses every match.
    assert refusal(AdmissionLimits(), crosses, 0.0) is None
    assert files_refusal(0, Load(0, None, files=0, new_files=1)) is not None
    # Weighed before the start queue, which would still have room.
    assert AdmissionLimits(max_open_files=1024).max_queued > crosses.queued


def test_a_negative_limit_is_refused() -> None:
    with pytest.raises(ValueError, match="max_open_files must be 0 or more"):
        AdmissionLimits(max_open_files=-1)


def test_emfile_and_enfile_are_told_as_what_they_are() -> None:
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    emfile = out_of_files(OSError(errno.EMFILE, "Too many open files"), "the match record")
    assert emfile is not None
    assert "too many open files" in emfile and f"limit of {soft}" in emfile
    assert "ulimit -Hn" in emfile and "the match record" in emfile
    enfile = out_of_files(OSError(errno.ENFILE, "Too many open files in system"), "x")
    assert enfile is not None and "fs.file-max" in enfile
    assert out_of_files(OSError(errno.ENOSPC, "No space left on device"), "x") is None


def test_a_server_refuses_past_its_budget_and_counts_local_seats_as_no_connection(
    tmp_path: Path,
) -> None:
    # A budget of 14 files: two 4-player matches (5 each) and one 2-player (3), then no more.
    limit = FILES_RESERVE_MIN + 14

    async def main() -> None:
        limits = AdmissionLimits(max_open_files=limit)
        running = await start_server(
            ServerConfig(host="127.0.0.1", port=0, records_dir=tmp_path, admission=limits)
        )
        try:
            async with grpc.aio.insecure_channel(running.address) as channel:
                stub = admin_pb2_grpc.MatchServiceStub(channel)
                created = []
                for players in (4, 4, 2):
                    request = admin_pb2.CreateMatchRequest(config=config(players))
                    created.append(await stub.CreateMatch(request))
                assert running.arena.files() == 13
                with pytest.raises(grpc.aio.AioRpcError) as full:
                    await stub.CreateMatch(admin_pb2.CreateMatchRequest(config=config(2)))
                assert full.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
                reason, hint = refusal_of(full.value)
                assert reason == "SERVER_FULL" and hint >= 1000
                assert f"may open {limit} files" in (full.value.details() or "")
                assert running.match_service is not None and running.match_service.refused == 1
                # A match that ends gives its files back.
                await stub.AbortMatch(
                    admin_pb2.AbortMatchRequest(match_id=created[0].match_id), timeout=30
                )
                assert running.arena.files() == 8
                again = await stub.CreateMatch(admin_pb2.CreateMatchRequest(config=config(4)))
                hosted = running.arena.get(again.match_id)
                assert hosted is not None and running.arena.files() == 13
                # Seats played in process hold no connection: their record and the two
                # other seats' connections count.
                local = running.arena.create(
                    hosted.match.settings, local={0: random_policy(1), 1: random_policy(2)}
                )
                assert running.arena.files() == 13 + 3
                local.match.abort("test")
                await local.match.wait_done()
        finally:
            await running.stop(1)

    run(main())


def test_emfile_creating_a_record_is_refused_as_server_full(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def out_of_files(*_args: Any, **_kwargs: Any) -> Any:
        raise OSError(errno.EMFILE, "Too many open files", str(tmp_path / "x.jsonl"))

    async def main() -> None:
        running = await start_server(ServerConfig(host="127.0.0.1", port=0, records_dir=tmp_path))
        try:
            async with grpc.aio.insecure_channel(running.address) as channel:
                stub = admin_pb2_grpc.MatchServiceStub(channel)
                monkeypatch.setattr(host, "RecordWriter", out_of_files)
                with pytest.raises(grpc.aio.AioRpcError) as failed:
                    await stub.CreateMatch(admin_pb2.CreateMatchRequest(config=config(2)))
                assert failed.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
                assert refusal_of(failed.value)[0] == "SERVER_FULL"
                details = failed.value.details() or ""
                assert "too many open files" in details and "ulimit -Hn" in details
                assert "cannot create the match record" not in details  # not the disk
                listed = await stub.ListMatches(admin_pb2.ListMatchesRequest())
                assert list(listed.matches) == []
                monkeypatch.undo()
                # Files back, matches are created again.
                await stub.CreateMatch(admin_pb2.CreateMatchRequest(config=config(2)))
        finally:
            await running.stop(1)

    run(main())


def test_the_budget_constants_are_documented_values() -> None:
    # docs/operations.md states these; change both together.
    assert admission.FILES_RESERVE_MIN == 128 and admission.FILES_RESERVE_SHARE == 1 / 16
    assert admission.MOST_PLAYERS == 4
