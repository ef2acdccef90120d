"""A ladder's own arena takes organiser calls from the ladder only, even when the operator
set no organiser token (a ladder on loopback): its bots are handed the arena's address, and
one that called ForfeitSeat on its opponents decided rated matches (ladder/serve.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import grpc
import pytest
from medina.ladder.serve import LadderServerConfig, start_ladder
from medina.v1 import admin_pb2, admin_pb2_grpc, ladder_pb2, ladder_pb2_grpc

from .test_lobby_faults import CONFIG, ladder_players, run, until_finished

pytestmark = pytest.mark.timeout(180)


def test_a_ladder_without_an_organiser_token_keeps_its_arenas_organiser_calls_to_itself(
    tmp_path: Path,
) -> None:
    async def scenario() -> tuple[grpc.StatusCode, grpc.StatusCode]:
        ladder = await start_ladder(
            LadderServerConfig(
                db=str(tmp_path / "ladder.db"), port=0, records_dir=tmp_path / "rec", ladder=CONFIG
            )
        )
        leave = asyncio.Event()
        players: list[asyncio.Task[object]] = []
        try:
            # Accounts are the operator's: on loopback without a token, anyone's.
            async with grpc.aio.insecure_channel(f"127.0.0.1:{ladder.port}") as lobby:
                stub = ladder_pb2_grpc.LadderServiceStub(lobby)
                keys = [
                    (await stub.AddBot(ladder_pb2.AddBotRequest(name=name))).key
                    for name in ("a", "b")
                ]
            players += ladder_players(f"127.0.0.1:{ladder.port}", keys, leave)
            await until_finished(ladder, 1)  # the ladder's own calls still work
            async with grpc.aio.insecure_channel(ladder.arena_address) as arena:
                matches = admin_pb2_grpc.MatchServiceStub(arena)
                codes = []
                for call, request in (
                    (matches.ListMatches, admin_pb2.ListMatchesRequest()),
                    (matches.ForfeitSeat, admin_pb2.ForfeitSeatRequest(match_id="x", seat=1)),
                ):
                    try:
                        await call(request)  # type: ignore[arg-type]
                        codes.append(grpc.StatusCode.OK)
                    except grpc.aio.AioRpcError as exc:
                        codes.append(exc.code())
            return codes[0], codes[1]
        finally:
            leave.set()
            await asyncio.gather(*players, return_exceptions=True)
            await ladder.stop()

    assert run(scenario) == (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.UNAUTHENTICATED)
