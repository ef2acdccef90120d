"""An operator's TLS files, checked before a server listens: each mistake is one line naming
the file and what is wrong (gRPC alone said "the port is in use" for a key that was not the
certificate's), for ``serve`` and ``ladder serve`` alike; and the SDK's own files before it
connects."""

from __future__ import annotations

import datetime
import re
import subprocess
import sys
from pathlib import Path

import pytest
from medina.cli import main
from medina.wire.shared.tls import TlsFileError, check_key_pair, names_host, not_valid_after
from medina_client.__main__ import main as client_main

from .pki import Pki, encrypted, make_pki, named_cert, self_signed


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A PKI's files and some broken ones, by name."""
    pki: Pki = make_pki()
    old_cert, old_key = self_signed("expired", days=-1)
    made = {
        "ca.pem": pki.ca,
        "server.pem": pki.server_cert,
        "server.key": pki.server_key,
        "client.pem": pki.client_cert,
        "client.key": pki.client_key,
        "expired.pem": old_cert,
        "expired.key": old_key,
        "locked.key": encrypted(pki.server_key, b"secret"),
    }
    where = tmp_path_factory.mktemp("tls-files")
    for name, data in made.items():
        (where / name).write_bytes(data)
    return {name: str(where / name) for name in made}


#: (--tls-cert, --tls-key, --tls-client-ca or None, what the one line says)
MISTAKES = [
    ("server.pem", "client.key", None, "client.key is not the key of the certificate"),
    ("server.key", "server.pem", None, "holds no PEM certificate (it holds a private key"),
    ("server.pem", "server.pem", None, "holds no PEM private key (it holds a certificate"),
    ("expired.pem", "expired.key", None, "expired on"),
    ("server.pem", "locked.key", None, "is encrypted; gRPC needs it unencrypted"),
    ("server.pem", "server.key", "server.key", "client CA"),
    ("server.pem", "nothing.key", None, "cannot read TLS key"),
]


def _path(files: dict[str, str], name: str) -> str:
    return files.get(name, str(Path(files["ca.pem"]).parent / name))


@pytest.mark.parametrize(("cert", "key", "client_ca", "fragment"), MISTAKES)
@pytest.mark.parametrize("command", [["serve"], ["ladder", "serve"]])
def test_a_server_refuses_bad_tls_files_in_one_line(
    command: list[str],
    cert: str,
    key: str,
    client_ca: str | None,
    fragment: str,
    files: dict[str, str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = [*command, "--port", "0", "--records", str(tmp_path / "records")]
    if command[0] == "ladder":
        argv += ["--db", str(tmp_path / "ladder.db")]
    argv += ["--tls-cert", _path(files, cert), "--tls-key", _path(files, key)]
    if client_ca is not None:
        argv += ["--tls-client-ca", _path(files, client_ca)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert fragment in err, err
    assert "Traceback" not in err and "port is in use" not in err
    assert len(err.strip().splitlines()) == 1


def test_the_end_of_validity_is_read_from_the_certificate(files: dict[str, str]) -> None:
    pem = Path(files["server.pem"]).read_bytes()
    ends = not_valid_after(pem)
    now = datetime.datetime.now(datetime.UTC)
    assert now < ends < now + datetime.timedelta(days=2)  # make_pki: one day
    check_key_pair(files["server.pem"], files["server.key"])
    with pytest.raises(TlsFileError, match="expired on"):
        check_key_pair(files["server.pem"], files["server.key"], now=ends + datetime.timedelta(1))


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        (["--tls-ca", "server.key"], "--tls-ca"),
        (["--tls-ca", "ca.pem", "--tls-cert", "client.pem", "--tls-key", "server.key"],
         "server.key is not the key of the certificate"),
        (["--tls-ca", "ca.pem", "--tls-cert", "expired.pem", "--tls-key", "expired.key"],
         "expired on"),
    ],
)  # fmt: skip
def test_the_sdk_refuses_bad_tls_files_before_connecting(
    options: list[str], fragment: str, files: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    named = [_path(files, o) if not o.startswith("--") else o for o in options]
    # Nothing listens at port 1: a bot that tried to connect would say so instead.
    assert client_main(["--server", "127.0.0.1:1", "--token", "T", *named]) == 1
    err = capsys.readouterr().err
    assert fragment in err and "is a Medina Arena server running" not in err, err
    assert len(err.strip().splitlines()) == 1


def test_the_sdk_reads_its_tls_files_from_the_environment_the_arena_sets(
    files: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # `match` and tournaments give a bot with {server} the files in MEDINA_TLS_* only.
    monkeypatch.setenv("MEDINA_TLS_CA", files["server.key"])
    assert client_main(["--server", "127.0.0.1:1", "--token", "T"]) == 1
    err = capsys.readouterr().err
    assert f"--tls-ca {files['server.key']} holds no PEM certificate" in err, err


def test_match_server_names_a_tls_server_it_cannot_dial_at_once(
    files: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # It dials in clear: against a TLS server CreateMatch was retried for two silent minutes.
    server = subprocess.Popen(
        [sys.executable, "-m", "medina.cli", "serve", "--port", "0", "--workers", "1",
         "--records", str(tmp_path / "records"),
         "--tls-cert", files["server.pem"], "--tls-key", files["server.key"]],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        assert server.stdout is not None
        found = re.search(r"listening on (127\.0\.0\.1:\d+)", server.stdout.readline())
        assert found, "serve did not start"
        argv = ["match", "--server", found.group(1), "--players", "2", "--bot", "-", "--bot", "-"]
        assert main([*argv, "--records", str(tmp_path / "logs")]) == 2
        err = capsys.readouterr().err
        assert f"the server at {found.group(1)} serves TLS" in err, err
        assert len(err.strip().splitlines()) == 1
    finally:
        server.terminate()
        server.wait(60)


def test_a_ladder_refuses_to_tell_bots_a_host_its_certificate_does_not_name(
    files: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The certificate names 127.0.0.1 only: every bot told "localhost" would be refused.
    argv = ["ladder", "serve", "--port", "0", "--db", str(tmp_path / "ladder.db"),
            "--tls-cert", files["server.pem"], "--tls-key", files["server.key"],
            "--arena-public", "localhost:50062", "--arena-port", "50062"]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "bots are told to play at localhost, which the TLS certificate" in err, err
    assert "(it names 127.0.0.1)" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("host", "named"),
    [
        ("arena.example.org", True),
        ("ARENA.example.org", True),
        ("eu.arena.example.org", True),  # *.arena.example.org
        ("a.eu.arena.example.org", False),  # a wildcard is one label
        ("example.org", False),
        ("203.0.113.7", True),
        ("203.0.113.8", False),
        ("[2001:db8::1]", True),
    ],
)
def test_the_names_a_certificate_gives_are_read_as_clients_check_them(
    host: str, named: bool
) -> None:
    cert = named_cert(["arena.example.org", "*.arena.example.org"], ["203.0.113.7", "2001:db8::1"])
    assert names_host(cert, host) is named
