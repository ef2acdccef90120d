"""``medina-arena``: serve, match, selfplay, replay, check-bot, tournament, web, ladder and
bots commands."""

from __future__ import annotations

# First: gRPC reads its options from the environment when it is first imported.
from . import grpc_env  # noqa: F401  # isort: skip

import argparse
import logging
import math
import os
import sys
from collections.abc import Sequence

from medina.launch.botproc import BotStartError

from . import (
    checkbot_cmd,
    ladder_cmd,
    match_cmd,
    replay_cmd,
    selfplay_cmd,
    serve_cmd,
    tournament_cmd,
    web_cmd,
)
from .errors import CommandError
from .options import check_ports

LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")


def build_parser() -> argparse.ArgumentParser:
    """The command-line parser."""
    parser = argparse.ArgumentParser(
        prog="medina-arena", description="A gRPC arena for the board game Medina."
    )
    parser.add_argument(
        "--log-level",
        default="WARNING",
        type=str.upper,
        choices=LOG_LEVELS,
        help="logging level: " + ", ".join(LOG_LEVELS) + " (default WARNING)",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    serve_cmd.add_parser(sub)
    match_cmd.add_parser(sub)
    selfplay_cmd.add_parser(sub)
    replay_cmd.add_parser(sub)
    checkbot_cmd.add_parser(sub)
    tournament_cmd.add_parser(sub)
    web_cmd.add_parser(sub)
    ladder_cmd.add_parser(sub)
    _log_level_everywhere(parser)
    return parser


def _log_level_everywhere(parser: argparse.ArgumentParser) -> None:
    """Take ``--log-level`` after any (sub)command too (``serve --log-level INFO``, as the
    docs' examples put options after the command): given there, it overrides the one
    before, whose default stands otherwise."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for command in action.choices.values():
                command.add_argument(
                    "--log-level",
                    default=argparse.SUPPRESS,
                    type=str.upper,
                    choices=LOG_LEVELS,
                    help="logging level: " + ", ".join(LOG_LEVELS) + " (default WARNING)",
                )
                _log_level_everywhere(command)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=getattr(logging, args.log_level),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    try:
        check_ports(args)
        _check_finite(args)
        code: int = args.run(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader of our output went away (`ladder standings | head`): stop quietly, as a
        # command killed by SIGPIPE does, and point stdout at /dev/null so that flushing it
        # at exit does not raise again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return 141
    except (CommandError, BotStartError) as exc:
        print(f"medina-arena {args.command}: {exc}", file=sys.stderr)
        return 2
    return code


def _check_finite(args: argparse.Namespace) -> None:
    """Refuse ``nan`` and ``inf`` for every number option, whatever the command (float()
    takes them: `serve --handshake-timeout-s nan` ended in a traceback, `--grace-s nan` and
    `match --linger-s nan` were taken)."""
    for name, value in vars(args).items():
        if isinstance(value, float) and not math.isfinite(value):
            raise CommandError(f"--{name.replace('_', '-')} {value}: must be a finite number")


__all__ = ["CommandError", "build_parser", "main"]
