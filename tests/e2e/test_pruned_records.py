"""A running server whose records are pruned under it (``replay prune``): the pruned
matches are gone from ListMatches and GetMatch answers NOT_FOUND, never a stale summary."""

from __future__ import annotations

import os
import time
from pathlib import Path

import grpc
import pytest
from bounded import run
from medina.cli import main as cli
from medina.rpc.common.config import ServerConfig
from medina.rpc.single.server import start_server
from medina.v1 import admin_pb2, admin_pb2_grpc
from records.test_verify import engine_record

TOKEN = "organiser-secret"
AUTH = (("authorization", f"Bearer {TOKEN}"),)


def test_a_pruned_record_is_not_found_by_a_running_server(tmp_path: Path) -> None:
    now = time.time()
    old = engine_record(tmp_path, "medina-v2", 2, 1)
    kept = engine_record(tmp_path, "medina-v2", 2, 2)
    os.utime(old, (now - 30 * 86_400, now - 30 * 86_400))

    async def main() -> None:
        running = await start_server(
            ServerConfig(host="127.0.0.1", port=0, records_dir=tmp_path, organiser_token=TOKEN)
        )
        try:
            async with grpc.aio.insecure_channel(running.address) as channel:
                stub = admin_pb2_grpc.MatchServiceStub(channel)
                listed = await stub.ListMatches(admin_pb2.ListMatchesRequest(), metadata=AUTH)
                assert {m.match_id for m in listed.matches} == {old.stem, kept.stem}
                found = await stub.GetMatch(
                    admin_pb2.GetMatchRequest(match_id=old.stem), metadata=AUTH
                )
                assert found.match.from_record  # read, and cached by the server
                assert cli(["replay", "prune", str(tmp_path), "--older-than-days", "7"]) == 0
                assert not old.exists()
                listed = await stub.ListMatches(admin_pb2.ListMatchesRequest(), metadata=AUTH)
                assert [m.match_id for m in listed.matches] == [kept.stem]
                assert listed.total_size == 1
                with pytest.raises(grpc.aio.AioRpcError) as gone:
                    await stub.GetMatch(admin_pb2.GetMatchRequest(match_id=old.stem), metadata=AUTH)
                assert gone.value.code() is grpc.StatusCode.NOT_FOUND
        finally:
            await running.stop(1)

    run(main())
