"""``medina-arena check-bot -- COMMAND ARGS...``: play a bot through the conformance checks."""

from __future__ import annotations

import argparse
import asyncio
import shlex
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from medina.checkbot import (
    CHECKS,
    DESCRIPTIONS,
    CheckOptions,
    CheckResult,
    PositionNotFoundError,
    Report,
    check_bot,
    result_line,
)
from medina.launch.botproc import BotProcess, spawn_bot
from medina.sandbox import SandboxSpec

from .errors import CommandError
from .options import add_sandbox_options, sandbox_limits

_D = CheckOptions()


def add_parser(sub: Any) -> None:
    """Register the command."""
    p: argparse.ArgumentParser = sub.add_parser(
        "check-bot",
        help="play a gRPC bot through scripted situations and report what it got wrong",
        description="Start a private arena, play the bot command through every check "
        "(one bot process per check; it gets --server HOST:PORT appended, or {server} in "
        "its arguments filled in, and the seat token in the environment variable "
        "MEDINA_TOKEN) and report PASS or FAIL per check. "
        "Exit status: 0 all passed, 1 a check failed, 2 bad usage. See docs/check-bot.md.",
    )
    p.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="NAME",
        help="run this check only (repeatable; --list names them)",
    )
    p.add_argument("--list", action="store_true", help="list the checks and exit")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument(
        "--records",
        metavar="DIR",
        help="keep records and bot logs here (default: a temporary directory, "
        "deleted when every check passes)",
    )
    p.add_argument(
        "--seed",
        type=int,
        default=_D.seed,
        help="seed of the scripted positions (default %(default)s)",
    )
    p.add_argument(
        "--decision-ms",
        type=int,
        default=_D.decision_ms,
        help="time per decision (default %(default)s)",
    )
    p.add_argument(
        "--tight-ms",
        type=int,
        default=_D.tight_ms,
        help="time per decision in tight-clock (default %(default)s)",
    )
    p.add_argument(
        "--first-extra-ms",
        type=int,
        default=_D.first_extra_ms,
        help="extra time for the bot's first decision of each match (default %(default)s)",
    )
    p.add_argument(
        "--reconnect-s",
        type=float,
        default=_D.reconnect_s,
        help="seconds to reconnect after the kit drops the stream (default %(default)g)",
    )
    p.add_argument(
        "--exit-s",
        type=float,
        default=_D.exit_s,
        help="seconds to exit after MatchEnded (default %(default)g)",
    )
    p.add_argument(
        "--connect-s",
        type=float,
        default=_D.connect_s,
        help="seconds to connect after starting (default %(default)g)",
    )
    p.add_argument(
        "bot_command",  # not "command": that is the subcommand's name
        nargs=argparse.REMAINDER,
        metavar="-- COMMAND ARGS",
        help="the bot command; a leading 'python' means this interpreter",
    )
    add_sandbox_options(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run the checks; 0 when all passed, 1 otherwise."""
    if args.list:
        for name in CHECKS:
            print(f"{name:<22} {DESCRIPTIONS[name]}")
        return 0
    command = list(args.bot_command)
    if command[:1] == ["--"]:
        command = command[1:]
    if not command:
        raise CommandError("no bot command: put it after --, e.g. -- python -m medina_client")
    options = _options(args)
    limits = sandbox_limits(args)
    if args.records:
        records, temporary = Path(args.records), False
    else:
        records, temporary = Path(tempfile.mkdtemp(prefix="medina-check-bot-")), True
    try:
        records.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CommandError(f"cannot use --records {args.records}: {exc.strerror}") from None
    started = time.monotonic()
    if not args.json:
        print(f"check-bot: {shlex.join(command)}", flush=True)
    try:
        sandbox = SandboxSpec(limits, Path.cwd(), hide=(records,)) if limits else None
        results = asyncio.run(_check(command, options, records, quiet=args.json, sandbox=sandbox))
    except BaseException as exc:
        if temporary:
            shutil.rmtree(records, ignore_errors=True)
        if isinstance(exc, PositionNotFoundError):  # a seed the kit's search cannot serve
            raise CommandError(f"{exc}; try another --seed") from None
        raise
    passed = all(r.passed for r in results)
    keep = not (temporary and passed)
    report = Report(
        tuple(command), tuple(results), time.monotonic() - started, str(records) if keep else None
    )
    if not keep:
        shutil.rmtree(records, ignore_errors=True)
    print(report.to_json() if args.json else report.summary())
    return 0 if report.passed else 1


def _options(args: argparse.Namespace) -> CheckOptions:
    try:
        return CheckOptions(
            seed=args.seed,
            decision_ms=args.decision_ms,
            tight_ms=args.tight_ms,
            first_extra_ms=args.first_extra_ms,
            reconnect_s=args.reconnect_s,
            exit_s=args.exit_s,
            connect_s=args.connect_s,
            only=tuple(args.only),
        )
    except ValueError as exc:
        raise CommandError(str(exc)) from None


async def _check(
    command: list[str],
    options: CheckOptions,
    records: Path,
    *,
    quiet: bool,
    sandbox: SandboxSpec | None = None,
) -> list[CheckResult]:
    async def launch(address: str, token: str, log: Path) -> BotProcess:
        return await spawn_bot(command, address, token, log, sandbox=sandbox)

    def show(result: CheckResult) -> None:
        if not quiet:
            print(result_line(result), flush=True)
            if not result.passed and result.log:
                print(f"{'':30}log: {result.log}", flush=True)

    return await check_bot(launch, options, records, on_result=show)
