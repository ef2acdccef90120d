"""``medina-arena ladder backup`` and ``tournament backup``: a checked copy of a live SQLite
database, whole or not at all, to a file or, timestamped, into a directory that keeps the
newest ``--keep`` (storage/backup.py; docs/operations.md, "Backups")."""

from __future__ import annotations

import argparse
import os
import sys
from datetime import UTC, datetime
from pathlib import Path

from medina.storage.backup import (
    BackupExists,
    Kind,
    backup_sqlite,
    prune_backups,
    sqlite_path,
    stamped,
)
from medina.storage.database import StoreError

from .errors import CommandError

#: What a match or game in play at the snapshot becomes once the copy is used.
IN_PLAY = {
    "ladder": "aborted, unrated, when a ladder starts on the copy",
    "tournament": "replayed from scratch when the run resumes on the copy",
}


def _keep(text: str) -> int:
    """``--keep``: how many backups a directory keeps, at least 1 (a backup deleted as soon
    as it is written is none)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: keep at least 1 backup (the one just written)")
    return value


#: When the example backup name of ``--help`` was taken.
_EXAMPLE_AT = datetime(2026, 11, 29, 3, 15, tzinfo=UTC)


def add_arguments(p: argparse.ArgumentParser, default_db: str) -> None:
    """The backup's path, ``--force`` and ``--keep``; ``default_db``: the command's usual
    database file, whose backup's name the help shows as the example."""
    example = stamped(Path(), Path(default_db), _EXAMPLE_AT).name
    p.add_argument(
        "backup",
        metavar="BACKUP",
        help="the file to write (SQLite; refused if it exists), or a directory to write a "
        f"new backup in, named for the database and the time ({example})",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="replace the file BACKUP if it exists (not with "
        "a directory: a backup in it is always a new file)",
    )
    p.add_argument(
        "--keep",
        type=_keep,
        metavar="N",
        help="with a directory: then delete its oldest backups of this database so that N "
        "remain (only files named as this command names them)",
    )


def run(db: str, kind: Kind, args: argparse.Namespace) -> int:
    """Back ``db`` up to ``args.backup``; one line saying what the copy holds, one saying
    which older backups ``--keep`` deleted (exit 1 if one could not be)."""
    if args.backup == "":
        raise CommandError("BACKUP: the path is empty")
    target = Path(args.backup)
    into = target.is_dir()
    if not into and args.backup.endswith(("/", os.sep)):  # meant as a directory: no file
        raise CommandError(f"no directory {args.backup} to write the backup in")
    if args.force and into:  # a backup in a directory is a new file, never a replacement
        raise CommandError(
            f"--force: {args.backup} is a directory, and a backup written in it never "
            "replaces one; nothing written"
        )
    if args.keep is not None and not into:
        raise CommandError(
            f"--keep {args.keep}: BACKUP must be a directory to keep backups in, and "
            f"{args.backup} is not; nothing written"
        )
    try:
        source = sqlite_path(db, kind)
        dest = stamped(target, source, datetime.now(UTC)) if into else target
        done = backup_sqlite(source, dest, kind, replace=args.force)
    except BackupExists as exc:
        if into:  # a backup taken this second already: the next second's name is free
            raise CommandError(f"{exc}: one backup a second; nothing written") from None
        raise CommandError(f"{exc} (--force replaces it); nothing written") from None
    except StoreError as exc:
        raise CommandError(str(exc)) from None
    note = f"; in play: {IN_PLAY[kind]}" if done.in_play else ""
    print(
        f"backed up {db} to {dest} ({done.size} bytes, schema version {done.version}, "
        f"integrity ok): {done.holds}{note}"
    )
    if args.keep is None:
        return 0
    pruned = prune_backups(target, source, kind, args.keep)
    if pruned.deleted:
        names = ", ".join(p.name for p in pruned.deleted)
        count = len(pruned.deleted)
        print(f"deleted {count} older backup(s) in {target} (--keep {args.keep}): {names}")
    for path, why in pruned.failed:
        print(f"could not delete the older backup {path}: {why}", file=sys.stderr)
    return 1 if pruned.failed else 0
