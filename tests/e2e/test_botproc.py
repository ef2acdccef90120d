"""How ``medina-arena match`` (and check-bot) build a bot's command line for its seat."""

from __future__ import annotations

import sys

from medina.launch.botproc import bot_argv

ADDR = "127.0.0.1:5000"


def test_the_server_is_appended_and_the_token_never_is() -> None:
    # The token travels in MEDINA_TOKEN: a command line is visible to every user in ps.
    argv = bot_argv(["./bot", "--seed", "3"], ADDR, "abc")
    assert argv == ["./bot", "--seed", "3", "--server", ADDR]
    assert "abc" not in argv


def test_they_go_before_a_double_dash_so_a_bridge_gets_them() -> None:
    argv = ["python", "-m", "medina_client", "stdio", "--", "node", "bot.js", "--", "x"]
    assert bot_argv(argv, ADDR, "abc") == [
        sys.executable,
        "-m",
        "medina_client",
        "stdio",
        "--server",
        ADDR,
        "--",
        "node",
        "bot.js",
        "--",
        "x",
    ]


def test_placeholders_are_filled_in_instead() -> None:
    argv = ["bot", "--addr={server}", "{token}", "--"]
    assert bot_argv(argv, ADDR, "abc") == ["bot", f"--addr={ADDR}", "abc", "--"]
