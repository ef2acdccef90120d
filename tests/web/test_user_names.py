"""Names chosen by others on the viewer's pages (bot names, seat names, ladder versions): a
version with a slash still has its bot page, a name with bidi controls cannot turn the text
around it, and names of 100 characters (the longest a seat name may be) leave every page
inside the window, at a desktop's width as at a phone's."""

from __future__ import annotations

import urllib.request
from collections.abc import Iterator
from urllib.parse import quote

import pytest
from medina.web import BotGame, RatingStep, StandingRow, Standings
from playwright.sync_api import Page

from .conftest import ArenaThread

pytestmark = pytest.mark.timeout(300)

#: A ladder bot whose version is a branch name.
SLASHED = "gamma@feat/new-eval"


def standings() -> Standings:
    """A ladder-like table naming the bots above."""
    bots = (SLASHED,)
    games: dict[str, tuple[BotGame, ...]] = {
        bot: (BotGame(0, "medina-v2 2p", (bot, "other"), 0, 1, 30, "normal", "no-such-match"),)
        for bot in bots
    }
    return Standings(
        title="Names",
        rows=tuple(StandingRow(b, 1500.0, 1450.0, 1550.0, 1) for b in bots),
        games=games,
        history={b: (RatingStep(1, 1500.0, 1450.0, 1550.0),) for b in bots},
    )


@pytest.fixture(scope="module")
def named(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ArenaThread]:
    """A server whose standings name the bots above."""
    a = ArenaThread(tmp_path_factory.mktemp("names"), standings=standings())
    try:
        yield a
    finally:
        a.close()


def test_a_version_with_a_slash_has_its_bot_page(named: ArenaThread, page: Page) -> None:
    url = f"{named.url}/standings/bot/{quote(SLASHED, safe='')}"
    with urllib.request.urlopen(url, timeout=30) as response:
        assert response.status == 200
    page.goto(f"{named.url}/standings")
    page.locator("#standings a", has_text=SLASHED).click()
    page.wait_for_selector("#bot-games")
    assert SLASHED in page.locator("h1").inner_text()
