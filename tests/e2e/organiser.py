"""A single-process server with an organiser token, and an organiser's MatchService stub on
it: the start-up the organiser tests share."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import grpc
from medina.rpc.common.config import ServerConfig
from medina.rpc.single.server import RunningServer, start_server
from medina.v1 import admin_pb2_grpc

TOKEN = "organiser-secret"
AUTH = (("authorization", f"Bearer {TOKEN}"),)


@asynccontextmanager
async def organiser_server(
    records: Path, token: str = TOKEN
) -> AsyncIterator[tuple[RunningServer, admin_pb2_grpc.MatchServiceAsyncStub]]:
    """A server on 127.0.0.1, port 0, writing to ``records`` and asking for ``token``; and a
    stub on it (its channel closed, the server stopped with 1 s of grace, on exit)."""
    running = await start_server(
        ServerConfig(host="127.0.0.1", port=0, records_dir=records, organiser_token=token)
    )
    try:
        async with grpc.aio.insecure_channel(running.address) as channel:
            yield running, admin_pb2_grpc.MatchServiceStub(channel)
    finally:
        await running.stop(1)
