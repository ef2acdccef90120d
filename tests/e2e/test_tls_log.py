"""A TLS server's log is not the diary of everyone who knocks: gRPC's core wrote a line per
failed handshake (port scanners, clients speaking plain HTTP or gRPC in clear) to a public
server's log, unbounded; an operator who asks for gRPC's lines still gets them."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from .pki import make_pki

pytestmark = pytest.mark.timeout(120)


def knocked_log(tmp_path: Path, env: dict[str, str]) -> str:
    """What a TLS ``serve`` wrote to stderr after 10 connections that spoke HTTP in clear."""
    pki = make_pki()
    (tmp_path / "server.pem").write_bytes(pki.server_cert)
    (tmp_path / "server.key").write_bytes(pki.server_key)
    err = tmp_path / "stderr.txt"
    with err.open("w") as stderr:
        server = subprocess.Popen(
            [sys.executable, "-m", "medina.cli", "serve", "--port", "0", "--workers", "1",
             "--records", str(tmp_path / "records"),
             "--tls-cert", str(tmp_path / "server.pem"), "--tls-key", str(tmp_path / "server.key")],
            stdout=subprocess.PIPE, stderr=stderr, text=True, env=env,
        )  # fmt: skip
    try:
        assert server.stdout is not None
        found = re.search(r"listening on 127\.0\.0\.1:(\d+)", server.stdout.readline())
        assert found, "serve did not start"
        for _ in range(10):
            with socket.create_connection(("127.0.0.1", int(found.group(1))), timeout=30) as s:
                s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
                while s.recv(4096):  # the server answers the handshake's failure, then closes
                    pass
    finally:
        server.terminate()
        server.wait(60)
    return err.read_text()


def test_failed_handshakes_leave_no_line_each(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "GRPC_VERBOSITY"}
    log = knocked_log(tmp_path, env)
    assert "Handshake failed" not in log, log


def test_an_operator_asking_for_grpcs_lines_gets_them(tmp_path: Path) -> None:
    log = knocked_log(tmp_path, {**os.environ, "GRPC_VERBOSITY": "INFO"})
    assert log.count("Handshake failed") == 10, log
