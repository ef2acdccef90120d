"""What the replay page says of its record and of the URL that opened it: the seed exactly
(a 64-bit value a browser's numbers cannot hold), a record that cannot be replayed without
an empty replay around it, a replay stopped short not called the match's end, a ?step that
is no step; and the matches list's ids linking where the row does."""

from __future__ import annotations

import json
import re
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from medina.records.writer import RecordWriter
from medina.referee.config import MatchSettings
from medina.referee.local import local_match, random_policy
from playwright.sync_api import Page, Response

from .conftest import ArenaThread

pytestmark = pytest.mark.timeout(300)

#: A seed above 2**53: a JSON number for it reached the page as 9204472635757602000.
SEED = 9204472635757601761
RECORD = "big-seed"


@pytest.fixture(scope="module")
def big_seed(arena: ArenaThread) -> Iterator[Path]:
    """A finished 2-player record of seed SEED in the arena's records directory."""
    writer = RecordWriter(arena.running.arena.records_dir, RECORD)
    settings = MatchSettings("medina-v2", 2, SEED)
    policies = [random_policy(70), random_policy(71)]
    arena.call(local_match(RECORD, settings, policies, writer).run())
    writer.close()
    yield writer.path


def failures(page: Page) -> list[str]:
    """The requests of ``page`` answered 400 or more, as they come."""
    failed: list[str] = []

    def check(response: Response) -> None:
        if response.status >= 400:
            failed.append(f"{response.status} {response.url}")

    page.on("response", check)
    return failed


def open_replay(page: Page, arena: ArenaThread, record: str, query: str = "") -> str:
    page.goto(f"{arena.url}/replay/{record}{query}")
    page.wait_for_selector('body[data-ready="yes"]')
    return page.locator("#status").inner_text()


def test_the_seed_is_sent_as_a_string_and_shown_exactly(
    arena: ArenaThread, big_seed: Path, page: Page
) -> None:
    with urllib.request.urlopen(f"{arena.url}/api/records/{RECORD}/replay", timeout=30) as r:
        data = json.loads(r.read())
    assert data["seed"] == str(SEED)
    assert f"seed {SEED} ·" in open_replay(page, arena, RECORD)


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (b"garbage\x00\xff", "unreadable: "),
        (b"", "the record is empty"),
        (b"not json\n", "not JSON"),
    ],
    ids=["garbage", "empty", "not-json"],
)
def test_a_record_that_cannot_be_replayed_says_why_and_nothing_else(
    arena: ArenaThread, page: Page, content: bytes, says: str
) -> None:
    target = arena.running.arena.records_dir / "broken.jsonl"
    target.write_bytes(content)
    failed = failures(page)
    try:
        answer = page.goto(f"{arena.url}/replay/broken")
        assert answer is not None and answer.status == 200
        shown = page.locator("#status").inner_text()
        # The list links here: the page itself asks for nothing that fails.
        page.wait_for_load_state("networkidle")
        assert "cannot be replayed" in shown and says in shown, shown
        assert page.locator(".controls, #board, #plot, #movelist").count() == 0
        assert page.locator("a[download]").get_attribute("href") == (
            "/api/records/broken/record.jsonl"
        )
    finally:
        target.unlink()
    assert failed == []


def test_a_replay_that_stops_on_a_bad_decision_does_not_call_it_the_end(
    arena: ArenaThread, big_seed: Path, page: Page
) -> None:
    lines = big_seed.read_bytes().splitlines(keepends=True)
    decisions = [i for i, line in enumerate(lines) if line.startswith(b'{"decision"')]
    entry = json.loads(lines[decisions[5]])
    entry["decision"]["action"]["square"] = 99999
    lines[decisions[5]] = json.dumps(entry).encode() + b"\n"
    target = arena.running.arena.records_dir / "bad-decision.jsonl"
    target.write_bytes(b"".join(lines))
    try:
        shown = open_replay(page, arena, "bad-decision")
    finally:
        target.unlink()
    assert "replay stopped: " in shown and "malformed action" in shown, shown
    assert "the match is over" not in shown
    assert "all supplies shown (the record holds the match's outcome)" in shown


