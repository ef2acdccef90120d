"""Text that others chose made safe to open in a spreadsheet. A CSV cell that begins with
``=``, ``+``, ``-`` or ``@`` (or a tab or carriage return before one) is read as a formula
by Excel, LibreOffice and Google Sheets: a ladder bot's version ``=HYPERLINK(...)`` ran in
the organiser's sheet when the standings were opened. Such text cells get a leading ``'``,
which every one of them shows as text (the OWASP "CSV injection" advice); numbers are left
alone, so ratings below zero stay numbers."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping, Sequence

__all__ = ["cell", "csv_records", "csv_rows"]

_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def cell(value: object) -> object:
    """``value`` as a CSV cell: text that a spreadsheet would take for a formula, quoted
    with a leading ``'``; anything else as it is."""
    if isinstance(value, str) and value.startswith(_FORMULA_STARTS):
        return "'" + value
    return value


def csv_rows(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """A header and rows as CSV text, every cell through ``cell``."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow([cell(h) for h in header])
    writer.writerows([cell(v) for v in row] for row in rows)
    return buf.getvalue()


def csv_records(fields: Sequence[str], records: Iterable[Mapping[str, object]]) -> str:
    """Records (a dict per row, keyed by ``fields``) as CSV text with a header."""
    return csv_rows(fields, ([r[f] for f in fields] for r in records))
