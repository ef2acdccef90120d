"""The organiser's commands against a `serve` that serves TLS (and mutual TLS): `match
--server`, `tournament run --server`, `tournament worker --server` and `web --server` dial it
with --tls-ca/--tls-cert/--tls-key and play or list for real, their bots given the same
files; and each wrong setup is one line naming the problem, said at start."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from medina.cli import main
from medina.referee.config import MatchSettings
from medina.storage.tournaments import TournamentStore
from medina.v1 import admin_pb2_grpc
from medina.wire import matches as wire_matches
from tournament.cups import cli, run_cli

from .pki import Pki, make_pki

pytestmark = pytest.mark.timeout(300)

LISTENING = re.compile(r"listening on (127\.0\.0\.1:\d+)")
VIEWER = re.compile(r"viewer on (http://127\.0\.0\.1:\d+)/")

#: Two quick bots of the smallest game the other tests play.
MATCH = ["--players", "2", "--ruleset", "medina-v1-2p", "--quiet",
         "--bot", "python -m medina_client --bot random",
         "--bot", "python -m medina_client --bot random"]  # fmt: skip

DUEL = """\
name = "duel"
games = 2
validation = "off"
[[variants]]
ruleset = "medina-v1-2p"
players = 2
[[bots]]
name = "greedy"
command = "python -m medina_client --bot greedy"
[[bots]]
name = "random"
command = "python -m medina_client --bot random"
"""


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The test PKI's files, by name."""
    pki: Pki = make_pki()
    made = {
        "ca.pem": pki.ca,
        "server.pem": pki.server_cert,
        "server.key": pki.server_key,
        "client.pem": pki.client_cert,
        "client.key": pki.client_key,
        "rogue.pem": pki.rogue_client_cert,
        "rogue.key": pki.rogue_client_key,
    }
    where = tmp_path_factory.mktemp("pki")
    for name, data in made.items():
        (where / name).write_bytes(data)
    return {name: str(where / name) for name in made}


def _serve(records: Path, *tls: str) -> Iterator[tuple[str, Path]]:
    """A `medina-arena serve` process on 127.0.0.1, port 0: its address and records."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "medina.cli", "serve", "--port", "0", "--workers", "1",
         "--records", str(records), *tls],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        found = LISTENING.search(proc.stdout.readline())
        assert found, "serve did not start"
        yield found.group(1), records
    finally:
        proc.terminate()
        proc.wait(60)


@pytest.fixture(scope="module")
def tls_server(
    files: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, Path]]:
    """A server that serves TLS."""
    yield from _serve(
        tmp_path_factory.mktemp("tls-records"),
        "--tls-cert", files["server.pem"], "--tls-key", files["server.key"],
    )  # fmt: skip


@pytest.fixture(scope="module")
def mtls_server(
    files: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, Path]]:
    """A server that serves mutual TLS (client certificates signed by the test CA)."""
    yield from _serve(
        tmp_path_factory.mktemp("mtls-records"),
        "--tls-cert", files["server.pem"], "--tls-key", files["server.key"],
        "--tls-client-ca", files["ca.pem"],
    )  # fmt: skip


@pytest.fixture(scope="module")
def clear_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A server in clear."""
    yield from _serve(tmp_path_factory.mktemp("clear-records"))


def _tls(files: dict[str, str], mutual: bool) -> list[str]:
    options = ["--tls-ca", files["ca.pem"]]
    if mutual:
        options += ["--tls-cert", files["client.pem"], "--tls-key", files["client.key"]]
    return options


