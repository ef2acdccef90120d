"""A ladder's own arena takes organiser calls from the ladder only, even when the operator
set no organiser token (a ladder on loopback): its bots are handed the arena's address, and
one that called ForfeitSeat on its opponents decided rated matches (ladder/serve.py). Its
account calls are closed then: a bot could revoke or rotate its rivals' keys (ladder/lobby.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from pathlib import Path

import grpc
import pytest
from medina.ladder import accounts
from medina.ladder.serve import LadderServerConfig, start_ladder
from medina.v1 import admin_pb2, admin_pb2_grpc, ladder_pb2, ladder_pb2_grpc

from .test_lobby_faults import CONFIG, ladder_players, run, until_finished

pytestmark = pytest.mark.timeout(180)


async def status_of(call: Awaitable[object]) -> grpc.StatusCode:
    """How a unary call ended."""
    try:
        await call
    except grpc.aio.AioRpcError as exc:
        return exc.code()
    return grpc.StatusCode.OK


def test_a_ladder_without_an_organiser_token_keeps_its_arenas_organiser_calls_to_itself(
    tmp_path: Path,
) -> None:
    async def scenario() -> tuple[grpc.StatusCode, ...]:
        ladder = await start_ladder(
            LadderServerConfig(
                db=str(tmp_path / "ladder.db"), port=0, records_dir=tmp_path / "rec", ladder=CONFIG
            )
        )
        leave = asyncio.Event()
        players: list[asyncio.Task[object]] = []
        account_codes: list[grpc.StatusCode] = []
        try:
            # Without a token the account calls are closed too: the operator adds bots to
            # the database (as `medina-arena bots add --db` does).
            async with grpc.aio.insecure_channel(f"127.0.0.1:{ladder.port}") as lobby:
                stub = ladder_pb2_grpc.LadderServiceStub(lobby)
                account_codes += [
                    await status_of(stub.AddBot(ladder_pb2.AddBotRequest(name="x"))),
                    await status_of(stub.ListBots(ladder_pb2.ListBotsRequest())),
                    await status_of(stub.RevokeBot(ladder_pb2.RevokeBotRequest(name="a"))),
                ]
            keys = []
            for name in ("a", "b"):
                made = accounts.new_key()
                ladder.store.add_bot(name, name, made.key_id, made.salt, made.digest)
                keys.append(made.key)
            players += ladder_players(f"127.0.0.1:{ladder.port}", keys, leave)
            await until_finished(ladder, 1)  # the ladder's own calls still work
            async with grpc.aio.insecure_channel(ladder.arena_address) as arena:
                matches = admin_pb2_grpc.MatchServiceStub(arena)
                forfeit = admin_pb2.ForfeitSeatRequest(match_id="x", seat=1)
                codes = [
                    await status_of(matches.ListMatches(admin_pb2.ListMatchesRequest())),
                    await status_of(matches.ForfeitSeat(forfeit)),
                ]
            return codes[0], codes[1], *account_codes
        finally:
            leave.set()
            await asyncio.gather(*players, return_exceptions=True)
            await ladder.stop()

    assert run(scenario) == (grpc.StatusCode.UNAUTHENTICATED,) * 5
