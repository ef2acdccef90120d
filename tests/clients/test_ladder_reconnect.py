"""The SDK's ladder player keeps trying for ``reconnect_for_s`` after every break that
follows a welcome, however long it had played before: counted from the start instead, every
SDK bot quit for good at the first ladder restart after five minutes of play."""

from __future__ import annotations

import asyncio
import inspect
import math
from collections.abc import AsyncIterator

import grpc
from e2e.lobby_standin import serving
from medina.v1 import ladder_pb2
from medina_client.ladder import LadderError, play_ladder, run_ladder

#: The stand-in lobby's breaks come this long after each welcome: longer than the bot's
#: ``reconnect_for_s``, so only a clock started at the break lets it reconnect.
PLAYED_S = 1.5
RECONNECT_FOR_S = 1.0  # more than the first wait before reconnecting (0.5 s)


class BreakingLobby:
    """Welcomes each lobby stream, then ends it (UNAVAILABLE, as a restarting ladder does)
    after ``PLAYED_S``; the ``breaks``-th stream it leaves open."""

    def __init__(self, breaks: int) -> None:
        self.breaks = breaks
        self.streams = 0
        self.last_open = asyncio.Event()

    async def Lobby(
        self,
        request_iterator: AsyncIterator[ladder_pb2.LobbyRequest],
        context: grpc.aio.ServicerContext[ladder_pb2.LobbyRequest, ladder_pb2.LobbyResponse],
    ) -> AsyncIterator[ladder_pb2.LobbyResponse]:
        await anext(request_iterator)  # the LobbyHello
        self.streams += 1
        yield ladder_pb2.LobbyResponse(welcome=ladder_pb2.LobbyWelcome(bot="b"))
        if self.streams > self.breaks:
            self.last_open.set()
            async for message in request_iterator:  # until the bot leaves
                if message.WhichOneof("kind") == "leave":
                    return  # no match in play: the session is over
            return
        await asyncio.sleep(PLAYED_S)  # the bot plays a while, then the ladder goes away
        context.set_code(grpc.StatusCode.UNAVAILABLE)
        context.set_details("the ladder is restarting")


async def nothing(_assigned: ladder_pb2.MatchAssigned) -> None:
    raise AssertionError("the stand-in assigns no match")


def test_each_break_after_a_welcome_gets_the_whole_reconnect_time() -> None:
    async def main() -> int:
        lobby = BreakingLobby(breaks=3)
        leave = asyncio.Event()
        async with serving(lobby) as address:
            bot = asyncio.create_task(
                play_ladder(nothing, address, "key", leave=leave, reconnect_for_s=RECONNECT_FOR_S)
            )
            opened = asyncio.create_task(lobby.last_open.wait())
            await asyncio.wait({bot, opened}, timeout=30, return_when=asyncio.FIRST_COMPLETED)
            if bot.done():
                try:
                    bot.result()
                except LadderError as exc:
                    raise AssertionError(f"the bot gave up after a break: {exc}") from None
            assert opened.done(), "the bot did not come back"
            leave.set()
            await asyncio.wait_for(bot, 30)
            return lobby.streams

    assert asyncio.run(main()) == 4


def test_by_default_the_ladder_player_tries_again_for_as_long_as_it_runs() -> None:
    # It gave up after 300 s: a ladder down for maintenance longer than that lost every SDK
    # and stdio-bridge bot, where the Node bot came back. The CLI passes no limit.
    default = inspect.signature(play_ladder).parameters["reconnect_for_s"].default
    assert default == math.inf
    assert "reconnect_for_s" not in inspect.getsource(run_ladder)  # the CLI's and bridge's
