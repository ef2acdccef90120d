"""``medina-arena replay verify|show FILE``, ``replay list [DIR]`` and ``replay prune DIR``:
check a record against the engine, print it, list a records directory, or bound it."""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path
from typing import Any

from medina.records import catalog, prune
from medina.records.errors import RecordReadError
from medina.records.reader import Record, RecordError, read_record
from medina.records.show import show_record
from medina.records.verify import verify_record
from medina.storage.tournaments import StoreError, TournamentStore
from medina.wire.shared.enums import RULESET_NAMES

from .errors import CommandError
from .options import existing_database


def add_parser(sub: Any) -> None:
    """Register ``replay verify`` and ``replay show``."""
    p: argparse.ArgumentParser = sub.add_parser(
        "replay", help="verify, show, list or prune match records"
    )
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
        "list",
        help="every record in a directory: finished, aborted, abandoned, unfinished, unreadable",
        description="One line per record of DIR, oldest first: its state, rule set, "
        "decisions and scores. 'unfinished': the record has no outcome line yet, its match "
        "still being played (by a server writing to DIR) or its server stopped during the "
        "match; it is readable up to its last complete entry. Exit 1 when a record is "
        "unfinished or unreadable (on a running server's directory: also while a match is "
        "played), 0 when every record has its outcome.",
    )
    ls.add_argument(
        "directory", nargs="?", default="records", metavar="DIR", help="default: records"
    )
    ls.set_defaults(run=run_list)
    add_prune_parser(rsub)


def add_prune_parser(rsub: Any) -> None:
    """Register ``replay prune``."""
    pr = rsub.add_parser(
        "prune",
        help="delete old records (and their bot logs) by age or by the directory's size",
        description="Delete finished and aborted records of DIR (its own *.jsonl files, with "
        "their MATCH.seatN[.NAME].log bot logs) older than N days or beyond the newest M MB. Never "
        "deleted: a record without an outcome line (unfinished: a match still being played, "
        "or whose server stopped during it), an unreadable one, or one a --keep-for "
        "tournament database names. A stdio bridge's log under match, check-bot or a tournament "
        "is MATCH.seatN.bot-<name>-<pid>.log and goes with its record; one named "
        "bot-<name>-<pid>.log (a bridge run by hand with --log-dir DIR, or an older arena) "
        "belongs to no one record: it is left and not counted, so --max-mb does not bound "
        "them; delete them by age, e.g. find DIR -maxdepth 1 -name 'bot-*.log' -mtime +30 "
        "-delete.",
    )
    pr.add_argument("directory", metavar="DIR", help="records directory")
    pr.add_argument(
        "--older-than-days",
        type=_non_negative,
        default=None,
        metavar="N",
        help="delete records last written more than N days ago (0: whatever their age)",
    )
    pr.add_argument(
        "--max-mb",
        type=_non_negative,
        default=None,
        metavar="M",
        help="keep the newest records (with their bot logs) within M MB, delete the older "
        "ones (0: keep none)",
    )
    pr.add_argument(
        "--keep-for",
        action="append",
        default=[],
        metavar="DB",
        help="a tournament database (URL or SQLite file) whose stored results' records are "
        "kept; repeatable",
    )
    pr.add_argument(
        "--dry-run", action="store_true", help="list what would be deleted, delete nothing"
    )
    pr.set_defaults(run=run_prune)


def _parse(path: str) -> Record:
    """The record at ``path``; CommandError when there is no file to read, RecordError
    (naming the line) when its content is not a record."""
    if Path(path).is_dir():
        raise CommandError(
            f"{path} is a directory, not a record file (replay list {path} lists its records)"
        )
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
    """One line per record, oldest first; exit 1 if any is unfinished (no outcome line) or
    unreadable."""
    directory = Path(args.directory)
    if directory.exists() and not directory.is_dir():
        raise CommandError(
            f"{directory} is a file, not a records directory (replay verify {directory} "
            "checks one record)"
        )
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
        state = m.state.shown
        line = f"{m.match_id:<18} {state:<11} {what:<15} {decisions:<14}"
        if m.result is not None and m.result.seats:
            line += " scores " + "/".join(f"{s.total}" for s in m.result.seats)
        if m.note and m.state is not catalog.StoredState.FINISHED:
            line += f"  ({m.note})"
        print(line.rstrip())
    trouble = [m for m in found if m.state in _TROUBLE]
    print(f"{len(found)} record(s), {len(trouble)} unfinished or unreadable")
    return 1 if trouble else 0


