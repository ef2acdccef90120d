"""A ``--db`` that cannot be used, as an operator mistypes it: a file that is not a
database (the tournament's own toml, say) or a place no database can be made. Every
command that opens one says so in one line, naming it, and exits 2 (it printed
SQLAlchemy's traceback, or named the tournament's directory instead of the database)."""

from __future__ import annotations

from pathlib import Path

import pytest
from medina.cli import main

CUP = """name = "cup"
games = 2
[[variants]]
ruleset = "medina-v2"
players = 2
[[bots]]
name = "a"
command = "python -m medina_client --bot random"
[[bots]]
name = "b"
command = "python -m medina_client --bot random"
"""


def commands(cup: Path, db: str) -> list[list[str]]:
    records = str(cup.parent / "records")
    return [
        ["tournament", "standings", str(cup), "--db", db],
        ["tournament", "run", str(cup), "--db", db],
        ["ladder", "standings", "--db", db],
        ["bots", "list", "--db", db],
        ["bots", "add", "x", "--db", db],
        ["replay", "prune", records, "--older-than-days", "0", "--keep-for", db],
    ]


@pytest.mark.parametrize("which", range(6))
@pytest.mark.parametrize(
    ("db", "says"),
    [
        ("cup.toml", "file is not a database"),
        ("/proc/none/x.db", "/proc/none/x.db"),  # named, not the tournament's directory
    ],
)
def test_a_db_that_cannot_be_used_is_one_line_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], which: int, db: str, says: str
) -> None:
    cup = tmp_path / "cup.toml"
    cup.write_text(CUP)
    (tmp_path / "records").mkdir()
    path = str(tmp_path / db) if not db.startswith("/") else db
    argv = commands(cup, path)[which]
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code  # type: ignore[assignment]
    err = capsys.readouterr().err
    assert code == 2, (argv, err)
    assert says in err and "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1, err
    assert cup.read_text() == CUP  # the file is left as it was
