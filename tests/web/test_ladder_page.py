"""The ladder's pages in a real browser: the standings follow the ladder as it plays
(without a reload), each bot version's page plots its rating over time and links its
recent games to their replays."""

from __future__ import annotations

from pathlib import Path

import pytest
from ladder.harness import Bots, LadderServer, add_bot, wait_until
from medina.storage.ladder import LadderStore
from playwright.sync_api import Page

pytestmark = pytest.mark.timeout(300)


def test_the_ladder_page_is_live(tmp_path: Path, page: Page) -> None:
    db = str(tmp_path / "ladder.db")
    keys = {name: add_bot(db, name) for name in ("left", "right", "third")}
    server = LadderServer.start(
        db, tmp_path, "web", "--offer", "medina-v2:2:300", "--seed", "4", "--http", "0"
    )
    bots = Bots(tmp_path)
    store = LadderStore(db)
    try:
        for name, key in keys.items():
            bots.sdk(name, server.address, key, "--bot-version", "v1")
        wait_until(lambda: store.counts().get("finished", 0) >= 2, 90, "two ladder matches")
        page.goto(f"{server.viewer}/standings")
        rows = page.locator("#standings tbody tr")
        assert rows.count() == 3
        assert {rows.nth(i).get_attribute("data-bot") for i in range(3)} == {
            "left@v1",
            "right@v1",
            "third@v1",
        }
        shown = page.locator("#standings").inner_text()
        # Live: the table changes as matches end, with no reload of the page.
        page.evaluate("window.__marker = 1")
        page.wait_for_function(
            "shown => document.getElementById('standings').innerText !== shown",
            arg=shown,
            timeout=60_000,
        )
        assert page.evaluate("window.__marker") == 1
        page.locator("#standings a", has_text="left@v1").click()
        page.wait_for_selector("#rating-plot")
        games = page.locator("#bot-games tbody tr")
        assert games.count() >= 1
        replay = page.locator("#bot-games tbody tr a").first
        href = replay.get_attribute("href") or ""
        assert href.startswith("/replay/")
        replay.click()
        # The replay loaded (its JSON built), not only the page's board drawn.
        page.wait_for_selector('body[data-ready="yes"]')
        page.wait_for_selector("#board")
    finally:
        bots.kill_all()
        server.stop()
