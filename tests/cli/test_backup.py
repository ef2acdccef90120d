"""``ladder backup`` and ``tournament backup`` refuse every bad input with one line naming it
(exit 2) and write nothing; an existing backup is replaced only when told; a damaged
database is not copied as if whole."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import sqlite3
import subprocess
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from ladder.test_store import add
from medina.cli import main
from medina.storage import schema
from medina.storage.backup import stamped
from medina.storage.ladder import LadderStore
from tournament.cups import cup_file

Make = Callable[[Path], str]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def ladder_db(d: Path) -> str:
    db = str(d / "ladder.db")
    assert main(["bots", "add", "alpha", "--db", db]) == 0
    return db


def tournament_db(d: Path) -> str:
    db = str(d / "cup.db")
    assert main(["tournament", "create", str(cup_file(d)), "--db", db]) == 0
    return db


def listing(d: Path) -> list[str]:
    return sorted(str(p.relative_to(d)) for p in d.rglob("*"))


def backups(d: Path) -> Path:
    """A directory to back up into."""
    made = d / "backups"
    made.mkdir()
    return made


def lasting(d: Path) -> list[str]:
    """``listing`` without SQLite's -wal and -shm, which come and go with its connections."""
    return [p for p in listing(d) if not p.endswith(("-wal", "-shm"))]


def unwritable(d: Path) -> Path:
    """A directory this process cannot create a file in (root ignores permission bits)."""
    if os.geteuid() == 0:
        return Path("/sys")
    made = d / "locked"
    made.mkdir(mode=0o555)
    return made


def test_a_backup_is_written_checked_and_replaced_only_when_told(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = ladder_db(tmp_path)
    capsys.readouterr()
    out = tmp_path / "copy.db"
    code, said, err = run(capsys, "ladder", "backup", str(out), "--db", db)
    assert code == 0 and err == ""
    assert said == (
        f"backed up {db} to {out} ({out.stat().st_size} bytes, schema version "
        f"{schema.LATEST}, integrity ok): 1 bot, 0 rating lines, 0 matches (0 in play)\n"
    )
    with sqlite3.connect(out) as conn:  # one file: not in WAL mode, so no -wal is needed
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("delete",)
        assert conn.execute("SELECT name FROM ladder_bots").fetchall() == [("alpha",)]
    assert main(["bots", "add", "beta", "--db", db]) == 0
    capsys.readouterr()
    code, _, err = run(capsys, "ladder", "backup", str(out), "--db", db)
    assert (code, err) == (2, f"medina-arena ladder: {out} exists (--force replaces it); "
                              "nothing written\n")  # fmt: skip
    code, said, _ = run(capsys, "ladder", "backup", str(out), "--db", db, "--force")
    assert code == 0 and "2 bots" in said
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("copy")) == ["copy.db"]


def test_a_tournament_backup_finds_the_database_as_the_other_commands_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    cup_file(tmp_path)
    assert main(["tournament", "create", "cup.toml"]) == 0  # tournaments/cup/tournament.db
    capsys.readouterr()
    code, said, err = run(capsys, "tournament", "backup", "cup.toml", "cup-copy.db")
    assert code == 0, err
    assert said.startswith("backed up tournaments/cup/tournament.db to cup-copy.db (")
    assert said.endswith("integrity ok): 1 tournament (cup), 0 of 8 games done (0 in play)\n")
    code, said, err = run(capsys, "tournament", "backup", "again.db", "--out", "tournaments/cup")
    assert code == 0 and (tmp_path / "again.db").is_file(), err


def not_sqlite(d: Path) -> str:
    (d / "notes.db").write_text("not a database\n")
    return str(d / "notes.db")


def foreign_sqlite(d: Path) -> str:
    with sqlite3.connect(d / "other.db") as conn:
        conn.execute("CREATE TABLE t (x)")
    return str(d / "other.db")


def newer(d: Path) -> str:
    db = ladder_db(d)
    with sqlite3.connect(db) as conn:
        conn.execute("INSERT INTO schema_version VALUES (?, 0)", (schema.LATEST + 1,))
    return db


