"""What the SDK's ladder player says when its lobby stream breaks: the TLS hint only where
TLS can be at fault, on a stream that never got in, that the ladder refused for no reason
of its own, with credentials that never got in either. A welcomed stream the network
dropped was said to need --tls-ca."""

from __future__ import annotations

import asyncio
import logging

import pytest
from e2e.lobby_standin import DROPPED, HINT, ScriptedLobby, serving
from medina.v1 import ladder_pb2
from medina_client.ladder import play_ladder


async def nothing(_assigned: ladder_pb2.MatchAssigned) -> None:
    raise AssertionError("the stand-in assigns no match")


def test_the_tls_hint_is_given_only_where_tls_can_be_at_fault(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="medina_client")

    async def main() -> None:
        lobby = ScriptedLobby()
        leave = asyncio.Event()
        async with serving(lobby) as address:
            bot = asyncio.create_task(
                play_ladder(nothing, address, "key", leave=leave, reconnect_for_s=60)
            )
            await asyncio.wait_for(lobby.last_open.wait(), 30)
            leave.set()
            await asyncio.wait_for(bot, 30)

    asyncio.run(main())
    said = [r.getMessage().lower() for r in caplog.records if "connecting again" in r.getMessage()]
    assert len(said) == 4, said
    never, welcomed, again, shutting = said
    assert DROPPED.lower() in never and HINT in never, never
    assert DROPPED.lower() in welcomed and HINT not in welcomed, welcomed
    # A stream that never got in, but these credentials got in before: TLS is not at
    # fault (as the Node bot says it).
    assert DROPPED.lower() in again and HINT not in again, again
    assert "shutting_down" in shutting and HINT not in shutting, shutting
