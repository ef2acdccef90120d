"""`match --sandbox` and `check-bot --sandbox`: the same sandbox from the other commands, a
limit named where the command reports a bot's end."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
from e2e.pki import make_pki
from tournament.cups import cli, run_cli

ROGUE = Path(__file__).resolve().parent / "bots" / "rogue.py"

pytestmark = [pytest.mark.timeout(300), pytest.mark.usefixtures("bwrap")]


def test_match_sandboxes_every_bot_and_names_the_limit(tmp_path: Path) -> None:
    os.chmod(tmp_path, 0o755)  # the bots' directory (the current one)
    done = run_cli(
        "match",
        "--players",
        "2",
        "--decision-ms",
        "10000",
        "--sandbox-memory-mb",
        "128",
        "--bot",
        f"python {ROGUE} --do hog",
        "--bot",
        "python -m medina_client --bot random",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert "seat 0's bot exited with code 137 during the match" in done.stderr
    assert "(sandbox: memory limit 128 MiB reached)" in done.stderr
    assert "crashed" in done.stdout


def test_check_bot_reports_the_limit_as_the_reason(tmp_path: Path) -> None:
    os.chmod(tmp_path, 0o755)
    good = run_cli(
        "check-bot", "--sandbox", "--only", "kind-building", "--",
        "python", "-m", "medina_client", "--bot", "greedy", cwd=tmp_path,
    )  # fmt: skip
    assert good.returncode == 0, good.stdout + good.stderr
    assert "PASS  kind-building" in good.stdout
    bad = run_cli(
        "check-bot", "--sandbox-memory-mb", "128", "--only", "kind-building", "--",
        "python", str(ROGUE), "--do", "hog", cwd=tmp_path,
    )  # fmt: skip
    assert bad.returncode == 1
    assert "the bot was stopped by its sandbox (memory limit 128 MiB reached)" in bad.stdout


def test_sandboxed_bots_play_on_a_mutual_tls_server_without_its_files(tmp_path: Path) -> None:
    # The sandbox's forwarder dials the server over TLS with the organiser's files; the bots
    # inside, which cannot see them, speak to the relay in clear.
    os.chmod(tmp_path, 0o755)
    pki = make_pki()
    secret = tmp_path / "pki"
    secret.mkdir(mode=0o700)
    for name, data in (("ca.pem", pki.ca), ("server.pem", pki.server_cert),
                       ("server.key", pki.server_key), ("client.pem", pki.client_cert),
                       ("client.key", pki.client_key)):  # fmt: skip
        (secret / name).write_bytes(data)
    server = subprocess.Popen(
        cli("serve", "--port", "0", "--workers", "1", "--records", str(tmp_path / "records"),
            "--tls-cert", str(secret / "server.pem"), "--tls-key", str(secret / "server.key"),
            "--tls-client-ca", str(secret / "ca.pem"), cwd=tmp_path),
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        assert server.stdout is not None
        found = re.search(r"listening on (127\.0\.0\.1:\d+)", server.stdout.readline())
        assert found, "serve did not start"
        done = run_cli(
            "match", "--server", found.group(1), "--sandbox",
            "--tls-ca", str(secret / "ca.pem"), "--tls-cert", str(secret / "client.pem"),
            "--tls-key", str(secret / "client.key"),
            "--players", "2", "--ruleset", "medina-v1-2p", "--quiet", "--records", "logs",
            "--bot", "python -m medina_client --bot random",
            "--bot", "python -m medina_client --bot random", cwd=tmp_path,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert "record: " in done.stdout
    finally:
        server.terminate()
        server.wait(60)
