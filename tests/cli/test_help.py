"""What ``medina-arena match --help`` and ``check-bot --help`` say a bot's command gets
matches what ``launch.botproc`` does with it, and every command's help names only what it has."""

from __future__ import annotations

import argparse
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from medina.cli import build_parser, main
from medina.launch.botproc import bot_argv
from medina.sandbox import SandboxLimits
from medina.sandbox.limits import BOUNDS
from medina.storage.backup import STAMP, stamped


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


def leaf_parsers(
    parser: argparse.ArgumentParser, name: str = "medina-arena"
) -> list[tuple[str, argparse.ArgumentParser]]:
    """Every command's parser, by its full name (``medina-arena tournament run``)."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        return [(name, parser)]
    choices: dict[str, argparse.ArgumentParser] = subs[0].choices
    return [leaf for sub, p in choices.items() for leaf in leaf_parsers(p, f"{name} {sub}")]


def test_a_commands_help_names_only_options_it_has() -> None:
    # `match --help` once said its viewer listened on "--host" by default: match has no --host.
    wrong = []
    for name, parser in leaf_parsers(build_parser()):
        own = {o for a in parser._actions for o in a.option_strings}
        described = parser.format_help().split("options:", 1)[1]  # past the usage
        named = set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", described))
        wrong += [f"{name}: {option}" for option in sorted(named - own)]
    assert wrong == []


@pytest.mark.parametrize(
    ("command", "starts_bots"),
    [(["match"], True), (["tournament", "run"], True), (["tournament", "worker"], True),
     (["web"], False)],
)  # fmt: skip
def test_only_commands_that_start_bots_say_their_bots_get_the_tls_files(
    command: list[str], starts_bots: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main([*command, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "dial --server over TLS" in text
    assert ("the bots started get them too" in text) is starts_bots


def test_every_option_and_argument_of_every_command_has_help() -> None:
    # `tournament worker --help` once listed --concurrency and --lease-s bare.
    bare = [
        f"{name}: {a.option_strings or a.dest}"
        for name, parser in leaf_parsers(build_parser())
        for a in parser._actions
        if a.help is None
    ]
    assert bare == []


def expanded_help(parser: argparse.ArgumentParser, option: str) -> str:
    """One option's help as ``--help`` prints it (``%(default)s`` filled in)."""
    action = next(a for a in parser._actions if option in a.option_strings)
    assert action.help is not None
    return " ".join(parser._get_formatter()._expand_help(action).split())


@pytest.mark.parametrize(
    ("command", "options"),
    [
        ("medina-arena serve", ["--host", "--port", "--records", "--grace-s"]),
        ("medina-arena ladder serve", ["--host", "--port", "--records", "--arena-port"]),
        (
            "medina-arena match",
            ["--ruleset", "--players", "--seed", "--start-seat", "--decision-ms", "--bank-ms",
             "--increment-ms", "--first-extra-ms", "--grace-ms", "--on-timeout", "--max-strikes",
             "--max-rejections", "--reconnect-grace-ms", "--connect-timeout-ms"],
        ),
        ("medina-arena tournament run", ["--concurrency", "--lease-s"]),
        ("medina-arena tournament create", ["--concurrency"]),
        ("medina-arena tournament worker", ["--concurrency", "--lease-s", "--poll-s"]),
        (
            "medina-arena check-bot",
            ["--seed", "--decision-ms", "--tight-ms", "--first-extra-ms", "--reconnect-s",
             "--exit-s", "--connect-s"],
        ),
    ],
)  # fmt: skip
def test_an_options_help_names_the_default_the_parser_uses(
    command: str, options: list[str]
) -> None:
    parser = dict(leaf_parsers(build_parser()))[command]
    for option in options:
        default = parser.get_default(option.removeprefix("--").replace("-", "_"))
        shown = f"{default:g}" if isinstance(default, float) else str(default)
        text = expanded_help(parser, option)
        # "--concurrency": the cores, at most 4, and how many that is here
        assert f"default {shown}" in text or f"{shown} here" in text, (option, text)


@pytest.mark.parametrize(
    ("command", "from_file"),
    [("match", False), ("check-bot", False), ("tournament run", True),
     ("tournament create", True)],
)  # fmt: skip
def test_the_sandbox_help_says_which_limits_apply(command: str, from_file: bool) -> None:
    parser = dict(leaf_parsers(build_parser()))[f"medina-arena {command}"]
    # only a tournament has a file whose [sandbox] limits the options change
    assert ("the file" in expanded_help(parser, "--sandbox")) is from_file
    for key, (_least, _most, unit) in BOUNDS.items():
        text = expanded_help(parser, f"--sandbox-{key.replace('_', '-')}")
        assert f"{unit} in {unit}" not in text  # once read "cores in cores"
        assert f"(default {getattr(SandboxLimits(), key)})" in text


@pytest.mark.parametrize(
    ("command", "db"), [("ladder", "ladder.db"), ("tournament", "tournament.db")]
)
def test_the_backup_help_names_a_backup_as_the_command_writes_it(
    command: str, db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # `tournament backup --help` once showed a ladder's backup name
    with pytest.raises(SystemExit):
        main([command, "backup", "--help"])
    example = re.search(r"\(([\w.-]+\.db)\)", " ".join(capsys.readouterr().out.split()))
    assert example is not None
    when = example[1].removeprefix(Path(db).stem + "-").removesuffix(".db")
    at = datetime.strptime(when, STAMP).replace(tzinfo=UTC)
    assert example[1] == stamped(Path(), Path(db), at).name
