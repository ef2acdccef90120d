"""``medina-arena replay verify|show FILE`` and ``replay list [DIR]``: check a record against
the engine, print it, or list a records directory."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from medina.records import catalog
from medina.records.errors import RecordReadError
from medina.records.reader import Record, RecordError, read_record
from medina.records.show import show_record
from medina.records.verify import verify_record
from medina.wire.shared.enums import RULESET_NAMES

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
    s.add_argument(
        "--at",
        type=int,
        default=None,
        metavar="N",
        help="only the board at step N, numbered as the viewer's replay page: after N "
        "decisions (0: the start)",
    )
    s.set_defaults(run=run_show)
    ls = rsub.add_parser(
        "list", help="every record in a directory: finished, aborted, interrupted, unreadable"
    )
    ls.add_argument("directory", nargs="?", default="records", help="default: records")
    ls.set_defaults(run=run_list)


def _parse(path: str) -> Record:
    """The record at ``path``; CommandError when there is no file to read, RecordError
    (naming the line) when its content is not a record."""
    if not Path(path).is_file():
        raise CommandError(f"no such record file: {path}")
    try:
        return read_record(Path(path), allow_truncated=True)
    except RecordReadError as exc:
        raise CommandError(str(exc)) from None


def _read(path: str) -> Record:
    try:
        return _parse(path)
    except RecordError as exc:
        raise CommandError(str(exc)) from None


def run_verify(args: argparse.Namespace) -> int:
    """Exit 0 if the record replays exactly, 1 naming the first bad entry otherwise (a line
    that is not a record's, as much as an illegal decision); 2 when there is no file."""
    try:
        record = _parse(args.file)
    except RecordError as exc:
        why = str(exc).removeprefix(f"{args.file} ").removeprefix(f"{args.file}: ")
        print(f"{args.file}: INVALID: {why}")
        return 1
    report = verify_record(record)
    print(report.summary())
    return 0 if report.ok else 1


def run_show(args: argparse.Namespace) -> int:
    """Print the record's boards."""
    try:
        print(show_record(_read(args.file), at=args.at))
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    return 0


def run_list(args: argparse.Namespace) -> int:
    """One line per record, oldest first; exit 1 if any is interrupted or unreadable."""
    directory = Path(args.directory)
    if not directory.is_dir():
        raise CommandError(f"no such records directory: {directory}")
    found = catalog.scan(directory)
    if not found:
        print(f"{directory}: no records")
        return 0
    for m in found:
        config = m.config
        what = f"{config.players}p" if config is not None else "?"
        if config is not None and m.header is not None:
            what = f"{RULESET_NAMES.get(config.ruleset, '?')} {what}"
        decisions = f"{m.decisions} decisions" if m.decisions >= 0 else ""
        line = f"{m.match_id:<18} {m.state.value:<11} {what:<15} {decisions:<14}"
        if m.result is not None and m.result.seats:
            line += " scores " + "/".join(f"{s.total}" for s in m.result.seats)
        if m.note and m.state is not catalog.StoredState.FINISHED:
            line += f"  ({m.note})"
        print(line.rstrip())
    trouble = [m for m in found if m.state in _TROUBLE]
    print(f"{len(found)} record(s), {len(trouble)} interrupted or unreadable")
    return 1 if trouble else 0


_TROUBLE = (catalog.StoredState.INTERRUPTED, catalog.StoredState.UNREADABLE)