# (what, command, the database, the backup path (given the directory), the error)
BAD: list[tuple[str, str, Make, Callable[[Path], str], str]] = [
    ("missing database", "ladder", lambda d: str(d / "nope.db"), lambda d: str(d / "b.db"),
     "no ladder database at {d}/nope.db"),
    ("missing database", "tournament", lambda d: str(d / "nope.db"), lambda d: str(d / "b.db"),
     "no tournament database at {d}/nope.db"),
    ("a directory", "ladder", lambda d: str(d), lambda d: str(d / "b.db"),
     "{d} is a directory, not a ladder database"),
    ("not SQLite", "ladder", not_sqlite, lambda d: str(d / "b.db"),
     "{d}/notes.db is not an SQLite database (file is not a database)"),
    ("SQLite, not ours", "tournament", foreign_sqlite, lambda d: str(d / "b.db"),
     "{d}/other.db is an SQLite database but not a medina-arena one (no schema_version)"),
    ("a tournament's database", "ladder", tournament_db, lambda d: str(d / "b.db"),
     "{d}/cup.db holds tournaments (cup), not a ladder: `medina-arena tournament backup` "
     "copies it"),
    ("a ladder's database", "tournament", ladder_db, lambda d: str(d / "b.db"),
     "{d}/ladder.db holds a ladder (1 bot), not a tournament: `medina-arena ladder backup` "
     "copies it"),
    ("a newer schema", "ladder", newer, lambda d: str(d / "b.db"),
     f"{{d}}/ladder.db is at schema version {schema.LATEST + 1}, newer than this "
     f"medina-arena knows ({schema.LATEST}): back it up with the medina-arena that uses it"),
    ("the database itself", "ladder", ladder_db, lambda d: str(d / "ladder.db"),
     "{d}/ladder.db is the database itself: name another file for the backup"),
    ("the database by another path", "ladder", ladder_db, lambda d: f"{d}/x/../ladder.db",
     "{d}/x/../ladder.db is the database itself: name another file for the backup"),
    ("its write-ahead log", "ladder", ladder_db, lambda d: str(d / "ladder.db-wal"),
     "{d}/ladder.db-wal is one of the database's own files: name another file"),
    ("no such directory", "ladder", ladder_db, lambda d: str(d / "nodir" / "b.db"),
     "no directory {d}/nodir to write the backup b.db in"),
    ("a directory that does not exist", "ladder", ladder_db, lambda d: f"{d}/nodir/",
     "no directory {d}/nodir/ to write the backup in"),
    ("--force with a directory", "ladder", ladder_db, lambda d: f"{d} --force",
     "--force: {d} is a directory, and a backup written in it never replaces one; "
     "nothing written"),
    ("--keep with a file", "ladder", ladder_db, lambda d: f"{d}/b.db --keep 3",
     "--keep 3: BACKUP must be a directory to keep backups in, and {d}/b.db is not; "
     "nothing written"),
    ("an empty path", "ladder", ladder_db, lambda d: "", "BACKUP: the path is empty"),
    ("PostgreSQL", "ladder", lambda d: "postgresql://arena:s3cret@db.example/medina",
     lambda d: str(d / "b.db"),
     "postgresql://arena:***@db.example/medina is a PostgreSQL database: back it up with "
     "pg_dump, e.g. pg_dump --format=custom --file=BACKUP.dump "
     "'postgresql://arena:***@db.example/medina' (docs/operations.md, \"Backups\")"),
]  # fmt: skip


@pytest.mark.parametrize(("what", "group", "make", "dest", "error"), BAD, ids=[b[0] for b in BAD])
def test_bad_inputs_are_named_and_nothing_is_written(
    what: str,
    group: str,
    make: Make,
    dest: Callable[[Path], str],
    error: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / "x").mkdir()
    db = make(tmp_path)
    capsys.readouterr()
    before = lasting(tmp_path)
    code, said, err = run(capsys, group, "backup", *dest(tmp_path).split(" "), "--db", db)
    assert (code, said) == (2, "")
    assert err == f"medina-arena {group}: {error.format(d=tmp_path)}\n"
    assert lasting(tmp_path) == before


def test_an_unwritable_directory_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = ladder_db(tmp_path)
    capsys.readouterr()
    where = unwritable(tmp_path)
    code, said, err = run(capsys, "ladder", "backup", str(where / "b.db"), "--db", db)
    assert (code, said) == (2, "")
    assert err.startswith(f"medina-arena ladder: cannot write in {where}: ")
    assert err.count("\n") == 1 and not (where / "b.db").exists()


