"""The ladder's standings provider (what `ladder serve --http` and `web --ladder-db` show):
the table costs the same few queries however many versions the ladder holds, and a version's
games and rating history are read only for its own page."""

from __future__ import annotations

import asyncio
import json
import re
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import bounded
import pytest
from medina.cli import main
from medina.cli.web_cmd import ladder_standings
from medina.ladder.standings import standings
from medina.storage.ladder import LadderStore, StoredSeat
from medina.storage.schema import ladder_lines
from medina.web import HttpServer, build_app, records_viewer
from medina.web.pages import standings_page
from sqlalchemy import event, update
from sqlalchemy.engine import Engine

from .test_store import add, rater


def ladder_of(path: Path, bots: int) -> str:
    """A ladder database whose bots have each played one rated match (paired in turn)."""
    db = str(path)
    store = LadderStore(db)
    lines = [store.line(add(store, f"b{i}"), "v1", 25.0, 8.0).id for i in range(bots)]
    for n in range(0, bots - 1, 2):
        mid = store.new_match("s", "medina-v2", 2, 1000, n, lines[n : n + 2])
        store.started(mid, "s", f"m{n}")
        outcome = [StoredSeat(0, 20, 1, "normal", 0, ""), StoredSeat(1, 10, 2, "normal", 0, "")]
        store.finish(mid, "s", outcome, "complete", "r.jsonl", rater, suspend_after=0,
                     window=10, faults=frozenset())  # fmt: skip
    store.engine.dispose()
    return db