@pytest.mark.parametrize("mutual", [False, True], ids=["tls", "mutual-tls"])
def test_match_plays_on_a_tls_server(
    mutual: bool,
    files: dict[str, str],
    tls_server: tuple[str, Path],
    mtls_server: tuple[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    address, records = mtls_server if mutual else tls_server
    argv = ["match", "--server", address, *_tls(files, mutual), *MATCH]
    assert main([*argv, "--records", str(tmp_path)]) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    found = re.search(r"record: (\S+)", out)
    assert found and Path(found.group(1)).parent == records, out
    # Each bot was given the files after --server, and played to the end over TLS.
    logs = sorted(tmp_path.glob("*.seat*.log"))
    assert len(logs) == 2 and all("match over" in p.read_text() for p in logs)


def test_an_open_seat_is_told_the_tls_files(
    files: dict[str, str], tls_server: tuple[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    # A tiny connect timeout: nobody connects, the match is abandoned at once.
    argv = ["match", "--server", tls_server[0], *_tls(files, False), "--players", "2",
            "--quiet", "--connect-timeout-ms", "1", "--bot", "-", "--bot", "-"]  # fmt: skip
    main(argv)
    out = capsys.readouterr().out
    assert f"./my-bot --tls-ca {files['ca.pem']})" in out, out


#: (the server, the options, what the one line says)
MISTAKES = [
    ("tls", [], "serves TLS: pass --tls-ca with the CA that signed its certificate"),
    ("clear", ["--tls-ca", "ca.pem"],
     "does not serve TLS: drop --tls-ca, --tls-cert and --tls-key"),
    ("tls", ["--tls-ca", "ca.pem", "localhost"],
     "does not name localhost (it names 127.0.0.1): give --server a name or address it lists"),
    ("tls", ["--tls-ca", "rogue.pem"], "is not trusted with the CA of --tls-ca"),
    ("mtls", ["--tls-ca", "ca.pem"],
     "requires a client certificate (mutual TLS): pass --tls-cert and --tls-key"),
    ("mtls", ["--tls-ca", "ca.pem", "--tls-cert", "rogue.pem", "--tls-key", "rogue.key"],
     "refused the client certificate --tls-cert"),
    ("tls", ["--tls-ca", "ca.pem", "--tls-cert", "client.pem"],
     "mutual TLS needs both the client certificate and its key"),
    ("tls", ["--tls-ca", "server.key"], "holds no PEM certificate"),
]  # fmt: skip


@pytest.mark.parametrize(("kind", "options", "fragment"), MISTAKES)
@pytest.mark.parametrize("command", ["match", "tournament run", "tournament worker", "web"])
def test_a_wrong_tls_setup_is_one_line_naming_it(
    command: str,
    kind: str,
    options: list[str],
    fragment: str,
    files: dict[str, str],
    tls_server: tuple[str, Path],
    mtls_server: tuple[str, Path],
    clear_server: tuple[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    address = {"tls": tls_server, "mtls": mtls_server, "clear": clear_server}[kind][0]
    if "localhost" in options:
        options = [o for o in options if o != "localhost"]
        address = address.replace("127.0.0.1", "localhost")
    named = [files.get(o, o) for o in options]
    (tmp_path / "duel.toml").write_text(DUEL)
    TournamentStore(str(tmp_path / "shared.db")).close()
    argv = {
        "match": ["match", *MATCH, "--records", str(tmp_path)],
        "tournament run": ["tournament", "run", str(tmp_path / "duel.toml"),
                           "--out", str(tmp_path)],
        "tournament worker": ["tournament", "worker", "--db", str(tmp_path / "shared.db"),
                              "--forever"],
        "web": ["web", "--records", str(tmp_path), "--http", "0"],
    }[command]  # fmt: skip
    assert main([*argv, "--server", address, *named]) == 2
    err = capsys.readouterr().err
    assert fragment in err, err
    assert len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "tournament.db").exists()  # nothing was created or played


@pytest.mark.parametrize("command", ["match", "tournament run", "web"])
def test_tls_options_without_server_are_refused(
    command: str, files: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "duel.toml").write_text(DUEL)
    argv = {
        "match": ["match", *MATCH, "--records", str(tmp_path)],
        "tournament run": ["tournament", "run", str(tmp_path / "duel.toml"),
                           "--out", str(tmp_path)],
        "web": ["web", "--records", str(tmp_path)],
    }[command]  # fmt: skip
    assert main([*argv, "--tls-ca", files["ca.pem"]]) == 2
    err = capsys.readouterr().err
    assert "--tls-ca: for dialling --server over TLS; without --server" in err, err


def test_a_tournament_runs_and_a_worker_plays_on_a_mutual_tls_server(
    files: dict[str, str], mtls_server: tuple[str, Path], tmp_path: Path
) -> None:
    address, records = mtls_server
    (tmp_path / "duel.toml").write_text(DUEL)
    done = run_cli(
        "tournament", "run", "duel.toml", "--server", address, *_tls(files, True), "--quiet",
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    store = TournamentStore(str(tmp_path / "tournaments" / "duel" / "tournament.db"))
    results = store.results(store.tournament("duel").id)
    assert [g.ending for g in results] == ["complete", "complete"]
    assert all(Path(g.record_path).parent == records for g in results)
    # A worker elsewhere: the tournament in a shared database, its TLS on its command line.
    shared = str(tmp_path / "shared.db")
    made = run_cli("tournament", "create", "duel.toml", "--db", shared, cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    worked = run_cli(
        "tournament", "worker", "--db", shared, "--server", address, *_tls(files, True),
        "--records", str(tmp_path / "worker-logs"), cwd=tmp_path,
    )  # fmt: skip
    assert worked.returncode == 0, worked.stderr
    assert "2 games played" in worked.stdout, worked.stdout
    store = TournamentStore(shared)
    assert store.counts(store.tournament("duel").id) == {"done": 2}


@pytest.mark.parametrize("mutual", [False, True], ids=["tls", "mutual-tls"])
def test_web_lists_the_matches_of_a_tls_server(
    mutual: bool,
    files: dict[str, str],
    tls_server: tuple[str, Path],
    mtls_server: tuple[str, Path],
    tmp_path: Path,
) -> None:
    address = (mtls_server if mutual else tls_server)[0]
    credentials = _credentials(files, mutual)
    match_id = asyncio.run(_create_waiting_match(address, credentials))
    proc = subprocess.Popen(
        cli("web", "--records", str(tmp_path), "--server", address, *_tls(files, mutual),
            "--http", "0", cwd=tmp_path),
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        found = VIEWER.search(proc.stdout.readline())
        assert found, "web did not start"
        with urllib.request.urlopen(found.group(1) + "/", timeout=30) as page:
            assert f"/live/{match_id}" in page.read().decode()
    finally:
        proc.terminate()
        proc.wait(60)
        asyncio.run(_abort(address, credentials, match_id))


def _credentials(files: dict[str, str], mutual: bool) -> grpc.ChannelCredentials:
    pem = {k: Path(files[k]).read_bytes() for k in ("ca.pem", "client.pem", "client.key")}
    return grpc.ssl_channel_credentials(
        pem["ca.pem"],
        private_key=pem["client.key"] if mutual else None,
        certificate_chain=pem["client.pem"] if mutual else None,
    )


async def _create_waiting_match(address: str, credentials: grpc.ChannelCredentials) -> str:
    """A match created on the server over TLS, waiting for bots that never come."""
    settings = MatchSettings("medina-v1-2p", 2, 1, connect_timeout_ms=120_000)
    async with grpc.aio.secure_channel(address, credentials) as channel:
        created = await admin_pb2_grpc.MatchServiceStub(channel).CreateMatch(
            wire_matches.create_request(settings), timeout=30
        )
    return str(created.match_id)


async def _abort(address: str, credentials: grpc.ChannelCredentials, match_id: str) -> None:
    async with grpc.aio.secure_channel(address, credentials) as channel:
        await admin_pb2_grpc.MatchServiceStub(channel).AbortMatch(
            wire_matches.abort_request(match_id, "the test is over"), timeout=30
        )
