"""A running server whose records are pruned under it (``replay prune``): the pruned
matches are gone from ListMatches and GetMatch answers NOT_FOUND, never a stale summary."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

import grpc
import pytest
from bounded import run
from medina.cli import main as cli
from medina.records.reader import read_record
from medina.records.verify import verify_record
from medina.v1 import admin_pb2, admin_pb2_grpc, arena_pb2, common_pb2, match_pb2
from records.test_verify import engine_record

from .organiser import organiser_server
from .rawbot import Hook, RawBot, first_legal
from .test_workers import AUTH, TOKEN, front_process


def test_a_pruned_record_is_not_found_by_a_running_server(tmp_path: Path) -> None:
    now = time.time()
    old = engine_record(tmp_path, "medina-v2", 2, 1)
    kept = engine_record(tmp_path, "medina-v2", 2, 2)
    os.utime(old, (now - 30 * 86_400, now - 30 * 86_400))

    async def main() -> None:
        async with organiser_server(tmp_path, TOKEN) as (_running, stub):
            listed = await stub.ListMatches(admin_pb2.ListMatchesRequest(), metadata=AUTH)
            assert {m.match_id for m in listed.matches} == {old.stem, kept.stem}
            found = await stub.GetMatch(admin_pb2.GetMatchRequest(match_id=old.stem), metadata=AUTH)
            assert found.match.from_record  # read, and cached by the server
            assert cli(["replay", "prune", str(tmp_path), "--older-than-days", "7"]) == 0
            assert not old.exists()
            listed = await stub.ListMatches(admin_pb2.ListMatchesRequest(), metadata=AUTH)
            assert [m.match_id for m in listed.matches] == [kept.stem]
            assert listed.total_size == 1
            with pytest.raises(grpc.aio.AioRpcError) as gone:
                await stub.GetMatch(admin_pb2.GetMatchRequest(match_id=old.stem), metadata=AUTH)
            assert gone.value.code() is grpc.StatusCode.NOT_FOUND

    run(main())


def _config(seed: int, decision_ms: int | None = None) -> admin_pb2.CreateMatchRequest:
    config = match_pb2.MatchConfig(ruleset=common_pb2.RULESET_MEDINA_V2, players=2, seed=seed)
    if decision_ms is not None:
        config.time_control.decision_ms = decision_ms
    return admin_pb2.CreateMatchRequest(config=config)


async def _not_found(stub: admin_pb2_grpc.MatchServiceAsyncStub, match_id: str) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as gone:
        await stub.GetMatch(admin_pb2.GetMatchRequest(match_id=match_id), metadata=AUTH)
    assert gone.value.code() is grpc.StatusCode.NOT_FOUND, gone.value.details()


def _prune_all(records: Path) -> None:
    """``replay prune`` as an operator runs it to empty the directory."""
    argv = ["replay", "prune", str(records), "--older-than-days", "0", "--max-mb", "0"]
    assert cli(argv) == 0


def test_a_pruned_match_still_in_memory_is_not_found_either(tmp_path: Path) -> None:
    """A match of this run that ended moments ago is still in the server's memory (the
    newest 256 are); pruned, it goes as an earlier run's record does, while a match waiting
    for its bots (a record without an outcome line) is kept and plays on."""

    async def main() -> None:
        async with organiser_server(tmp_path, TOKEN) as (running, stub):
            ended = await stub.CreateMatch(_config(1), metadata=AUTH)
            await stub.AbortMatch(
                admin_pb2.AbortMatchRequest(match_id=ended.match_id), metadata=AUTH
            )
            waiting = await stub.CreateMatch(_config(2), metadata=AUTH)
            _prune_all(tmp_path)
            assert not (tmp_path / f"{ended.match_id}.jsonl").exists()
            listed = await stub.ListMatches(admin_pb2.ListMatchesRequest(), metadata=AUTH)
            assert [m.match_id for m in listed.matches] == [waiting.match_id]
            assert listed.total_size == 1
            await _not_found(stub, ended.match_id)
            bots = [RawBot(running.address, t.token) for t in waiting.tokens]
            async with asyncio.timeout(60):
                await asyncio.gather(*(b.play() for b in bots))
            assert all(b.ended is not None for b in bots)
            got = await stub.GetMatch(
                admin_pb2.GetMatchRequest(match_id=waiting.match_id), metadata=AUTH
            )
            assert got.match.state == admin_pb2.MATCH_STATE_FINISHED
            assert verify_record(read_record(Path(got.match.record_path))).ok

    run(main())


def _hold_third_request(held: asyncio.Queue[arena_pb2.DecisionRequest]) -> Hook:
    """A RawBot hook that leaves its third decision request unanswered, putting it in
    ``held`` (the test replies when it is done): the match is mid-play until then."""
    seen = 0

    def hook(_bot: RawBot, message: arena_pb2.PlayResponse) -> bool:
        nonlocal seen
        if message.WhichOneof("message") != "request":
            return False
        seen += 1
        if seen != 3:
            return False
        held.put_nowait(message.request)
        return True

    return hook


async def _listed(stub: admin_pb2_grpc.MatchServiceAsyncStub) -> tuple[dict[str, str], int]:
    """Every match the server lists (one page): id -> note, and the total it counts."""
    listed = await stub.ListMatches(admin_pb2.ListMatchesRequest(), metadata=AUTH)
    return {m.match_id: m.note for m in listed.matches}, listed.total_size


def test_a_front_and_its_workers_forget_pruned_matches(tmp_path: Path) -> None:
    """``serve --workers 2`` answers for pruned matches as one process does: those its
    workers hold in memory and those it knows from the records of a worker that died
    leave ListMatches and its count, and GetMatch answers NOT_FOUND; a match in play or
    waiting (no outcome line) is never pruned and plays on."""

    async def main() -> None:
        async with (
            front_process(tmp_path) as front,
            grpc.aio.insecure_channel(front.address) as channel,
        ):
            stub = admin_pb2_grpc.MatchServiceStub(channel)
            ended = await stub.CreateMatch(_config(1), metadata=AUTH)
            await stub.AbortMatch(
                admin_pb2.AbortMatchRequest(match_id=ended.match_id), metadata=AUTH
            )
            playing = await stub.CreateMatch(_config(2, decision_ms=60_000), metadata=AUTH)
            held: asyncio.Queue[arena_pb2.DecisionRequest] = asyncio.Queue()
            holder = RawBot(front.address, playing.tokens[0].token)
            holder.hook = _hold_third_request(held)
            bots = [holder, RawBot(front.address, playing.tokens[1].token)]
            play = asyncio.gather(*(b.play() for b in bots))
            async with asyncio.timeout(60):
                request = await held.get()

            _prune_all(tmp_path)  # the workers' own matches, one of them mid-play
            assert (tmp_path / f"{playing.match_id}.jsonl").stat().st_size > 0
            assert await _listed(stub) == ({playing.match_id: ""}, 1)
            await _not_found(stub, ended.match_id)
            holder.reply(request.request_id, first_legal(request, 0))
            async with asyncio.timeout(60):
                await play
            got = await stub.GetMatch(
                admin_pb2.GetMatchRequest(match_id=playing.match_id), metadata=AUTH
            )
            assert got.match.state == admin_pb2.MATCH_STATE_FINISHED
            assert verify_record(read_record(Path(got.match.record_path))).ok

            # Every worker killed: their matches are known from their records now.
            lost = await stub.CreateMatch(_config(3), metadata=AUTH)
            await stub.AbortMatch(
                admin_pb2.AbortMatchRequest(match_id=lost.match_id), metadata=AUTH
            )
            waiting = await stub.CreateMatch(_config(4), metadata=AUTH)
            pids = set(front.worker_pids().values())
            for pid in pids:
                os.kill(pid, signal.SIGKILL)
            for pid in pids:
                await front.wait_for(rf"worker \d+ \(pid {pid}\) died with \d+ match\(es\)")
            listed, total = await _listed(stub)
            assert set(listed) == {playing.match_id, lost.match_id, waiting.match_id}
            assert total == 3

            _prune_all(tmp_path)  # the lost matches' records, but the interrupted one
            listed, total = await _listed(stub)
            assert list(listed) == [waiting.match_id] and total == 1
            assert "died" in listed[waiting.match_id]
            await _not_found(stub, lost.match_id)
            await _not_found(stub, playing.match_id)

    run(main())
