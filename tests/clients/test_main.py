"""``python -m medina_client``: exit codes, the one-line error, environment fallbacks."""

from __future__ import annotations

import asyncio
from pathlib import Path

import grpc
import pytest
from medina.engine import new_game
from medina_client.__main__ import main

from .fake_arena import FakeStream, ended, fake_server, request, run, welcome


async def one_decision(stream: FakeStream) -> None:
    s = new_game("medina-v2", 2, 1)
    hello = await stream.hello()
    assert (hello.token, hello.bot_name, hello.omit_legal_actions) == ("T", "g1", True)
    stream.send(welcome(s, 0))
    stream.send(request(s, 1, legal=False))
    await stream.reply()
    stream.send(ended(2))


def test_a_played_match_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    async def go() -> int:
        async with fake_server([one_decision]) as (_, address):
            argv = ["--server", address, "--token", "T", "--bot", "greedy", "--name", "g1"]
            return await asyncio.to_thread(main, [*argv, "--seed", "3", "--no-legal-actions"])

    assert run(go()) == 0
    assert capsys.readouterr().out.startswith("match over: ")


def test_a_refused_handshake_exits_1_with_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    async def refuse(stream: FakeStream) -> None:
        await stream.hello()
        stream.abort(grpc.StatusCode.UNAUTHENTICATED, "unknown seat token")

    async def go() -> int:
        async with fake_server([refuse]) as (_, address):
            return await asyncio.to_thread(main, ["--server", address, "--token", "bad"])

    assert run(go()) == 1
    err = capsys.readouterr().err
    assert err == "medina_client: handshake refused (UNAUTHENTICATED): unknown seat token\n"


def test_server_and_token_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    async def go() -> int:
        async with fake_server([one_decision]) as (_, address):
            monkeypatch.setenv("MEDINA_SERVER", address)
            monkeypatch.setenv("MEDINA_TOKEN", "T")
            argv = ["--bot", "random", "--name", "g1", "--no-legal-actions", "--quiet"]
            return await asyncio.to_thread(main, argv)

    assert run(go()) == 0


def test_without_a_server_it_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEDINA_SERVER", raising=False)
    monkeypatch.delenv("MEDINA_TOKEN", raising=False)
    with pytest.raises(SystemExit) as info:
        main(["--bot", "random"])
    assert info.value.code == 2


def test_a_missing_certificate_file_is_a_one_line_error(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["--server", "127.0.0.1:1", "--token", "T", "--tls-ca", "/nonexistent/ca.pem"])
    assert code == 1
    err = capsys.readouterr().err
    assert err.startswith("medina_client: ") and err.count("\n") == 1


def test_a_certificate_without_its_key_is_a_one_line_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    cert = tmp_path / "bot.pem"
    cert.write_text("not really a certificate")
    code = main(["--server", "127.0.0.1:1", "--token", "T", "--tls-cert", str(cert)])
    assert code == 1
    assert capsys.readouterr().err == (
        "medina_client: mutual TLS needs both the client certificate and its key "
        "(--tls-cert and --tls-key go together)\n"
    )


@pytest.mark.parametrize("server", ["127.0.0.1:70000", "127.0.0.1:0", "[::1]:65536"])
def test_a_port_out_of_range_is_a_usage_error_not_a_reconnect(
    server: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # gRPC dials a port modulo 65536 (70000: 4464); the bot used to retry it for minutes.
    with pytest.raises(SystemExit) as info:
        main(["--server", server, "--token", "T"])
    assert info.value.code == 2
    assert f"server address {server}: a port is 1 to 65535" in capsys.readouterr().err


def test_a_route_refuses_a_port_out_of_range() -> None:
    from medina_client.errors import AddressError
    from medina_client.route import Route

    with pytest.raises(AddressError, match="a port is 1 to 65535, got 70000"):
        Route("localhost:70000")
    assert Route("unix:/tmp/arena.sock").redirects is False  # other targets: left to gRPC
