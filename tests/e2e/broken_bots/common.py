"""A raw gRPC bot loop (generated stubs only, no SDK) with knobs to break it, for check-bot's
tests. Each broken bot is a script here that turns one knob."""

from __future__ import annotations

import argparse
import asyncio
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass

import grpc
from medina.v1 import arena_pb2, arena_pb2_grpc, game_pb2


@dataclass(frozen=True)
class Knobs:
    """What the bot does; all True is a correct (if simple) bot."""

    answer: bool = True  # answer decision requests at all
    retry: bool = True  # answer a request again after it was rejected
    reconnect: bool = True  # take the seat up again after the stream is dropped


def arguments() -> tuple[str, str]:
    """``--server HOST:PORT`` as check-bot passes it, and the token from ``MEDINA_TOKEN``."""
    p = argparse.ArgumentParser()
    p.add_argument("--server", required=True)
    p.add_argument(
        "--token", default=os.environ.get("MEDINA_TOKEN"), required="MEDINA_TOKEN" not in os.environ
    )
    args = p.parse_args()
    return str(args.server), str(args.token)


def legal_list(legal: game_pb2.LegalActions) -> list[game_pb2.Action]:
    """Every legal action of a request, placements first, tea last."""
    out = [
        game_pb2.Action(kind=group.kind, square=square, colour=group.colour)
        for group in legal.placements
        for square in group.squares
    ]
    if legal.tea:
        out.append(game_pb2.Action(kind=game_pb2.ACTION_KIND_TEA))
    return out


async def session(address: str, token: str, resume: str, knobs: Knobs) -> tuple[bool, str]:
    """One stream; returns whether MatchEnded arrived, and the resume token."""
    outgoing: asyncio.Queue[arena_pb2.PlayRequest | None] = asyncio.Queue()

    async def requests() -> AsyncIterator[arena_pb2.PlayRequest]:
        while (message := await outgoing.get()) is not None:
            yield message

    def reply(request: arena_pb2.DecisionRequest, attempt: int) -> None:
        actions = legal_list(request.legal)
        action = actions[attempt % len(actions)]
        outgoing.put_nowait(
            arena_pb2.PlayRequest(
                reply=arena_pb2.Reply(request_id=request.request_id, action=action)
            )
        )

    hello = arena_pb2.Hello(protocol_version=1, bot_name="broken", token=token, resume_token=resume)
    outgoing.put_nowait(arena_pb2.PlayRequest(hello=hello))
    last: arena_pb2.DecisionRequest | None = None
    attempts = 0
    try:
        async with grpc.aio.insecure_channel(address) as channel:
            call = arena_pb2_grpc.ArenaServiceStub(channel).Play(requests())
            async for message in call:
                kind = message.WhichOneof("message")
                if kind == "welcome":
                    resume = message.welcome.resume_token
                elif kind == "request":
                    last, attempts = message.request, 0
                    if knobs.answer:
                        reply(last, attempts)
                elif kind == "rejected" and knobs.retry and last is not None:
                    attempts += 1
                    reply(last, attempts)
                elif kind == "ended":
                    outgoing.put_nowait(None)
                    return True, resume
    except grpc.aio.AioRpcError:
        pass  # a broken stream: like a clean end without MatchEnded
    return False, resume


async def play(knobs: Knobs) -> int:
    """Play one seat; 0 after MatchEnded."""
    address, token = arguments()
    resume = ""
    while True:
        ended, resume = await session(address, token, resume, knobs)
        if ended:
            return 0
        if not knobs.reconnect:
            await asyncio.Event().wait()  # alive, but never comes back
