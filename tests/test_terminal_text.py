"""Text others chose reaches an operator's terminal printable: a bot's log line in "its log
ends: ...", a ladder bot's version in the standings and the bot list."""

from __future__ import annotations

from pathlib import Path

import pytest
from medina.boundary.terminal import last_line, printable
from medina.cli import main
from medina.ladder.standings import as_table
from medina.storage.ladder import LadderStore

HOSTILE = "fake: entry ok\x1b]0;PWNED\x07\x1b[2K\x1b[31mred\u202eevil\u2028x"


def test_control_and_bidi_characters_are_shown_as_escapes() -> None:
    shown = printable(HOSTILE)
    assert shown == "fake: entry ok\\x1b]0;PWNED\\x07\\x1b[2K\\x1b[31mred\\u202eevil\\u2028x"
    assert shown.isprintable()
    assert printable("tab\tand ünïcødé 名前 🙂") == "tab\tand ünïcødé 名前 🙂"


def test_a_log_line_is_printable_and_shortened(tmp_path: Path) -> None:
    log = tmp_path / "bot.log"
    line = HOSTILE.split("\u2028")[0]  # a line separator ends a line, as a newline does
    log.write_bytes(b"first\n" + line.encode() + b"\n\n")
    assert last_line(log) == printable(line)
    assert last_line(log, 20) == printable(line)[:17] + "..."
    assert last_line(tmp_path / "missing.log") == ""


def test_the_ladders_tables_show_versions_printable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "l.db")
    assert main(["bots", "add", "eve", "--db", db]) == 0
    store = LadderStore(db)
    account = store.account("eve")
    for n in range(12):
        store.line(account.id, f"v{n}", 25.0, 8.3)
    store.line(account.id, "\x1b[31mred", 25.0, 8.3)
    capsys.readouterr()
    assert main(["bots", "list", "--db", db]) == 0
    listed = capsys.readouterr().out
    assert "\x1b" not in listed and "\\x1b[31mred" in listed
    assert "(3 older), v3, " in listed  # the newest ten of thirteen
    table = as_table(store.lines(), include_inactive=True)
    assert "\x1b" not in table and "\\x1b[31mr" in table
