"""``medina-arena ladder backup`` and ``tournament backup``: a checked copy of a live SQLite
database, whole or not at all (storage/backup.py; docs/operations.md, "Backups")."""

from __future__ import annotations

import argparse
from pathlib import Path

from medina.storage.backup import BackupExists, Kind, backup_sqlite, sqlite_path
from medina.storage.database import StoreError

from .errors import CommandError

#: What a match or game in play at the snapshot becomes once the copy is used.
IN_PLAY = {
    "ladder": "aborted, unrated, when a ladder starts on the copy",
    "tournament": "replayed from scratch when the run resumes on the copy",
}


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The backup's path and ``--force``."""
    p.add_argument(
        "backup", metavar="BACKUP", help="the file to write (SQLite; refused if it exists)"
    )
    p.add_argument("--force", action="store_true", help="replace BACKUP if it exists")


def run(db: str, kind: Kind, args: argparse.Namespace) -> int:
    """Back ``db`` up to ``args.backup``; one line saying what the copy holds."""
    if args.backup == "":
        raise CommandError("BACKUP: the path is empty")
    try:
        done = backup_sqlite(sqlite_path(db, kind), Path(args.backup), kind, replace=args.force)
    except BackupExists as exc:
        raise CommandError(f"{exc} (--force replaces it); nothing written") from None
    except StoreError as exc:
        raise CommandError(str(exc)) from None
    note = f"; in play: {IN_PLAY[kind]}" if done.in_play else ""
    print(
        f"backed up {db} to {args.backup} ({done.size} bytes, schema version {done.version}, "
        f"integrity ok): {done.holds}{note}"
    )
    return 0
