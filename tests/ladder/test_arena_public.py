"""``ladder serve --arena-public`` is the address bots are told, also when the arena it
drives runs matches in several processes (``serve --workers``): the worker's endpoint names
the arena's ``--host``, which a bot outside NAT, a proxy or a certificate for a name cannot
use; the front redirects a bot that dials the public address to its worker's port on that
same host."""

from __future__ import annotations

import asyncio
import re
import subprocess
from pathlib import Path

import pytest
from e2e.pki import make_pki
from medina.v1 import ladder_pb2
from medina_client.ladder import LadderOptions, play_ladder

from .harness import ARENA, Bots, LadderServer, add_bot, arena_cli

pytestmark = pytest.mark.timeout(240)


def test_bots_are_told_the_public_arena_address_not_a_workers_endpoint(tmp_path: Path) -> None:
    db = str(tmp_path / "ladder.db")
    keys = {name: add_bot(db, name) for name in ("seen", "other")}
    arena = subprocess.Popen(
        [*ARENA, "serve", "--port", "0", "--workers", "2", "--records", str(tmp_path / "arena")],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    bots = Bots(tmp_path)
    server: LadderServer | None = None
    try:
        assert arena.stdout is not None
        found = re.search(r"listening on 127\.0\.0\.1:(\d+)", arena.stdout.readline())
        assert found, "serve --workers 2 did not start"
        public = f"localhost:{found.group(1)}"  # another name for it: what bots are told
        # An arena in clear dialled with TLS would never answer: said at start, in one line.
        ca = tmp_path / "ca.pem"
        ca.write_bytes(make_pki().ca)
        tls = arena_cli(
            "ladder", "serve", "--db", db, "--port", "0",
            "--arena", f"127.0.0.1:{found.group(1)}", "--arena-tls-ca", str(ca),
        )  # fmt: skip
        assert tls.returncode == 2
        assert "does not serve TLS: drop --arena-tls-ca, --arena-tls-cert and --arena-tls-key" in (
            tls.stderr
        )
        server = LadderServer.start(
            db, tmp_path, "public", "--offer", "medina-v2:2:300",
            "--arena", f"127.0.0.1:{found.group(1)}", "--arena-public", public,
        )  # fmt: skip
        bots.sdk("other", server.address, keys["other"])
        told: list[str] = []

        async def watch() -> None:
            leave = asyncio.Event()

            async def assigned(m: ladder_pb2.MatchAssigned) -> None:
                told.append(m.address)
                leave.set()

            await play_ladder(assigned, server.address, keys["seen"], LadderOptions(), leave=leave)

        asyncio.run(asyncio.wait_for(watch(), 120))
        assert told == [public]
    finally:
        bots.kill_all()
        if server is not None:
            server.stop()
        arena.terminate()
        arena.wait(60)
