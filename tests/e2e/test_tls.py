"""TLS and mutual TLS on the real server, with certificates generated in the test."""

from __future__ import annotations

import asyncio
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from medina.records.reader import read_record
from medina.records.verify import verify_record
from medina.referee.config import MatchSettings
from medina.rpc.common.config import ServerConfig
from medina.rpc.single.server import start_server
from medina_client import play
from medina_client.bots import RandomBot
from medina_client.connection import channel_credentials

from .pki import Pki, make_pki

SERVING = health_pb2.HealthCheckResponse.SERVING


@pytest.fixture(scope="module")
def pki() -> Pki:
    return make_pki()


async def health(address: str, credentials: grpc.ChannelCredentials | None) -> int:
    """SERVING's value, or raises the AioRpcError of a refused connection."""
    if credentials is None:
        channel = grpc.aio.insecure_channel(address)
    else:
        channel = grpc.aio.secure_channel(address, credentials)
    async with channel:
        reply = await health_pb2_grpc.HealthStub(channel).Check(  # type: ignore[attr-defined]
            health_pb2.HealthCheckRequest(service=""), timeout=5
        )
    return int(reply.status)


async def refused(address: str, credentials: grpc.ChannelCredentials | None) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await health(address, credentials)
    assert info.value.code() is grpc.StatusCode.UNAVAILABLE


async def a_match(address: str, tokens: list[str], creds: list[grpc.ChannelCredentials]) -> None:
    results = await asyncio.gather(
        *(
            play(RandomBot(i), address, t, credentials=c, reconnect_for_s=1.0)
            for i, (t, c) in enumerate(zip(tokens, creds, strict=True))
        )
    )
    assert all(r.seats[0].total >= 0 for r in results)


def test_tls(tmp_path: Path, pki: Pki) -> None:
    async def main() -> None:
        running = await start_server(
            ServerConfig(
                host="127.0.0.1",
                port=0,
                records_dir=tmp_path,
                tls_cert=pki.server_cert,
                tls_key=pki.server_key,
            )
        )
        try:
            trusted = channel_credentials(pki.ca, None, None)
            assert trusted is not None
            assert await health(running.address, trusted) == SERVING
            await refused(running.address, None)  # plaintext to a TLS port
            # A client that does not trust the server's CA refuses to talk.
            await refused(running.address, grpc.ssl_channel_credentials(pki.client_cert))
            hosted = running.arena.create(MatchSettings("medina-v2", 2, 3))
            await a_match(running.address, hosted.tokens, [trusted, trusted])
            assert hosted.task is not None and (await hosted.task).complete
            assert verify_record(read_record(hosted.record_path)).ok
        finally:
            await running.stop(1)

    asyncio.run(asyncio.wait_for(main(), 60))


def test_mutual_tls(tmp_path: Path, pki: Pki) -> None:
    async def main() -> None:
        running = await start_server(
            ServerConfig(
                host="127.0.0.1",
                port=0,
                records_dir=tmp_path,
                tls_cert=pki.server_cert,
                tls_key=pki.server_key,
                tls_client_ca=pki.ca,
            )
        )
        try:
            with_cert = channel_credentials(pki.ca, pki.client_cert, pki.client_key)
            assert with_cert is not None
            no_cert = channel_credentials(pki.ca, None, None)
            rogue = channel_credentials(pki.ca, pki.rogue_client_cert, pki.rogue_client_key)
            await refused(running.address, no_cert)
            await refused(running.address, rogue)
            await refused(running.address, None)
            assert await health(running.address, with_cert) == SERVING
            hosted = running.arena.create(MatchSettings("medina-v1-2p", 2, 4))
            await a_match(running.address, hosted.tokens, [with_cert, with_cert])
            assert hosted.task is not None and (await hosted.task).complete
            assert verify_record(read_record(hosted.record_path)).ok
        finally:
            await running.stop(1)

    asyncio.run(asyncio.wait_for(main(), 60))
