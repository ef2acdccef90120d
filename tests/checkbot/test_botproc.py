"""cli/botproc.py, shared by ``match`` and ``check-bot``: command lines, start-up, stopping."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from medina.launch.botproc import BotStartError, bot_argv, reap, spawn_bot, stop_bot
from medina.wire.shared.tls import ClientTls

#: A server dialled over mutual TLS (the files are not read here).
TLS = ClientTls("/pki/ca.pem", "/pki/c.pem", "/pki/c.key", b"", b"", b"")


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["./bot"], ["./bot", "--server", "h:1"]),
        (["python", "-m", "b"], [sys.executable, "-m", "b", "--server", "h:1"]),
        (["python3", "b.py"], [sys.executable, "b.py", "--server", "h:1"]),
        (
            ["java", "-jar", "b.jar", "{server}", "--key={token}"],
            ["java", "-jar", "b.jar", "h:1", "--key=t"],
        ),
        (["node", "pythonic.js"], ["node", "pythonic.js", "--server", "h:1"]),
    ],
)
def test_bot_argv(argv: list[str], expected: list[str]) -> None:
    assert bot_argv(argv, "h:1", "t") == expected


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["./bot"], ["./bot", "--server", "h:1", "--tls-ca", "/pki/ca.pem",
                     "--tls-cert", "/pki/c.pem", "--tls-key", "/pki/c.key"]),
        (["bridge", "--", "prog"], ["bridge", "--server", "h:1", "--tls-ca", "/pki/ca.pem",
                                    "--tls-cert", "/pki/c.pem", "--tls-key", "/pki/c.key",
                                    "--", "prog"]),
        (["./bot", "--at={server}"], ["./bot", "--at=h:1"]),  # its files: MEDINA_TLS_*
    ],
)  # fmt: skip
def test_bot_argv_over_tls(argv: list[str], expected: list[str]) -> None:
    assert bot_argv(argv, "h:1", "t", TLS) == expected


def test_a_bot_dialling_over_tls_finds_the_files_in_its_environment(tmp_path: Path) -> None:
    code = "import os; print(*(os.environ[f'MEDINA_TLS_{k}'] for k in ('CA', 'CERT', 'KEY')))"

    async def main() -> int:
        proc = await spawn_bot(["python", "-c", code], "h:1", "t", tmp_path / "bot.log", tls=TLS)
        return await proc.wait()

    assert asyncio.run(main()) == 0
    assert (tmp_path / "bot.log").read_text() == "/pki/ca.pem /pki/c.pem /pki/c.key\n"


def test_spawn_runs_the_bot_with_its_log_and_environment(tmp_path: Path) -> None:
    code = "import os, sys; print(sys.argv[1:], os.environ['MEDINA_TOKEN'])"

    async def main() -> int:
        proc = await spawn_bot(["python", "-c", code], "h:1", "tok", tmp_path / "bot.log")
        return await proc.wait()

    assert asyncio.run(main()) == 0
    assert (tmp_path / "bot.log").read_text() == "['--server', 'h:1'] tok\n"  # token: env only


def test_spawn_refuses_an_empty_or_missing_command(tmp_path: Path) -> None:
    with pytest.raises(BotStartError, match="empty bot command"):
        asyncio.run(spawn_bot([], "h:1", "t", tmp_path / "a.log"))
    with pytest.raises(BotStartError, match="cannot start bot '/no/such/bot --fast'"):
        asyncio.run(spawn_bot(["/no/such/bot", "--fast"], "h:1", "t", tmp_path / "b.log"))


def test_stop_and_reap_kill_a_bot_that_does_not_exit(tmp_path: Path) -> None:
    async def main() -> tuple[bool, bool, int | None, int | None]:
        quick = await spawn_bot(["python", "-c", "pass"], "h", "t", tmp_path / "q.log")
        stuck = await spawn_bot(
            ["python", "-c", "import time; time.sleep(60)"], "h", "t", tmp_path / "s.log"
        )
        exited = await stop_bot(quick, 30)
        lingered = await stop_bot(stuck, 0.2)
        other = await spawn_bot(
            ["python", "-c", "import time; time.sleep(60)"], "h", "t", tmp_path / "o.log"
        )
        await reap([other], 0.2)
        return exited, lingered, stuck.returncode, other.returncode

    exited, lingered, stuck_code, other_code = asyncio.run(main())
    assert exited and not lingered
    assert stuck_code is not None and stuck_code < 0  # killed
    assert other_code is not None and other_code < 0
