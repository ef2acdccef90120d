"""A bot stream refused at its handshake leaves nothing behind on the server: anyone can
open streams, at any rate, with no token; a refusal that left its frames in a reference
cycle (about 6 KB each, freed only by the rare full collection, which then stalled every
match) let a client with no credentials grow the server by megabytes a second."""

from __future__ import annotations

import asyncio
import gc
import sys
from collections import Counter
from pathlib import Path

from medina.rpc.common.collector import Collector
from medina.rpc.common.config import ServerConfig
from medina.rpc.single.server import start_server

#: Each client stream opens, sends its first message, and reads the refusal to its end.
CLIENT = """
import asyncio, sys
import grpc
from medina.v1 import arena_pb2, arena_pb2_grpc

FIRSTS = [
    arena_pb2.PlayRequest(hello=arena_pb2.Hello(protocol_version=1, token="no-such-token")),
    arena_pb2.PlayRequest(hello=arena_pb2.Hello(protocol_version=7, token="t")),
    arena_pb2.PlayRequest(reply=arena_pb2.Reply(request_id=1)),
]
EXPECTED = {"UNAUTHENTICATED", "FAILED_PRECONDITION", "INVALID_ARGUMENT"}

async def main(address, rounds):
    async with grpc.aio.insecure_channel(address) as channel:
        stub = arena_pb2_grpc.ArenaServiceStub(channel)
        for _ in range(rounds):
            for first in FIRSTS:
                call = stub.Play(iter([first]))
                try:
                    async for _message in call:
                        raise SystemExit("a refused stream sent a message")
                except grpc.aio.AioRpcError as exc:
                    assert exc.code().name in EXPECTED, exc
                else:
                    raise SystemExit("a stream was not refused")

asyncio.run(main(sys.argv[1], int(sys.argv[2])))
"""

ROUNDS = 100  # three refusals each


def test_handshake_refusals_leave_no_frames_for_the_full_collection(tmp_path: Path) -> None:
    async def main() -> Counter[str]:
        running = await start_server(ServerConfig(host="127.0.0.1", port=0, records_dir=tmp_path))
        try:
            # As `serve` runs: young collections on a timer, their survivors frozen until
            # the full collection, which is what let the refusals' leftovers pile up.
            async with Collector():
                client = await asyncio.create_subprocess_exec(
                    sys.executable, "-c", CLIENT, running.address, str(ROUNDS)
                )
                assert await asyncio.wait_for(client.wait(), 120) == 0
            gc.unfreeze()
            gc.set_debug(gc.DEBUG_SAVEALL)  # keep what the full collection finds, to name it
            gc.collect()
            return Counter(
                "exception" if isinstance(o, BaseException) else type(o).__name__
                for o in gc.garbage
            )
        finally:
            gc.set_debug(0)
            gc.garbage.clear()
            await running.stop(1)

    left = asyncio.run(main())
    # An aborted call left its exception, its traceback and every frame it went through
    # (about 30 objects a refusal, 6 KB); a refusal set and returned leaves none.
    held = {kind: left[kind] for kind in ("exception", "traceback", "frame") if left[kind]}
    assert not held, f"after {3 * ROUNDS} refusals, left for the full collection: {held}"
