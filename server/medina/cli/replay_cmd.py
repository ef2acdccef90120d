"""``medina-arena replay verify|show FILE``: check a record against the engine, or print it."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from medina.records.reader import RecordError, read_record
from medina.records.show import show_record
from medina.records.verify import verify_record

from .errors import CommandError


def add_parser(sub: Any) -> None:
    """Register ``replay verify`` and ``replay show``."""
    p: argparse.ArgumentParser = sub.add_parser("replay", help="verify or show a match record")
    rsub = p.add_subparsers(dest="replay_command", required=True)
    v = rsub.add_parser("verify", help="re-run a record through the engine and check it")
    v.add_argument("file", help="record file (.jsonl)")
    v.set_defaults(run=run_verify)
    s = rsub.add_parser("show", help="print the board after each turn")
    s.add_argument("file", help="record file (.jsonl)")
    s.add_argument("--at", type=int, default=None, help="only the board after decision N")
    s.set_defaults(run=run_show)


def _read(path: str) -> Any:
    if not Path(path).is_file():
        raise CommandError(f"no such record file: {path}")
    try:
        return read_record(Path(path), allow_truncated=True)
    except RecordError as exc:
        raise CommandError(f"{path}: {exc}") from None


def run_verify(args: argparse.Namespace) -> int:
    """Exit 0 if the record replays exactly, 1 naming the first bad entry otherwise."""
    report = verify_record(_read(args.file))
    print(report.summary())
    return 0 if report.ok else 1


def run_show(args: argparse.Namespace) -> int:
    """Print the record's boards."""
    try:
        print(show_record(_read(args.file), at=args.at))
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    return 0
