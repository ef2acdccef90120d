"""Names chosen by others on the viewer's pages (bot names, seat names, ladder versions): a
version with a slash still has its bot page, a name with bidi controls cannot turn the text
around it, and names of 100 characters (the longest a seat name may be) leave every page
inside the window, at a desktop's width as at a phone's."""

from __future__ import annotations

import urllib.request
from collections.abc import Iterator
from urllib.parse import quote

import pytest
from medina.referee.config import MatchSettings
from medina.web import BotGame, RatingStep, StandingRow, Standings
from playwright.sync_api import Page

from .conftest import ArenaThread, finished_id

pytestmark = pytest.mark.timeout(300)

#: A ladder bot whose version is a branch name.
SLASHED = "gamma@feat/new-eval"
#: A name that starts with RIGHT-TO-LEFT OVERRIDE: unisolated, it turns the text after it
#: around ("tower 1 tile: (neerg) tod-idib").
BIDI = "\u202ebidi-bot"
#: One that tries to get out of its isolation: a PDI that closes nothing (it would end the
#: isolation around the name) and an isolate left open (it would take the isolation's end).
ESC = "\u2069\u202eesc\u2066"
#: ESC as the pages show it: the stray PDI dropped, the open isolate closed.
ESC_SHOWN = "\u202eesc\u2066\u2069"
#: Names of 100 characters (the longest a seat name may be), each one unbroken word.
LONG = tuple((f"long{i}-" + "x" * 100)[:100] for i in range(3))
#: The seats of the finished match, by seat.
SEATS = (LONG[0], ESC, BIDI, LONG[1])


def standings() -> Standings:
    """A ladder-like table naming the bots above."""
    bots = (SLASHED, BIDI, ESC, *LONG)
    games: dict[str, tuple[BotGame, ...]] = {
        bot: (BotGame(0, "medina-v2 4p", SEATS, SEATS.index(bot), 1, 30, "normal", "none"),)
        if bot in SEATS
        else (BotGame(0, "medina-v2 2p", (bot, BIDI), 0, 1, 30, "normal", "none"),)
        for bot in bots
    }
    return Standings(
        title="Names",
        rows=tuple(
            StandingRow(b, 1500.0, 1450.0, 1550.0, 1, {"timeout": 1}, 2.5, 0.5, 0.1, 0.9)
            for b in bots
        ),
        games=games,
        head_to_head={a: {b: (0.5, 1) for b in bots if b != a} for a in bots},
        history={b: (RatingStep(1, 1500.0, 1450.0, 1550.0),) for b in bots},
    )


@pytest.fixture(scope="module")
def named(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ArenaThread]:
    """A server whose standings name the bots above, with a finished 4-player match whose
    seats the organiser named SEATS."""
    a = ArenaThread(tmp_path_factory.mktemp("names"), standings=standings())
    try:
        hosted = a.create(MatchSettings("medina-v2", 4, 9, seat_names=SEATS))
        a.play(hosted, 90).result(120)
        yield a
    finally:
        a.close()


def pages(arena: ArenaThread) -> dict[str, str]:
    """Every kind of page that shows names, by what it is: the URL and the selector that
    says it is drawn."""
    match_id = finished_id(arena)
    return {
        "/": "#listing",
        "/standings": "#standings",
        f"/standings/bot/{quote(LONG[0], safe='')}": "#bot-games",
        f"/standings/bot/{quote(BIDI, safe='')}": "#bot-games",
        f"/standings/bot/{quote(ESC, safe='')}": "#bot-games",
        f"/replay/{match_id}": 'body[data-ready="yes"]',
        f"/live/{match_id}": 'body[data-state="over"]',
    }


# Every text node and attribute holding U+202E must have it isolated: inside an element that
# the browser isolates (<bdi>, unicode-bidi: isolate) and that holds the name alone, or
# between FSI and PDI (U+2068, U+2069: plain text, as in an SVG <title> or a tooltip).
UNISOLATED = """([names, values]) => {
  const isolating = new Set(["isolate", "isolate-override", "plaintext"]);
  const wrapped = /\u2068[^\u2069]*\u202e[^\u2069]*\u2069/;
  const bad = [];
  const owned = (node) => {
    for (let e = node.parentElement; e; e = e.parentElement) {
      if (isolating.has(getComputedStyle(e).unicodeBidi)) return names.includes(e.textContent);
    }
    return false;
  };
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (n.data.includes("\u202e") && !wrapped.test(n.data) && !owned(n)) {
      bad.push(`${n.parentElement.tagName}: ${n.parentElement.textContent}`);
    }
  }
  for (const e of document.body.querySelectorAll("*")) {
    for (const a of e.attributes) {
      if (a.value.includes("\u202e") && !values.includes(a.value) && !wrapped.test(a.value)) {
        bad.push(`${e.tagName} ${a.name}="${a.value}"`);
      }
    }
  }
  return bad;
}"""