_TROUBLE = (catalog.StoredState.INTERRUPTED, catalog.StoredState.UNREADABLE)


def _non_negative(text: str) -> float:
    """An argparse type: a finite number, 0 or more (argparse names the option)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"{text}: must be a finite number, 0 or more")
    return value


def _protected_names(databases: list[str]) -> set[str]:
    """The file names of the records every tournament of ``databases`` names in its stored
    results: a record is recognised by its name, wherever the result says it was written
    (as ``tournament verify --records`` finds copied records)."""
    names: set[str] = set()
    for db in databases:
        try:
            store = TournamentStore(existing_database(db, "tournament database (--keep-for)"))
            try:
                found = store.tournaments()
                if not found:
                    raise CommandError(f"--keep-for {db}: no tournament in {store.safe_url}")
                for t in found:
                    names.update(Path(g.record_path).name for g in store.results(t.id))
            finally:
                store.close()
        except StoreError as exc:
            raise CommandError(f"--keep-for {db}: {exc}") from None
    names.discard("")
    return names


def _protection(p: prune.Plan) -> str:
    """How many records the policy would let go are kept because they are protected."""
    named = sum(1 for why in p.protected.values() if why == prune.NAMED)
    return (
        f"{len(p.protected) + len(p.unreadable)} of them because protected "
        f"({len(p.protected) - named} without an outcome line, {named} named by a "
        f"tournament, {len(p.unreadable)} unreadable)"
    )


def _mb(n: int) -> str:
    # a record is 20-40 KB: "0.0 MB" said nothing of one
    return f"{n / 1_000:.1f} KB" if n < 1_000_000 else f"{n / 1_000_000:.1f} MB"


def run_prune(args: argparse.Namespace) -> int:
    """Delete (or with --dry-run list) the records the policy lets go; exit 1 when one of
    them could not be deleted."""
    directory = Path(args.directory)
    if not directory.exists():
        raise CommandError(f"no such records directory: {directory}")
    if not directory.is_dir():
        raise CommandError(f"not a directory: {directory}")
    if args.older_than_days is None and args.max_mb is None:
        raise CommandError("say what to prune: --older-than-days N, --max-mb M, or both")
    policy = prune.Policy.of(args.older_than_days, args.max_mb)
    keep = _protected_names(args.keep_for)
    try:
        p = prune.plan(directory, policy, time.time(), keep)
    except OSError as exc:
        raise CommandError(f"cannot read {directory}: {exc.strerror or exc}") from None
    for name, why in sorted(p.unreadable.items()):
        print(f"{directory / name}: kept, {why}", file=sys.stderr)
    for name in p.skipped:
        print(f"{directory / name}: not a regular file (a symlink?): left alone", file=sys.stderr)
    kept = p.kept + len(p.protected) + len(p.unreadable)
    logs = sum(len(d.record.logs) for d in p.doomed)
    if args.dry_run:
        for d in p.doomed:
            extra = f" + {len(d.record.logs)} bot log(s)" if d.record.logs else ""
            print(
                f"would delete {directory / d.record.name}{extra}: {_mb(d.record.total)}, {d.why}"
            )
        for name, why in sorted(p.protected.items()):
            print(f"would keep {directory / name}: {why}")
        print(
            f"dry run: would delete {len(p.doomed)} record(s) and {logs} bot log(s), "
            f"{_mb(p.freed)} freed; {kept} kept, {_protection(p)}"
        )
        return 0
    done = prune.execute(p)
    for name, why in sorted(done.failed.items()):
        print(f"{directory / name}: not deleted: {why}", file=sys.stderr)
    left = sum(1 for name in done.failed if name.endswith(".jsonl"))
    print(
        f"{directory}: deleted {done.records} record(s) and {done.logs} bot log(s), "
        f"{_mb(done.freed)} freed; {kept + left} kept, {_protection(p)}"
    )
    return 1 if done.failed else 0