@contextmanager
def counting() -> Iterator[list[str]]:
    """Every SQL statement any engine executes meanwhile."""
    seen: list[str] = []

    def record(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        seen.append(statement)

    event.listen(Engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(Engine, "before_cursor_execute", record)


def test_the_table_does_not_read_every_version(tmp_path: Path) -> None:
    small = ladder_standings(ladder_of(tmp_path / "small.db", 4))
    big = ladder_standings(ladder_of(tmp_path / "big.db", 60))
    with counting() as few:
        table = small()
    with counting() as many:
        table = big()
    # Before, each version's games and history were read for every view of the table (two
    # queries a version: 120 more here, on the loop that referees the ladder's matches).
    assert len(many) == len(few) <= 10, many
    assert len(table.rows) == 60 and "b7@v1" in table.games and "nobody@v1" not in table.games
    with counting() as one:
        (game,) = table.games["b7@v1"]
        steps = table.history["b7@v1"]
    assert len(one) <= 6, one
    assert game.seats == ("b6@v1", "b7@v1") and game.seat == 1 and game.rank == 2
    assert game.match_id == "m6" and len(steps) == 1 and steps[0].rating < 25.0


def test_the_page_shows_the_commands_rows_and_no_empty_win_share(tmp_path: Path) -> None:
    # The win share was '-' on every row (the ladder counts no wins), the order could not be
    # told (no ordinal) and a suspended version looked like any other.
    db = ladder_of(tmp_path / "ladder.db", 4)
    store = LadderStore(db)
    with store.engine.begin() as conn:
        conn.execute(
            update(ladder_lines).where(ladder_lines.c.id == 2).values(suspended_reason="3 faults")
        )
    # No provisional rule (a few games each): what the columns hold, not the order.
    table = ladder_standings(db, 0)()
    expected = standings(store.lines(), include_inactive=True, min_games=0)
    assert [(r.bot, r.ordinal, r.status) for r in table.rows] == [
        (f"{x.line.bot}@{x.line.version}", x.ordinal, x.status) for x in expected
    ]
    assert {r.status for r in table.rows} == {"active", "suspended: 3 faults"}
    html = standings_page(table, show_all=True)
    assert "win share" not in html and 'class="win-share"' not in html
    assert "<th>ordinal (mu - 3 sigma)</th>" in html and "<th>status</th>" in html
    for x in expected:
        row = html.split(f'data-bot="{x.line.bot}@{x.line.version}">')[1].split("</tr>")[0]
        assert f'<td class="ordinal">{x.ordinal:.2f}</td>' in row
        assert f'<td class="status">{x.status}</td>' in row


def played(path: Path, versions: tuple[str, ...]) -> str:
    """A ladder database where bot ``extra2``'s ``versions`` have played a rated match."""
    db = str(path)
    store = LadderStore(db)
    bot = add(store, "extra2")
    lines = [store.line(bot, v, 25.0, 8.0).id for v in versions]
    mid = store.new_match("s", "medina-v2", len(lines), 1000, 1, lines)
    store.started(mid, "s", "m1")
    outcome = [StoredSeat(i, 10 * i, len(lines) - i, "normal", 0, "") for i in range(len(lines))]
    store.finish(mid, "s", outcome, "complete", "r.jsonl", rater, suspend_after=0,
                 window=10, faults=frozenset())  # fmt: skip
    store.engine.dispose()
    return db


def fetch(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_versions_stored_with_control_characters_have_their_pages_and_no_raw_nul(
    tmp_path: Path,
) -> None:
    # Versions the ladder took before it refused control characters: the standings linked
    # `extra2@nl\nx` to a 404 (the route stopped at the newline) and held a raw NUL.
    db = played(tmp_path / "ladder.db", ("nl\nx", "nul\x00y"))
    app = build_app(records_viewer(tmp_path, standings=ladder_standings(db)))

    async def pages() -> list[tuple[int, str]]:
        http = HttpServer(app, "127.0.0.1", 0)
        await http.start()
        try:
            status, table = await asyncio.to_thread(fetch, http.url + "/standings")
            links = re.findall(r'href="(/standings/bot/[^"]+)"', table)
            bots = [await asyncio.to_thread(fetch, http.url + link) for link in links]
            return [(status, table), *bots]
        finally:
            await http.stop()

    shown = bounded.run(pages(), 60)
    (_, table), *bots = shown
    assert len(bots) == 2
    for status, page in shown:
        assert status == 200 and "\x00" not in page and "nl\nx" not in page
    assert "extra2@nl\\nx" in table and "extra2@nul\\x00y" in table
    assert {page.count("<h1>Bot ") for _, page in bots} == {1}


def test_the_page_numbers_the_rows_the_command_prints_and_all_with_all_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The page showed the revoked and suspended versions (their games played) among the
    # others, so its places differed from `ladder standings`, which hides them without --all.
    db = ladder_of(tmp_path / "ladder.db", 4)
    store = LadderStore(db)
    with store.engine.begin() as conn:
        conn.execute(
            update(ladder_lines).where(ladder_lines.c.id == 1).values(suspended_reason="3 faults")
        )
    store.line(add(store, "fresh"), "v1", 25.0, 8.0)  # no game yet: no mean rank
    store.line(add(store, "gone"), "v1", 25.0, 8.0)
    store.revoke("gone")
    store.engine.dispose()
    app = build_app(records_viewer(tmp_path, standings=ladder_standings(db)))

    async def pages() -> list[tuple[int, str]]:
        http = HttpServer(app, "127.0.0.1", 0)
        await http.start()
        try:
            return [
                await asyncio.to_thread(fetch, f"{http.url}/standings{query}")
                for query in ("", "?all=1", "?all=0", "?all=yes", "?all=")
            ]
        finally:
            await http.stop()

    default, every, zero, yes, empty = bounded.run(pages(), 60)

    def printed(*options: str) -> list[tuple[int, str, float | None]]:
        assert main(["ladder", "standings", "--db", db, "--format", "json", *options]) == 0
        rows = json.loads(capsys.readouterr().out)
        return [(r["rank"], f"{r['bot']}@{r['version']}", r["mean_rank"]) for r in rows]

    def shown(page: str) -> list[tuple[int, str, float | None]]:
        found = re.findall(
            r'<tr data-bot="([^"]+)"><td>(\d+)</td>.*?<td class="mean-rank">([^<]+)</td>', page
        )
        return [(int(n), bot, None if m == "-" else float(m)) for bot, n, m in found]

    def rounded(rows: list[tuple[int, str, float | None]]) -> list[tuple[int, str, float | None]]:
        return [(n, bot, None if m is None else round(m, 2)) for n, bot, m in rows]

    active = printed()
    assert sorted(bot for _, bot, _ in active) == ["b1@v1", "b2@v1", "b3@v1", "fresh@v1"]
    assert active[-1][2] is None
    assert default[0] == zero[0] == 200 and shown(default[1]) == shown(zero[1])
    assert rounded(shown(default[1])) == rounded(active)
    assert "2 revoked or suspended not shown" in default[1]
    assert rounded(shown(every[1])) == rounded(printed("--all")) and len(shown(every[1])) == 6
    assert 'href="/standings">Only those that may play' in every[1]
    for status, page in (yes, empty):
        assert status == 400 and "all must be 1" in page
