"""The matches list: paged newest first, filtered by state, reading only the records a page
shows, and answering 304 to a client that has the page already."""

from __future__ import annotations

import asyncio
import html
import json
import os
import re
import urllib.error
import urllib.request
from collections.abc import Iterable
from pathlib import Path

import pytest
from medina.web import records_viewer
from medina.web.listing import BadQueryError, Listing, Query
from medina.web.pages import listing_block

from .conftest import ArenaThread
from .test_view import write_match

RECORDS = 120


@pytest.fixture(scope="module")
def directory(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """120 records, rec-000 the oldest; every tenth one cut short (interrupted)."""
    where = tmp_path_factory.mktemp("many")
    source = write_match(where, "source").read_bytes()
    (where / "source.jsonl").unlink()
    lines = source.splitlines(keepends=True)
    for n in range(RECORDS):
        path = where / f"rec-{n:03d}.jsonl"
        path.write_bytes(b"".join(lines[:40]) if n % 10 == 0 else source)
        os.utime(path, (1_700_000_000 + n, 1_700_000_000 + n))
    return where


def ids(listing: Listing) -> list[str]:
    return [r.match_id for r in listing.rows]


def test_pages_are_newest_first_and_read_only_their_records(directory: Path) -> None:
    viewer = records_viewer(directory)
    first = asyncio.run(viewer.listing(Query(page=1, per=50)))
    assert ids(first) == [f"rec-{n:03d}" for n in range(119, 69, -1)]
    assert first.total == RECORDS and first.more and first.first == 1
    assert len(viewer.records._inspected) == 50  # the other 70 were not read
    last = asyncio.run(viewer.listing(Query(page=3, per=50)))
    assert ids(last) == [f"rec-{n:03d}" for n in range(19, -1, -1)]
    assert not last.more and last.first == 101
    beyond = asyncio.run(viewer.listing(Query(page=4, per=50)))
    assert beyond.rows == [] and not beyond.more


def test_a_page_past_the_end_links_the_last_page_that_has_matches(
    directory: Path, tmp_path: Path
) -> None:
    viewer = records_viewer(directory)

    def newer(query: Query, shelf: Path = directory) -> str:
        shown = listing_block(asyncio.run(records_viewer(shelf).listing(query)))
        found = re.search(r'<a rel="prev" href="([^"]*)"', shown)
        assert found, "no newer link"
        return html.unescape(found.group(1))

    assert newer(Query(page=999_999, per=50)) == "/?page=3"  # 120 records: 101 to 120
    assert newer(Query(page=4, per=40)) == "/?page=3&per=40"
    unfinished = frozenset({"interrupted"})  # 12 of them
    assert newer(Query(page=999_999, per=5, states=unfinished)) == "/?state=unfinished&page=3&per=5"
    assert newer(Query(page=3, per=50)) == "/?page=2"  # a page with rows: the one before
    assert 'rel="prev"' not in listing_block(asyncio.run(viewer.listing(Query(page=1))))
    # No match at all: page 1.
    assert newer(Query(page=7), tmp_path) == "/"


def test_a_state_filter_lists_only_that_state(directory: Path) -> None:
    viewer = records_viewer(directory)
    cut = asyncio.run(viewer.listing(Query(per=5, states=frozenset({"interrupted"}))))
    assert ids(cut) == ["rec-110", "rec-100", "rec-090", "rec-080", "rec-070"]
    assert cut.more and cut.total is None  # not every record was looked at
    rest = asyncio.run(viewer.listing(Query(page=3, per=5, states=frozenset({"interrupted"}))))
    assert ids(rest) == ["rec-010", "rec-000"] and not rest.more and rest.total == 12
    both = asyncio.run(
        viewer.listing(Query(per=200, states=frozenset({"interrupted", "finished"})))
    )
    assert both.total == RECORDS
    assert {r.state for r in both.rows} == {"interrupted", "finished"}


def test_a_state_filter_keeps_states_not_every_record_it_read(
    directory: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Filtering looks at every record's state (from the end of its file when the outcome
    # says), but only the newest inspections stay in memory: a large directory does not
    # fill the viewer with every record's header and result.
    from medina.web import shelf

    monkeypatch.setattr(shelf, "INSPECTED_CACHE", 10)
    viewer = records_viewer(directory)
    both = asyncio.run(
        viewer.listing(Query(per=200, states=frozenset({"interrupted", "finished"})))
    )
    assert ids(both) == [f"rec-{n:03d}" for n in range(119, -1, -1)]
    assert len(viewer.records._states) == RECORDS
    assert len(viewer.records._inspected) == 10
    again = asyncio.run(viewer.listing(Query(per=5, states=frozenset({"interrupted"}))))
    assert ids(again) == ["rec-110", "rec-100", "rec-090", "rec-080", "rec-070"]


@pytest.mark.parametrize(
    ("params", "says"),
    [
        ({"page": "0"}, "page must be a whole number from 1 to 1000000, got '0'"),
        ({"per": "x"}, "per must be a whole number from 1 to 500, got 'x'"),
        ({"per": "501"}, "per must be a whole number from 1 to 500, got '501'"),
        (
            {"state": "done"},
            "state done is not one of waiting, running, finished, aborted, abandoned, "
            "unfinished, unreadable$",
        ),
    ],
)
def test_bad_queries_are_named(params: dict[str, str], says: str) -> None:
    with pytest.raises(BadQueryError, match=says):
        Query.parse(params)


def test_links_keep_the_query_and_leave_out_defaults() -> None:
    q = Query.parse({"page": "2", "per": "20", "state": "running,waiting"})
    assert q.link("/api/matches", page=3) == "/api/matches?state=waiting,running&page=3&per=20"
    assert Query().link("/") == "/"


def test_a_record_without_its_outcome_is_shown_unfinished(directory: Path) -> None:
    # The file alone cannot tell a match still being played (by a server writing to this
    # directory) from one whose server stopped: the page says neither "interrupted" nor
    # anything else it cannot know. Its rows keep the JSON's state.
    query = Query.parse({"state": "unfinished", "per": "5"})
    listing = asyncio.run(records_viewer(directory).listing(query))
    assert {r.state for r in listing.rows} == {"interrupted"} and len(listing.rows) == 5
    shown = listing_block(listing)
    assert "interrupted" not in shown
    assert shown.count('<td class="state unfinished" title="unfinished: no outcome line yet') == 5
    assert shown.count('data-state="unfinished"') == 5
    on = '<a href="/?state=unfinished&amp;per=5" data-filter="unfinished" class="on">unfinished</a>'
    assert on in shown


def test_old_links_to_interrupted_matches_still_work() -> None:
    old = Query.parse({"state": "interrupted,finished"})
    assert old == Query.parse({"state": "unfinished,finished"})
    assert old.states == {"interrupted", "finished"}
    assert old.link("/") == "/?state=finished,unfinished"


def test_the_unfinished_filter_answers_old_links_and_keeps_the_json_state(
    arena: ArenaThread,
) -> None:
    records = arena.running.arena.records_dir
    source = next(records.glob("*.jsonl")).read_bytes()
    cut = records / "cut-short.jsonl"
    cut.write_bytes(b"".join(source.splitlines(keepends=True)[:-1]))  # no outcome line
    try:
        pages = {q: get(f"{arena.url}/?state={q}") for q in ("unfinished", "interrupted")}
        api = {q: get(f"{arena.url}/api/matches?state={q}") for q in ("unfinished", "interrupted")}
    finally:
        cut.unlink()
    for status, _h, body in pages.values():
        assert status == 200
        assert b'<td class="state unfinished"' in body and b"<code>cut-short</code>" in body
    for status, _h, body in api.values():
        rows = json.loads(body)
        assert status == 200 and [r["match_id"] for r in rows] == ["cut-short"]
        assert rows[0]["state"] == "interrupted"  # programs read it as before


def get(url: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, _lower(response.headers.items()), response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, _lower(exc.headers.items()), exc.read()


def _lower(items: Iterable[tuple[str, str]]) -> dict[str, str]:
    return {k.lower(): v for k, v in items}


def test_the_json_list_is_paged_with_links_and_a_total(arena: ArenaThread) -> None:
    status, headers, body = get(f"{arena.url}/api/matches?per=1")
    assert status == 200 and len(json.loads(body)) == 1
    total = int(headers["x-total-count"])
    assert total >= 1
    if total > 1:
        assert headers["link"] == '</api/matches?page=2&per=1>; rel="next"'
    status, headers, body = get(f"{arena.url}/api/matches?page=999999&per=1")
    assert status == 200 and json.loads(body) == []
    last = Query(page=total, per=1).link("/api/matches")  # the last page, with a match
    assert headers["link"] == f'<{last}>; rel="prev"'
    status, _h, body = get(f"{arena.url}/api/matches?page=0")
    assert status == 400 and "page must be a whole number" in json.loads(body)["error"]


def test_a_bad_list_parameter_gets_a_page_that_names_it(arena: ArenaThread) -> None:
    status, headers, body = get(f"{arena.url}/?page=abc")
    assert status == 400 and headers["content-type"].startswith("text/html")
    assert b"page must be a whole number" in body and b'<a href="/">all matches</a>' in body


def test_an_unchanged_page_is_answered_304(arena: ArenaThread) -> None:
    for path in ("/", "/api/matches", "/?state=finished&per=5"):
        status, headers, _body = get(arena.url + path)
        assert status == 200
        etag = headers["etag"]
        status, again, body = get(arena.url + path, {"If-None-Match": etag})
        assert status == 304 and body == b"" and again["etag"] == etag, path
