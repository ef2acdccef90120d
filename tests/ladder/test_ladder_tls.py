"""A ladder in public: ``ladder serve`` with TLS and mutual TLS (certificates made in the
test), its lobby and its arena both; the SDK, the Node bot and the stdio bridge connect with
the organiser's CA and their client certificates and play the matches they are assigned,
house bots included; bots that get TLS wrong are told what to fix."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from e2e.pki import make_pki, self_signed
from e2e.test_node_bot import node  # noqa: F401 (the fixture: node with the bot's packages)
from medina.storage.ladder import LadderStore

from .harness import ARENA, Bots, LadderServer, add_bot, arena_cli, wait_until

pytestmark = pytest.mark.timeout(300)


def _pki(tmp: Path) -> dict[str, str]:
    """The organiser's CA, the server's pair, a bot's client pair, and a CA nobody uses."""
    pki = make_pki()
    files = {
        "ca.pem": pki.ca,
        "server.pem": pki.server_cert,
        "server.key": pki.server_key,
        "client.pem": pki.client_cert,
        "client.key": pki.client_key,
        "other-ca.pem": self_signed("someone else", 1)[0],
    }
    for name, data in files.items():
        (tmp / name).write_bytes(data)
    return {name: str(tmp / name) for name in files}


def _games(store: LadderStore, bot: str) -> int:
    return sum(line.games for line in store.lines() if line.bot == bot)


def test_a_mutual_tls_ladder_plays_every_kind_of_bot(
    tmp_path: Path,
    node: str,  # noqa: F811
) -> None:
    f = _pki(tmp_path)
    db = str(tmp_path / "ladder.db")
    keys = {name: add_bot(db, name) for name in ("py", "js", "awk", "plain", "nocert")}
    server = LadderServer.start(
        db, tmp_path, "tls", "--offer", "medina-v2:2:300", "--house", "greedy",
        "--tls-cert", f["server.pem"], "--tls-key", f["server.key"],
        "--tls-client-ca", f["ca.pem"],
    )  # fmt: skip
    bots = Bots(tmp_path)
    store = LadderStore(db)
    tls = ("--tls-ca", f["ca.pem"], "--tls-cert", f["client.pem"], "--tls-key", f["client.key"])
    try:
        bots.sdk("py", server.address, keys["py"], *tls)
        bots.node(node, "js", server.address, keys["js"], *tls)
        bots.stdio("awk", server.address, keys["awk"], *tls)
        plain = bots.sdk("plain", server.address, keys["plain"])
        nocert = bots.sdk("nocert", server.address, keys["nocert"], "--tls-ca", f["ca.pem"])
        # Each is assigned matches at the arena's TLS address and plays them there; the
        # house bot plays through the ladder's loopback listener.
        every = ("py", "js", "awk", "house-greedy")
        wait_until(lambda: all(_games(store, b) >= 1 for b in every), 150, "a match of each")
        # Bots that get TLS wrong are told which option to fix (and keep trying: a server
        # that closes the connection may be restarting).
        wait_until(lambda: "if it serves TLS, pass --tls-ca" in plain.output(), 30, "the hint")
        wait_until(
            lambda: "requires client certificates (mutual TLS)" in nocert.output(), 30, "mTLS"
        )
        assert _games(store, "plain") == 0 and _games(store, "nocert") == 0
    finally:
        bots.kill_all()
        server.stop()
        store.engine.dispose()
    assert "Traceback" not in server.log.read_text()


def test_a_bot_that_does_not_trust_the_ladder_stops_at_once_saying_why(tmp_path: Path) -> None:
    f = _pki(tmp_path)
    db = str(tmp_path / "ladder.db")
    key = add_bot(db, "wary")
    server = LadderServer.start(
        db, tmp_path, "tls", "--tls-cert", f["server.pem"], "--tls-key", f["server.key"]
    )
    bots = Bots(tmp_path)
    try:
        wary = bots.start(
            "wary",
            [sys.executable, "-m", "medina_client", "--server", server.address, "--bot-key",
             key, "--tls-ca", f["other-ca.pem"]],
        )  # fmt: skip
        assert wary.proc.wait(60) == 1
        out = wary.output()
        assert "is not signed by the CA given with --tls-ca" in out, out
        assert "connecting again" not in out and "Traceback" not in out
    finally:
        bots.kill_all()
        server.stop()


def test_a_ladder_drives_an_arena_that_serves_tls(tmp_path: Path) -> None:
    f = _pki(tmp_path)
    db = str(tmp_path / "ladder.db")
    keys = {name: add_bot(db, name) for name in ("a", "b")}
    arena = subprocess.Popen(
        [*ARENA, "serve", "--port", "0", "--workers", "1", "--records", str(tmp_path / "arena"),
         "--tls-cert", f["server.pem"], "--tls-key", f["server.key"]],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        env={**os.environ, "MEDINA_ORGANISER_TOKEN": "organiser-secret"},
    )  # fmt: skip
    bots = Bots(tmp_path)
    server: LadderServer | None = None
    try:
        assert arena.stdout is not None
        found = re.search(r"listening on (127\.0\.0\.1:\d+)", arena.stdout.readline())
        assert found, "serve did not start"
        drive = ("--arena", found.group(1), "--organiser-token", "organiser-secret")
        # Dialled in clear, it would answer nothing: refused, saying which option to add.
        clear = arena_cli("ladder", "serve", "--db", db, "--port", "0", *drive)
        assert clear.returncode == 2 and "serves TLS: pass --arena-tls-ca" in clear.stderr
        # The wrong CA, a certificate without its key: each said at start, naming the option
        # (checked as the organiser's commands check their --tls-* options).
        untrusted = arena_cli(
            "ladder", "serve", "--db", db, "--port", "0", *drive,
            "--arena-tls-ca", f["other-ca.pem"],
        )  # fmt: skip
        assert untrusted.returncode == 2, untrusted.stderr
        assert f"is not trusted with the CA of --arena-tls-ca {f['other-ca.pem']}" in (
            untrusted.stderr
        )
        half = arena_cli(
            "ladder", "serve", "--db", db, "--port", "0", *drive,
            "--arena-tls-ca", f["ca.pem"], "--arena-tls-cert", f["client.pem"],
        )  # fmt: skip
        assert half.returncode == 2
        assert "--arena-tls-cert and --arena-tls-key go together" in half.stderr
        # House bots hold no certificate for it: refused, saying so.
        refused = arena_cli(
            "ladder", "serve", "--db", db, "--port", "0", *drive, "--arena-tls-ca", f["ca.pem"],
            "--house", "greedy",
        )  # fmt: skip
        assert refused.returncode == 2 and "house bots hold no certificate" in refused.stderr
        server = LadderServer.start(
            db, tmp_path, "drives-tls", "--offer", "medina-v2:2:300", *drive,
            "--arena-tls-ca", f["ca.pem"],
            "--tls-cert", f["server.pem"], "--tls-key", f["server.key"],
        )  # fmt: skip
        store = LadderStore(db)
        for name, key in keys.items():
            bots.sdk(name, server.address, key, "--tls-ca", f["ca.pem"])
        wait_until(lambda: _games(store, "a") >= 1, 120, "a rated match at the TLS arena")
        store.engine.dispose()
    finally:
        bots.kill_all()
        if server is not None:
            server.stop()
        arena.terminate()
        arena.wait(60)
