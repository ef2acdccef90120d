"""What ``medina-arena match --help`` and ``check-bot --help`` say a bot's command gets
matches what ``launch.botproc`` does with it."""

from __future__ import annotations

from pathlib import Path

import pytest
from medina.cli import main
from medina.launch.botproc import bot_argv


def help_text(command: str, capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exited:
        main([command, "--help"])
    assert exited.value.code == 0
    return " ".join(capsys.readouterr().out.split())  # argparse's line breaks undone


@pytest.mark.parametrize("command", ["match", "check-bot"])
def test_the_help_puts_the_token_in_the_environment_not_on_the_command_line(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = bot_argv(["./bot"], "127.0.0.1:5000", "secret")
    assert "--token" not in argv and "secret" not in argv  # what the code does
    text = help_text(command, capsys)
    assert "--token" not in text and "{token}" not in text
    assert "--server HOST:PORT appended" in text and "{server}" in text
    assert "MEDINA_TOKEN" in text


def test_the_check_bot_guide_tells_authors_to_read_the_token_from_the_environment() -> None:
    guide = (Path(__file__).resolve().parents[2] / "docs" / "check-bot.md").read_text()
    assert "`--token`" not in guide and "`MEDINA_TOKEN`" in guide