@pytest.mark.parametrize(
    ("existing", "error"),
    [
        (b"my notes\n", "is not an SQLite database: not replacing it with a backup"),
        (None, "is not a regular file: not replacing it with a backup"),
    ],
)
def test_force_replaces_only_a_file_that_is_a_database(
    existing: bytes | None, error: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = ladder_db(tmp_path)
    capsys.readouterr()
    dest = tmp_path / "b.db"
    if existing is None:
        os.mkfifo(dest)
    else:
        dest.write_bytes(existing)
    code, _, err = run(capsys, "ladder", "backup", str(dest), "--db", db, "--force")
    assert (code, err) == (2, f"medina-arena ladder: {dest} {error}\n")
    if existing is not None:
        assert dest.read_bytes() == existing


def test_a_damaged_database_is_not_copied_as_if_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = ladder_db(tmp_path)
    with sqlite3.connect(db, isolation_level=None) as conn:
        # Two indexes whose pages are swapped: every page readable, the contents wrong.
        conn.executescript(
            "CREATE TABLE x (a); CREATE INDEX xi ON x (a); CREATE TABLE y (a); "
            "CREATE INDEX yi ON y (a); INSERT INTO x VALUES (1), (2); INSERT INTO y VALUES (3);"
        )
        pages = dict(conn.execute("SELECT name, rootpage FROM sqlite_master WHERE type='index'"))
        conn.execute("PRAGMA writable_schema=ON")
        conn.execute("UPDATE sqlite_master SET rootpage=? WHERE name='xi'", (pages["yi"],))
        conn.execute("UPDATE sqlite_master SET rootpage=? WHERE name='yi'", (pages["xi"],))
    capsys.readouterr()
    dest = tmp_path / "b.db"
    code, _, err = run(capsys, "ladder", "backup", str(dest), "--db", db)
    assert code == 2 and err.count("\n") == 1
    assert "fails SQLite's integrity check (5 problem(s), the first: row 1 missing from " in err
    assert err.endswith(f"the database itself is damaged; {dest} was not written\n")
    assert not dest.exists() and not [p for p in tmp_path.iterdir() if p.suffix == ".part"]


def test_the_backup_holds_what_is_still_in_the_write_ahead_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = ladder_db(tmp_path)
    with contextlib.closing(sqlite3.connect(db)) as conn:  # alpha in the file itself
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    live = LadderStore(db)  # open, as a running ladder's is: its writes wait in ladder.db-wal
    add(live, "beta")
    assert Path(f"{db}-wal").stat().st_size > 0
    shutil.copy(db, tmp_path / "cp.db")  # what an operator's cp would have kept
    code, _, err = run(capsys, "ladder", "backup", str(tmp_path / "b.db"), "--db", db)
    assert code == 0, err
    names = "SELECT name FROM ladder_bots ORDER BY name"
    with contextlib.closing(sqlite3.connect(tmp_path / "cp.db")) as conn:
        assert conn.execute(names).fetchall() == [("alpha",)]
    with contextlib.closing(sqlite3.connect(tmp_path / "b.db")) as conn:
        assert conn.execute(names).fetchall() == [("alpha",), ("beta",)]
    live.engine.dispose()


def test_a_directory_gets_a_timestamped_backup_and_keeps_the_newest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db, out = ladder_db(tmp_path), backups(tmp_path)
    capsys.readouterr()
    code, said, err = run(capsys, "ladder", "backup", str(out), "--db", db)
    assert code == 0 and err == ""
    (first,) = out.iterdir()
    assert re.fullmatch(r"ladder-\d{8}T\d{6}Z\.db", first.name), first.name
    assert said.startswith(f"backed up {db} to {first} (")
    # Older backups of this database, and what rotation must never touch: another
    # database's backup, files named like a backup that are not SQLite or not a ladder's,
    # a link, notes.
    first = first.rename(out / "ladder-20200104T000000Z.db")  # a second later, with no wait
    older = [out / f"ladder-2020010{i}T000000Z.db" for i in (1, 2, 3)]
    for path in older:
        shutil.copy(first, path)
    cup = tmp_path / "cup-copy.db"
    assert main(["tournament", "backup", str(cup), "--db", tournament_db(tmp_path)]) == 0
    foreign = {
        "cup-20200101T000000Z.db": first.read_bytes(),
        "ladder-20190101T000000Z.db": b"not a database\n",
        "ladder-20190102T000000Z.db": cup.read_bytes(),
        "ladder-20190101T000000Z.db.bak": first.read_bytes(),
        "notes.txt": b"keep me\n",
    }
    for name, data in foreign.items():
        (out / name).write_bytes(data)
    (out / "ladder-20180101T000000Z.db").symlink_to(older[0])
    capsys.readouterr()
    code, said, err = run(capsys, "ladder", "backup", str(out), "--db", db, "--keep", "2")
    assert code == 0 and err == ""
    lines = said.splitlines()
    assert len(lines) == 2 and lines[0].startswith(f"backed up {db} to {out}/ladder-")
    newest = Path(lines[0].split(" to ", 1)[1].split(" (", 1)[0])
    assert lines[1] == (
        f"deleted 3 older backup(s) in {out} (--keep 2): ladder-20200101T000000Z.db, "
        "ladder-20200102T000000Z.db, ladder-20200103T000000Z.db"
    )
    left = sorted(p.name for p in out.iterdir())
    assert left == sorted([first.name, newest.name, *foreign, "ladder-20180101T000000Z.db"])
    for name, data in foreign.items():
        assert (out / name).read_bytes() == data


@pytest.mark.parametrize(
    ("keep", "error"),
    [
        ("0", "argument --keep: '0': keep at least 1 backup (the one just written)"),
        ("-2", "argument --keep: '-2': keep at least 1 backup"),
        ("all", "argument --keep: 'all' is not a whole number"),
    ],
)
def test_a_keep_that_keeps_nothing_is_refused(
    keep: str, error: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = ladder_db(tmp_path)
    capsys.readouterr()
    before = lasting(tmp_path)
    with pytest.raises(SystemExit) as exited:
        main(["ladder", "backup", str(tmp_path), "--db", db, "--keep", keep])
    assert exited.value.code == 2 and error in capsys.readouterr().err
    assert lasting(tmp_path) == before


def test_a_tournament_backup_into_a_directory_is_named_for_its_database(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db, out = tournament_db(tmp_path), backups(tmp_path)
    capsys.readouterr()
    code, _, err = run(capsys, "tournament", "backup", str(out), "--db", db, "--keep", "1")
    assert code == 0 and err == ""
    (made,) = out.iterdir()
    assert re.fullmatch(r"cup-\d{8}T\d{6}Z\.db", made.name), made.name


def test_a_backup_in_a_directory_never_replaces_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db, out = ladder_db(tmp_path), backups(tmp_path)
    # Every name this run could take (it ends well within a minute) is taken already.
    now = datetime.now(UTC)
    taken = [stamped(out, Path(db), now + timedelta(seconds=s)) for s in range(-1, 60)]
    for path in taken:
        path.write_bytes(b"an earlier backup\n")
    capsys.readouterr()
    code, said, err = run(capsys, "ladder", "backup", str(out), "--db", db, "--force")
    assert (code, said) == (2, "") and "--force" in err
    code, said, err = run(capsys, "ladder", "backup", str(out), "--db", db)
    assert (code, said) == (2, "")
    assert re.fullmatch(
        rf"medina-arena ladder: {out}/ladder-\d{{8}}T\d{{6}}Z\.db exists: one backup a second; "
        "nothing written\n",
        err,
    ), err
    assert sorted(out.iterdir()) == sorted(taken)
    assert all(p.read_bytes() == b"an earlier backup\n" for p in taken)


def test_an_old_backup_that_cannot_be_deleted_is_named_and_the_new_one_stays(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db, out = ladder_db(tmp_path), backups(tmp_path)
    capsys.readouterr()
    assert run(capsys, "ladder", "backup", str(tmp_path / "b.db"), "--db", db)[0] == 0
    stuck, old = out / "ladder-20200101T000000Z.db", out / "ladder-20200102T000000Z.db"
    for path in (stuck, old):
        shutil.copy(tmp_path / "b.db", path)
    # An immutable file: not even root may delete it (permission bits do not stop root).
    made = subprocess.run(["chattr", "+i", str(stuck)], capture_output=True, check=False)
    if made.returncode != 0:
        pytest.skip(f"chattr +i: {made.stderr.decode().strip()}")
    try:
        code, said, err = run(capsys, "ladder", "backup", str(out), "--db", db, "--keep", "1")
    finally:
        subprocess.run(["chattr", "-i", str(stuck)], check=True)
    assert code == 1
    lines = said.splitlines()
    assert len(lines) == 2 and lines[0].startswith(f"backed up {db} to {out}/ladder-")
    newest = Path(lines[0].split(" to ", 1)[1].split(" (", 1)[0])
    assert lines[1] == f"deleted 1 older backup(s) in {out} (--keep 1): {old.name}"
    assert err == f"could not delete the older backup {stuck}: Operation not permitted\n"
    assert sorted(out.iterdir()) == [stuck, newest]