def test_names_with_bidi_controls_are_isolated_from_the_text_around_them(
    named: ArenaThread, page: Page
) -> None:
    for path, drawn in pages(named).items():
        page.goto(f"{named.url}{path}")
        page.wait_for_selector(drawn)
        assert BIDI in page.locator("body").inner_text(), path
        assert page.evaluate(UNISOLATED, [[BIDI, ESC_SHOWN], [BIDI, ESC]]) == [], path
        for cell in ("#listing td:has(bdi)", "#bot-games td:has(bdi)"):
            for i in range(page.locator(cell).count()):
                assert page.evaluate(OUT_OF_ORDER, page.locator(cell).nth(i).element_handle()) == []


# The pieces of an element (its text nodes and child elements) must be laid out in reading
# order, each after the one before on its line or on a later line: a name whose override
# got out of its isolation would lay the words after it out right to left.
OUT_OF_ORDER = """(cell) => {
  const rects = (node) => {
    const range = document.createRange();
    range.selectNodeContents(node);
    return [...range.getClientRects()].filter((r) => r.width > 0);
  };
  const pieces = [...cell.childNodes].map(rects).filter((r) => r.length);
  const bad = [];
  for (let i = 1; i < pieces.length; i++) {
    const before = pieces[i - 1][pieces[i - 1].length - 1], after = pieces[i][0];
    const later = after.top >= before.bottom - 2;
    if (!later && after.left < before.right - 1) bad.push(`${cell.textContent}: piece ${i}`);
  }
  return bad;
}"""


def test_a_version_with_a_slash_has_its_bot_page(named: ArenaThread, page: Page) -> None:
    url = f"{named.url}/standings/bot/{quote(SLASHED, safe='')}"
    with urllib.request.urlopen(url, timeout=30) as response:
        assert response.status == 200
    page.goto(f"{named.url}/standings")
    page.locator("#standings a", has_text=SLASHED).click()
    page.wait_for_selector("#bot-games")
    assert SLASHED in page.locator("h1").inner_text()


# How far the page reaches beyond the window, and where the dark header ends.
WIDTHS = """() => ({
  page: document.documentElement.scrollWidth,
  window: window.innerWidth,
  header: document.querySelector("header").getBoundingClientRect().right,
})"""

# The score plot's legend entries (key and name) as boxes on the page.
LEGEND = """() => {
  const keys = [...document.querySelectorAll("#plot .plot-key")];
  const labels = [...document.querySelectorAll("#plot .plot-legend")];
  return keys.map((key, i) => {
    const a = key.getBoundingClientRect(), b = labels[i].getBoundingClientRect();
    return { left: Math.min(a.left, b.left), right: Math.max(a.right, b.right),
             top: Math.min(a.top, b.top), bottom: Math.max(a.bottom, b.bottom) };
  });
}"""


@pytest.mark.parametrize("width", [1280, 375])
def test_long_names_leave_every_page_inside_the_window(
    named: ArenaThread, page: Page, width: int
) -> None:
    page.set_viewport_size({"width": width, "height": 800 if width > 400 else 700})
    for path, drawn in pages(named).items():
        page.goto(f"{named.url}{path}")
        page.wait_for_selector(drawn)
        assert LONG[0] in page.locator("body").inner_text(), path
        widths = page.evaluate(WIDTHS)
        assert widths["page"] <= widths["window"], (path, widths)
        assert widths["header"] >= widths["window"] - 1, (path, widths)
        if "#plot" not in page.content():
            continue
        boxes = page.evaluate(LEGEND)
        assert len(boxes) == len(SEATS), path
        plot = page.locator("#plot").bounding_box()
        assert plot is not None
        for i, a in enumerate(boxes):
            assert plot["x"] <= a["left"] and a["right"] <= plot["x"] + plot["width"], (path, i)
            for b in boxes[i + 1 :]:
                apart = a["right"] <= b["left"] or b["right"] <= a["left"]
                assert apart or a["bottom"] <= b["top"] or b["bottom"] <= a["top"], (path, a, b)
        # A name cut to fit keeps the whole of it in its tooltip.
        first = page.locator("#plot .plot-legend").first
        assert LONG[0] in (first.locator("title").text_content() or first.inner_text())
