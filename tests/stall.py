"""A test server held without room for any start, as a stalled event loop would measure,
until released: matches created meanwhile wait in its start queue, bots connected."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import grpc
from medina.rpc.common.config import ServerConfig
from medina.rpc.single.server import RunningServer, start_server
from medina.v1 import admin_pb2_grpc

#: The lag held: past every admission limit (a full second late, a tenth of any clock).
STALLED_MS = 5000.0


class NoRoom:
    """Holds ``running`` without room from now until ``release()``: its loop lag is set back
    to a stall at every tick, before the start queue looks for room."""

    def __init__(self, running: RunningServer) -> None:
        self.running = running
        self.held = True
        running.lag.note(STALLED_MS)
        running.lag.on_tick.insert(0, self._hold)

    def _hold(self) -> None:
        if self.held:
            self.running.lag.note(STALLED_MS)

    def release(self) -> None:
        """Room again: the queue lets its matches start from the next tick."""
        self.held = False
        self.running.lag.ms = 0.0


@asynccontextmanager
async def stalled(
    tmp_path: Path,
) -> AsyncIterator[tuple[RunningServer, admin_pb2_grpc.MatchServiceAsyncStub, NoRoom]]:
    """A server on the default admission held without room for any match (as a stalled
    event loop would measure) until ``release()``; an organiser's stub for it."""
    running = await start_server(ServerConfig(host="127.0.0.1", port=0, records_dir=tmp_path))
    try:
        async with grpc.aio.insecure_channel(running.address) as channel:
            room = NoRoom(running)
            yield running, admin_pb2_grpc.MatchServiceStub(channel), room
    finally:
        await running.stop(1)
