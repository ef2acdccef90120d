"""TLS and mutual TLS between the SDK and a server, with certificates made in the test."""

from __future__ import annotations

import asyncio

import grpc
import pytest
from e2e.pki import make_pki, self_signed
from medina.engine import new_game
from medina.v1 import match_pb2
from medina_client import ConnectionLost, play
from medina_client.bots import RandomBot
from medina_client.connection import channel_credentials
from medina_client.tls import TlsError

from .fake_arena import FakeStream, ended, fake_server, request, run, welcome


@pytest.fixture(scope="module")
def pki() -> dict[str, bytes]:
    """A CA, a server certificate for 127.0.0.1 and a client certificate, all PEM."""
    made = make_pki()
    return {
        "ca.pem": made.ca,
        "server.pem": made.server_cert,
        "server.key": made.server_key,
        "client.pem": made.client_cert,
        "client.key": made.client_key,
    }


def _server_credentials(pki: dict[str, bytes]) -> grpc.ServerCredentials:
    return grpc.ssl_server_credentials(
        [(pki["server.key"], pki["server.pem"])],
        root_certificates=pki["ca.pem"],
        require_client_auth=True,
    )


async def _one_decision(stream: FakeStream) -> None:
    s = new_game("medina-v2", 2, 1)
    await stream.hello()
    stream.send(welcome(s, 0))
    stream.send(request(s, 1))
    await stream.reply()
    stream.send(ended(2))


def test_mutual_tls(pki: dict[str, bytes]) -> None:
    credentials = channel_credentials(pki["ca.pem"], pki["client.pem"], pki["client.key"])

    async def main() -> None:
        async with fake_server([_one_decision], _server_credentials(pki)) as (_, address):
            result = await play(RandomBot(), address, "tok", credentials=credentials)
        assert result.ending == match_pb2.MATCH_ENDING_COMPLETE

    run(main())


def test_a_client_without_a_certificate_is_refused(pki: dict[str, bytes]) -> None:
    credentials = channel_credentials(pki["ca.pem"])

    async def main() -> None:
        async with fake_server([_one_decision], _server_credentials(pki)) as (arena, address):
            with pytest.raises(ConnectionLost, match="UNAVAILABLE"):
                await play(
                    RandomBot(),
                    address,
                    "tok",
                    credentials=credentials,
                    reconnect_for_s=0.1,
                    first_backoff_s=0.02,
                )
            arena.scripts.clear()  # never reached: the TLS handshake fails first

    run(main())


def _server_tls_only(pki: dict[str, bytes]) -> grpc.ServerCredentials:
    return grpc.ssl_server_credentials([(pki["server.key"], pki["server.pem"])])


def test_a_server_certificate_the_ca_did_not_sign_ends_at_once_saying_so(
    pki: dict[str, bytes],
) -> None:
    other_ca = self_signed("someone else", 1)[0]

    async def main() -> None:
        async with fake_server([_one_decision], _server_tls_only(pki)) as (arena, address):
            with pytest.raises(TlsError, match="not signed by the CA given with --tls-ca"):
                # No retry: a long reconnect window would otherwise be spent on it.
                await asyncio.wait_for(
                    play(RandomBot(), address, "tok", credentials=channel_credentials(other_ca)),
                    20,
                )
            arena.scripts.clear()

    run(main())


def test_tls_to_a_plaintext_server_ends_at_once_saying_so(pki: dict[str, bytes]) -> None:
    async def main() -> None:
        async with fake_server([_one_decision]) as (arena, address):
            with pytest.raises(TlsError, match="the server does not serve TLS"):
                await asyncio.wait_for(
                    play(
                        RandomBot(), address, "tok", credentials=channel_credentials(pki["ca.pem"])
                    ),
                    20,
                )
            arena.scripts.clear()

    run(main())


@pytest.mark.parametrize(
    ("tls", "hint"),
    [
        (False, "if it serves TLS, pass --tls-ca"),
        (True, "if it requires client certificates (mutual TLS), pass --tls-cert and --tls-key"),
    ],
)
def test_a_connection_the_server_closes_says_which_tls_option_may_be_missing(
    pki: dict[str, bytes], tls: bool, hint: str
) -> None:
    # Plaintext to a TLS server, or TLS without a client certificate to a mutual-TLS one.
    credentials = channel_credentials(pki["ca.pem"]) if tls else None

    async def main() -> None:
        async with fake_server([_one_decision], _server_credentials(pki)) as (arena, address):
            with pytest.raises(ConnectionLost) as info:
                await play(
                    RandomBot(),
                    address,
                    "tok",
                    credentials=credentials,
                    reconnect_for_s=0.1,
                    first_backoff_s=0.02,
                )
            assert hint in str(info.value)
            arena.scripts.clear()

    run(main())
