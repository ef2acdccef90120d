"""A ladder server restarted after a crash on its own address is its own earlier life: its
bots are welcomed back at once (the default server id is the lobby's host and port, not the
dead process's pid, whose lease held every bot out for 30 s); and a second server on a port
one listens on is refused (gRPC's SO_REUSEPORT would have shared the port between them)."""

from __future__ import annotations

import signal
import socket
import subprocess
from pathlib import Path

import grpc
import pytest
from medina.v1 import ladder_pb2, ladder_pb2_grpc
from medina_client.status import status_info

from .harness import ARENA, add_bot

pytestmark = pytest.mark.timeout(180)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def serve(db: str, port: int, tmp: Path) -> subprocess.Popen[str]:
    """``ladder serve`` on ``port`` with its defaults (no --server-id), once listening."""
    proc = subprocess.Popen(
        [*ARENA, "ladder", "serve", "--db", db, "--port", str(port),
         "--records", str(tmp / "records")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if f"listening on 127.0.0.1:{port}" not in line:
        proc.kill()
        raise AssertionError(f"ladder serve did not start: {line!r} {proc.communicate()[1]}")
    return proc


def lobby(port: int, key: str) -> str:
    """A lobby stream with ``key``: "welcome", or the reason it was refused with."""
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        hello = ladder_pb2.LobbyRequest(
            hello=ladder_pb2.LobbyHello(protocol_version=1, players=[2])
        )
        call = ladder_pb2_grpc.LadderServiceStub(channel).Lobby(
            iter([hello]), metadata=(("authorization", f"Bearer {key}"),), timeout=30
        )
        try:
            for message in call:
                if message.WhichOneof("kind") == "welcome":
                    call.cancel()
                    return "welcome"
        except grpc.RpcError as exc:
            assert isinstance(exc, grpc.Call)
            metadata = [(k, v) for k, v in exc.trailing_metadata() or ()]
            return status_info(metadata).reason or exc.code().name
        return "ended"


def test_a_ladder_restarted_after_a_crash_takes_its_bots_back_at_once(tmp_path: Path) -> None:
    db = str(tmp_path / "ladder.db")
    key = add_bot(db, "alpha")
    port = free_port()
    first = serve(db, port, tmp_path)
    try:
        # The bot holds its presence (a lease of 30 s) when the server dies.
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            hello = ladder_pb2.LobbyRequest(
                hello=ladder_pb2.LobbyHello(protocol_version=1, players=[2])
            )
            call = ladder_pb2_grpc.LadderServiceStub(channel).Lobby(
                iter([hello]), metadata=(("authorization", f"Bearer {key}"),), timeout=30
            )
            assert next(call).WhichOneof("kind") == "welcome"
            second = subprocess.run(
                [*ARENA, "ladder", "serve", "--db", db, "--port", str(port),
                 "--records", str(tmp_path / "records2")],
                capture_output=True, text=True, timeout=60,
            )  # fmt: skip
            assert second.returncode != 0
            assert f"could not listen on 127.0.0.1:{port}: the port is in use" in second.stderr
            # gRPC's own error line ("add_port.cc ... Failed to add port") came first
            assert "add_port" not in second.stderr, second.stderr
            first.send_signal(signal.SIGKILL)
            first.wait(30)
    finally:
        if first.poll() is None:
            first.kill()
            first.wait(30)
    again = serve(db, port, tmp_path)
    try:
        assert lobby(port, key) == "welcome"
    finally:
        again.send_signal(signal.SIGTERM)
        again.wait(30)
