"""Server reflection under both names clients ask for: ``grpc.reflection.v1`` (grpcurl,
Postman, newer grpc tools) and ``grpc.reflection.v1alpha`` (older ones).

grpcio-reflection ships only v1alpha for Python. The v1 service has the same messages
under another package, so its wire bytes are identical: the v1 name is served by the same
servicer with the v1alpha message classes doing the (de)serialising.
"""

from __future__ import annotations

from collections.abc import Iterable

import grpc
from grpc_reflection.v1alpha import reflection, reflection_pb2

V1_SERVICE_NAME = "grpc.reflection.v1.ServerReflection"
V1ALPHA_SERVICE_NAME: str = reflection.SERVICE_NAME

__all__ = ["V1ALPHA_SERVICE_NAME", "V1_SERVICE_NAME", "enable_reflection"]


def enable_reflection(service_names: Iterable[str], server: grpc.aio.Server) -> None:
    """Serve reflection for ``service_names`` (and both reflection services) on ``server``."""
    names = (*service_names, V1ALPHA_SERVICE_NAME, V1_SERVICE_NAME)
    reflection.enable_server_reflection(names, server)
    servicer = reflection.aio.ReflectionServicer(names)
    handler = grpc.stream_stream_rpc_method_handler(
        servicer.ServerReflectionInfo,
        request_deserializer=reflection_pb2.ServerReflectionRequest.FromString,
        response_serializer=reflection_pb2.ServerReflectionResponse.SerializeToString,
    )
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(V1_SERVICE_NAME, {"ServerReflectionInfo": handler}),)
    )
