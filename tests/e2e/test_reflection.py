"""Server reflection answers under grpc.reflection.v1 and v1alpha, over real gRPC."""

from __future__ import annotations

import asyncio
from pathlib import Path

import grpc
import pytest
from google.protobuf import descriptor_pb2
from grpc_reflection.v1alpha import reflection_pb2
from medina.rpc.common.config import ServerConfig
from medina.rpc.common.reflection import V1_SERVICE_NAME, V1ALPHA_SERVICE_NAME
from medina.rpc.single.server import start_server


@pytest.mark.parametrize("service", [V1_SERVICE_NAME, V1ALPHA_SERVICE_NAME])
def test_reflection_lists_the_services_and_serves_their_files(tmp_path: Path, service: str) -> None:
    async def main() -> None:
        running = await start_server(ServerConfig(host="127.0.0.1", port=0, records_dir=tmp_path))
        try:
            async with grpc.aio.insecure_channel(running.address) as channel:
                info = channel.stream_stream(
                    f"/{service}/ServerReflectionInfo",
                    request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
                    response_deserializer=reflection_pb2.ServerReflectionResponse.FromString,
                )
                asks = [
                    reflection_pb2.ServerReflectionRequest(list_services=""),
                    reflection_pb2.ServerReflectionRequest(
                        file_containing_symbol="medina.v1.ArenaService"
                    ),
                ]
                answers = [a async for a in info(iter(asks))]
            names = {s.name for s in answers[0].list_services_response.service}
            assert {"medina.v1.ArenaService", "medina.v1.MatchService", service} <= names
            assert {V1_SERVICE_NAME, V1ALPHA_SERVICE_NAME} <= names
            files = [
                descriptor_pb2.FileDescriptorProto.FromString(raw)
                for raw in answers[1].file_descriptor_response.file_descriptor_proto
            ]
            assert "medina/v1/arena.proto" in {f.name for f in files}
        finally:
            await running.stop(1)

    asyncio.run(asyncio.wait_for(main(), 30))
