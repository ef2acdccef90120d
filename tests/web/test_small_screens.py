"""Text on the board, the score plot and a bot's rating plot at a phone's width (375 px) as
at a desktop's: the board's coordinates and the plots' labels and legend stay readable
(MIN_TEXT_PX rendered or more) and inside their drawing, also after the window is resized.
All are SVGs that a viewBox scaled down to fit a phone: their text used to be drawn at 5 to
6 px there. And a page echoing a long id (a 404's) stays inside the window."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from medina.web import BotGame, RatingStep, StandingRow, Standings
from playwright.sync_api import Browser, Page

from .conftest import ArenaThread, PageErrors, finished_id, unexpected

pytestmark = pytest.mark.timeout(300)

#: The least font size, in CSS pixels as rendered, of the text checked.
MIN_TEXT_PX = 11.0
PHONE = {"width": 375, "height": 812}
DESKTOP = {"width": 1280, "height": 800}
#: The text checked: the board's coordinates (A..R, 1..13), the plot's numbers and legend.
TEXT = ("#board .label", "#plot .plot-label", "#plot .plot-legend")

# Each text element's rendered font size (its font size in the SVG's units times the SVG's
# scale) and whether its box lies inside its SVG's.
RENDERED = """(selector) => [...document.querySelectorAll(selector)].map((t) => {
  const svg = t.ownerSVGElement.getBoundingClientRect();
  const box = t.getBoundingClientRect();
  return {
    text: t.textContent,
    px: parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a,
    inside: box.left >= svg.left - 0.5 && box.right <= svg.right + 0.5 &&
      box.top >= svg.top - 0.5 && box.bottom <= svg.bottom + 0.5,
  };
})"""


def check_text(page: Page, where: str, text: tuple[str, ...] = TEXT) -> None:
    for selector in text:
        found = page.evaluate(RENDERED, selector)
        assert found, f"{where}: no {selector}"
        # (less a rounding error of the float arithmetic)
        small = [(t["text"], t["px"]) for t in found if t["px"] < MIN_TEXT_PX - 1e-3]
        assert small == [], f"{where}: {selector} under {MIN_TEXT_PX} px"
        out = [t["text"] for t in found if not t["inside"]]
        assert out == [], f"{where}: {selector} outside its drawing"
    size = page.viewport_size
    assert size is not None
    assert page.evaluate("document.documentElement.scrollWidth") <= size["width"], where


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["375px", "1280px"])
def test_board_and_plot_text_is_readable_on_a_phone_as_on_a_desktop(
    arena: ArenaThread, browser: Browser, viewport: dict[str, int]
) -> None:
    match_id = finished_id(arena)
    context = browser.new_context(viewport=viewport)  # type: ignore[arg-type]
    page = context.new_page()
    errors = PageErrors(page)
    try:
        for path, drawn in (
            (f"/replay/{match_id}?step=60", 'body[data-ready="yes"]'),
            (f"/live/{match_id}", 'body[data-state="over"]'),
        ):
            page.goto(f"{arena.url}{path}")
            page.wait_for_selector(drawn)
            check_text(page, f"{path} at {viewport['width']} px")
        assert unexpected(errors) == []
    finally:
        context.close()


def test_the_plot_is_drawn_again_when_the_window_narrows(
    arena: ArenaThread, browser: Browser
) -> None:
    # A desktop window made a phone's width (or a phone turned): the plot is drawn again at
    # its new width, its cursor where it was, and the board's coordinates grow with it.
    context = browser.new_context(viewport=DESKTOP)  # type: ignore[arg-type]
    page = context.new_page()
    errors = PageErrors(page)
    try:
        page.goto(f"{arena.url}/replay/{finished_id(arena)}?step=60")
        page.wait_for_selector('body[data-ready="yes"]')
        page.set_viewport_size(PHONE)  # type: ignore[arg-type]
        page.wait_for_function(
            "() => document.getElementById('plot').viewBox.baseVal.width < 400", timeout=10_000
        )
        check_text(page, "/replay resized to 375 px")
        assert page.locator("#plot").get_attribute("data-cursor") == "60"
        assert page.locator("#plot .plot-cursor").get_attribute("visibility") == "visible"
        assert unexpected(errors) == []
    finally:
        context.close()


#: A bot with a rating over 30 games, for its page's plot.
RATED = "rated-bot"


@pytest.fixture(scope="module")
def rated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ArenaThread]:
    """A server whose standings have RATED's 30 games and its rating after each."""
    games = tuple(
        BotGame(n, "medina-v2 2p", (RATED, "other"), 0, 1 + n % 2, 30, "normal", f"m{n}")
        for n in range(30)
    )
    history = tuple(
        RatingStep(n, 25.0 + n / 10, 25.0 + n / 10 - 8 + n / 5, 25.0 + n / 10 + 8 - n / 5)
        for n in range(1, 31)
    )
    table = Standings(
        title="Rated",
        rows=(StandingRow(RATED, 28.0, 20.0, 36.0, 30),),
        games={RATED: games},
        history={RATED: history},
    )
    a = ArenaThread(tmp_path_factory.mktemp("rated"), standings=table)
    try:
        yield a
    finally:
        a.close()


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["375px", "1280px"])
def test_the_rating_plot_text_is_readable_on_a_phone_as_on_a_desktop(
    rated: ArenaThread, browser: Browser, viewport: dict[str, int]
) -> None:
    # The plot is drawn on the server, without a script: its text used to be 6 px at 375 px.
    context = browser.new_context(viewport=viewport)  # type: ignore[arg-type]
    page = context.new_page()
    errors = PageErrors(page)
    try:
        page.goto(f"{rated.url}/standings/bot/{RATED}")
        check_text(page, f"the bot page at {viewport['width']} px", ("#rating-plot .axis",))
        labels = page.locator("#rating-plot .axis").all_text_contents()
        assert "game 1" in labels and "game 30" in labels
        # The band fills the plot area (inside the axes' margins), which fills most of the
        # plot's width.
        boxes = page.evaluate(
            """() => ['.plot-area', '.band'].map((s) => {
              const b = document.querySelector('#rating-plot ' + s).getBoundingClientRect();
              return [b.left, b.top, b.right, b.bottom];
            })"""
        )
        assert boxes[0] == pytest.approx(boxes[1], abs=0.5)
        assert boxes[0][2] - boxes[0][0] > viewport["width"] / 2 - 60
        assert errors.errors == []
    finally:
        context.close()


@pytest.mark.parametrize("path", ["/live/", "/replay/"])
@pytest.mark.parametrize("length", [40, 5000])
def test_a_not_found_page_wraps_a_long_id_inside_a_phones_window(
    arena: ArenaThread, browser: Browser, path: str, length: int
) -> None:
    # 40 characters made the page 383 px wide at 375, 5000 made it 25,777.
    context = browser.new_context(viewport=PHONE)  # type: ignore[arg-type]
    page = context.new_page()
    try:
        answer = page.goto(f"{arena.url}{path}{'x' * length}")
        assert answer is not None and answer.status == 404
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    finally:
        context.close()
