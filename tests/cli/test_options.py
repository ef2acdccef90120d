"""The match options ``match`` and ``selfplay`` share: seats count from 0, as everywhere."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from medina.cli import CommandError, build_parser, main
from medina.cli.options import settings_from_args
from medina.records.reader import read_record


def parse(*argv: str) -> argparse.Namespace:
    return build_parser().parse_args(["selfplay", *argv])


@pytest.mark.parametrize("seat", [0, 1, 2])
def test_start_seat_is_the_seat_number_itself(seat: int) -> None:
    args = parse("--ruleset", "medina-v1", "--players", "3", "--start-seat", str(seat))
    assert settings_from_args(args).start_seat == seat


def test_the_first_seat_starts_by_default() -> None:
    assert settings_from_args(parse("--players", "2")).start_seat == 0


@pytest.mark.parametrize("seat", [-1, 3, 4])
def test_a_start_seat_outside_the_seats_is_refused_by_the_option_name(seat: int) -> None:
    args = parse("--ruleset", "medina-v1", "--players", "3", "--start-seat", str(seat))
    with pytest.raises(CommandError, match=rf"--start-seat .*0\.\.2.* got {seat}$"):
        settings_from_args(args)


def test_a_bad_player_count_is_named_before_the_start_seat() -> None:
    with pytest.raises(CommandError, match="players"):
        settings_from_args(parse("--players", "7", "--start-seat", "9"))


def test_selfplay_starts_with_the_seat_given_and_names_seats_from_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["selfplay", "--ruleset", "medina-v2", "--players", "2", "--start-seat", "1"]
    assert main([*argv, "--seed", "4", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "wins: seat 0 (greedy)" in out and "seat 1 (random)" in out
    (path,) = tmp_path.glob("*.jsonl")
    assert read_record(path).header.config.start_seat == 1


def test_match_names_a_bad_player_count_before_the_bot_commands(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Five --bot commands would not help: no ruleset seats five.
    assert main(["match", "--players", "5", "--bot", "x", "--bot", "y"]) == 2
    err = capsys.readouterr().err
    assert "does not support 5 players: supported counts are 2, 3, 4" in err
    assert "--bot" not in err


ORGANISER_COMMANDS = [
    ["serve"],
    ["match", "--bot", "x", "--bot", "y"],
    ["web", "--records", "r"],
    ["tournament", "run", "cup.toml"],
    ["tournament", "worker", "--db", "w.db"],
    ["ladder", "serve", "--db", "l.db"],
]


@pytest.mark.parametrize("argv", ORGANISER_COMMANDS, ids=lambda a: " ".join(a[:2]))
def test_an_empty_organiser_token_is_refused_not_taken_for_none(
    argv: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # `--organiser-token "$MEDINA_ORGANISER_TOKEN"` with the variable unset: a token was meant.
    monkeypatch.delenv("MEDINA_ORGANISER_TOKEN", raising=False)
    with pytest.raises(SystemExit) as given:
        main([*argv, "--organiser-token", ""])
    assert given.value.code == 2
    assert "the organiser token is empty" in capsys.readouterr().err
    # The variable set to nothing is the same mistake; left out, there is no token.
    monkeypatch.setenv("MEDINA_ORGANISER_TOKEN", "")
    with pytest.raises(SystemExit) as from_env:
        main(argv)
    assert from_env.value.code == 2
    assert "MEDINA_ORGANISER_TOKEN set to nothing" in capsys.readouterr().err
    monkeypatch.delenv("MEDINA_ORGANISER_TOKEN")
    assert build_parser().parse_args(argv).organiser_token is None


@pytest.mark.parametrize(
    ("argv", "level"),
    [
        (["serve"], "WARNING"),
        (["--log-level", "INFO", "serve"], "INFO"),
        (["serve", "--log-level", "info"], "INFO"),  # after the command, as the docs put it
        (["--log-level", "ERROR", "serve", "--log-level", "DEBUG"], "DEBUG"),
        (["tournament", "run", "--log-level", "INFO", "cup.toml"], "INFO"),
        (["check-bot", "--", "bot", "--log-level", "DEBUG"], "WARNING"),  # the bot's own
    ],
)
def test_log_level_is_taken_before_or_after_the_command(argv: list[str], level: str) -> None:
    assert build_parser().parse_args(argv).log_level == level


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["serve", "--handshake-timeout-s", "nan"], "--handshake-timeout-s nan: must be a finite"),
        (["serve", "--grace-s", "inf"], "--grace-s inf: must be a finite number"),
        (["serve", "--grace-s", "-1"], "--grace-s -1: must be 0 or more"),
        (["match", "--linger-s", "nan", "--players", "2"], "--linger-s nan: must be a finite"),
        (["ladder", "standings", "--follow", "nan"], "--follow nan: must be a finite number"),
    ],
)
def test_a_number_option_refuses_nan_inf_and_a_negative_grace(
    argv: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # `serve --handshake-timeout-s nan` ended in a traceback; `--grace-s nan`, `--grace-s -1`
    # and `match --linger-s nan` were taken.
    assert main(argv) == 2
    assert said in capsys.readouterr().err
