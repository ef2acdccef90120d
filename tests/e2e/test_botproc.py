"""How ``medina-arena match`` (and check-bot) build a bot's command line for its seat."""

from __future__ import annotations

import sys

from medina.cli.botproc import bot_argv

ADDR = "127.0.0.1:5000"


def test_server_and_token_are_appended() -> None:
    assert bot_argv(["./bot", "--seed", "3"], ADDR, "abc") == [
        "./bot",
        "--seed",
        "3",
        "--server",
        ADDR,
        "--token",
        "abc",
    ]


def test_they_go_before_a_double_dash_so_a_bridge_gets_them() -> None:
    argv = ["python", "-m", "medina_client", "stdio", "--", "node", "bot.js", "--", "x"]
    assert bot_argv(argv, ADDR, "abc") == [
        sys.executable,
        "-m",
        "medina_client",
        "stdio",
        "--server",
        ADDR,
        "--token",
        "abc",
        "--",
        "node",
        "bot.js",
        "--",
        "x",
    ]


def test_placeholders_are_filled_in_instead() -> None:
    argv = ["bot", "--addr={server}", "{token}", "--"]
    assert bot_argv(argv, ADDR, "abc") == ["bot", f"--addr={ADDR}", "abc", "--"]