@pytest.mark.parametrize(
    ("query", "says"),
    [
        ("?step=abc", '?step="abc" is not a step number (0 to {last}): showing step 0'),
        ("?step=1e3", '?step="1e3" is not a step number (0 to {last}): showing step 0'),
        ("?step=-3", '?step="-3" is not a step number (0 to {last}): showing step 0'),
        ("?step=", '?step="" is not a step number (0 to {last}): showing step 0'),
        ("?step=99999", "?step=99999 is past the last step ({last}): showing the last"),
    ],
)
def test_a_step_not_understood_is_said_in_the_note(
    arena: ArenaThread, big_seed: Path, page: Page, query: str, says: str
) -> None:
    shown = open_replay(page, arena, RECORD, query)
    last = int(page.evaluate("document.body.dataset.steps"))
    assert says.format(last=last) in shown, shown
    expected = str(last) if query == "?step=99999" else "0"
    assert page.evaluate("document.body.dataset.step") == expected
    # A step understood says nothing of it.
    assert "?step" not in open_replay(page, arena, RECORD, "?step=3")


def test_each_moves_tooltip_numbers_it_as_the_list_does(
    arena: ArenaThread, big_seed: Path, page: Page
) -> None:
    open_replay(page, arena, RECORD)
    titles = page.locator("#movelist li").evaluate_all("(items) => items.map((li) => li.title)")
    assert [re.match(r"step (\d+),", t) is not None for t in titles] == [True] * len(titles)
    assert [int(t.split(",")[0].removeprefix("step ")) for t in titles] == list(
        range(1, len(titles) + 1)
    )


def test_a_matches_id_links_where_its_row_does(arena: ArenaThread, big_seed: Path) -> None:
    # On a phone the links of the last column are off-screen in the table's sideways scroll.
    with urllib.request.urlopen(f"{arena.url}/?per=500", timeout=30) as r:
        html = r.read().decode()
    row = re.search(rf'<tr data-match="{RECORD}".*?</tr>', html)
    assert row is not None
    assert f'<td><a class="match" href="/replay/{RECORD}"><code>{RECORD}</code></a></td>' in (
        row.group(0)
    )


# The contrast of an element's text colour against the background behind it (the first
# ancestor's that is not transparent), as WCAG 2 computes it.
CONTRAST = """(selector) => [...document.querySelectorAll(selector)].map((el) => {
  const rgb = (css) => css.match(/[\\d.]+/g).map(Number);
  const lum = ([r, g, b]) => {
    const f = (c) => { c /= 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  let back = el;
  while (back && rgb(getComputedStyle(back).backgroundColor)[3] === 0) back = back.parentElement;
  const [hi, lo] = [lum(rgb(getComputedStyle(el).color)),
    lum(rgb(getComputedStyle(back || document.body).backgroundColor))].sort((a, b) => b - a);
  return (hi + 0.05) / (lo + 0.05);
})"""


def test_small_grey_text_keeps_a_contrast_of_4_5_to_1(
    arena: ArenaThread, big_seed: Path, page: Page
) -> None:
    # Supplies are hidden in a record without its outcome line; the seat to move's row has a
    # background of its own. "hidden" was 2.68:1, the plot's note 4.22:1.
    lines = big_seed.read_bytes().splitlines(keepends=True)
    target = arena.running.arena.records_dir / "no-outcome.jsonl"
    target.write_bytes(b"".join(lines[:-1]))
    try:
        open_replay(page, arena, "no-outcome", "?step=4")
        for selector in ("td.supply.hidden", ".plot-note"):
            ratios = page.evaluate(CONTRAST, selector)
            assert ratios, selector
            assert min(ratios) >= 4.5, (selector, ratios)
    finally:
        target.unlink()
