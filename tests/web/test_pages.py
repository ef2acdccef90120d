"""The viewer in a real browser (Debian's Chromium via Playwright): every page renders without
JavaScript errors, the live page follows a match to its end without a reload, and the replay
page shows, at each step, the engine's board and scores."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from medina.engine import GameState, result
from medina.records.reader import read_record
from medina.records.replay import replay, start_state
from medina.referee.config import MatchSettings, TimeControl
from playwright.sync_api import Browser, Page

from .conftest import (
    STANDINGS,
    ArenaThread,
    HoldOne,
    PageErrors,
    distinct_colours,
    finished_id,
    screenshot,
    unexpected,
)

pytestmark = pytest.mark.timeout(300)


def engine_states(path: Path) -> list[GameState]:
    """The engine's state after 0, 1, 2, ... decisions of a record."""
    record = read_record(path)
    _settings, state = start_state(record)
    states = [state]
    states.extend(step.after for step in replay(record))
    return states


def board_counts(page: Page) -> dict[str, int]:
    board = page.locator("#board")
    return {
        "buildings": board.locator("rect.building").count(),
        "stables": board.locator("rect.stable").count(),
        "walls": board.locator("rect.wall").count(),
        "merchants": board.locator("circle.merchant").count(),
        "rooftops": board.locator(".rooftop").count(),
    }


def engine_counts(s: GameState) -> dict[str, int]:
    return {
        "buildings": sum(m.bit_count() for m in s.buildings),
        "stables": s.stables.bit_count(),
        "walls": s.walls.bit_count(),
        "merchants": s.merchants.bit_count(),
        "rooftops": sum(1 for p in s.palaces if p.claimed),
    }


def shown_scores(page: Page) -> list[int]:
    rows = page.locator("#scores tr[data-seat]")
    return [int(rows.nth(i).get_attribute("data-score") or "-1") for i in range(rows.count())]


def assert_drawn(data: bytes) -> None:
    assert distinct_colours(data) > 12, "the screenshot is (nearly) blank"


def test_the_live_page_follows_a_match_to_its_final_scores(
    arena: ArenaThread, page: Page, tmp_path: Path
) -> None:
    # A clock no held request runs out of: seat 0 holds a request until the page has shown
    # the first decisions, so that news comes in more than one message however fast the
    # bots play (on a loaded machine the whole match once came in one).
    settings = MatchSettings("medina-v2", 3, 11, time=TimeControl(decision_ms=60_000))
    hosted = arena.create(settings)
    hold = HoldOne(4)
    page.goto(f"{arena.url}/live/{hosted.match_id}")
    # A function, not an expression: Playwright polls an expression with eval, which the
    # page's Content-Security-Policy refuses once the first check comes back false.
    page.wait_for_function("() => Number(document.body.dataset.updates) >= 1")
    assert "waiting for the bots" in page.locator("#status").inner_text()
    page.evaluate("window.loadedOnce = 'yes'")
    played = arena.play(hosted, 70, hold)
    page.wait_for_function("() => Number(document.body.dataset.decisions) >= 3")
    assert hold.taken.wait(60), "seat 0 was never asked after the first 3 decisions"
    arena.loop.call_soon_threadsafe(hold.release)
    page.wait_for_selector('body[data-state="over"]', timeout=90_000)
    played.result(60)
    outcome = hosted.match.outcome
    assert outcome is not None and outcome.complete
    final = page.locator("#result tr[data-seat]")
    totals = {
        int(final.nth(i).get_attribute("data-seat") or "-1"): int(
            final.nth(i).get_attribute("data-total") or "-1"
        )
        for i in range(final.count())
    }
    assert totals == {s.seat: s.total for s in outcome.seats}
    assert shown_scores(page) == list(result(hosted.match.state).totals)
    assert board_counts(page) == engine_counts(hosted.match.state)
    # The same page all along: no reload; news came in several messages (the waiting
    # snapshot, the first decisions, the rest).
    assert page.evaluate("window.loadedOnce") == "yes"
    assert int(page.evaluate("document.body.dataset.updates")) > 2
    assert page.locator("#replay-link").is_visible()
    # A spectator never sees a hidden supply.
    assert page.locator("#scores td.supply.hidden").count() == 3
    assert_drawn(screenshot(page, tmp_path, "live", full_page=True))


@pytest.fixture(scope="module")
def states(arena: ArenaThread) -> Iterator[tuple[str, list[GameState]]]:
    match_id = finished_id(arena)
    hosted = arena.running.arena.get(match_id)
    assert hosted is not None
    yield match_id, engine_states(hosted.record_path)


def test_the_replay_page_shows_the_engine_board_at_each_step(
    arena: ArenaThread, states: tuple[str, list[GameState]], page: Page, tmp_path: Path
) -> None:
    match_id, expected = states
    page.goto(f"{arena.url}/replay/{match_id}")
    page.wait_for_selector('body[data-ready="yes"]')
    last = len(expected) - 1
    assert page.locator("body").get_attribute("data-steps") == str(last)
    assert page.locator("#movelist li").count() == last
    for step in sorted({0, 1, 7, last // 3, last // 2, last - 1, last}):
        page.locator("#slider").fill(str(step))
        page.wait_for_selector(f'body[data-step="{step}"]')
        assert shown_scores(page) == list(result(expected[step]).totals), f"step {step}"
        assert board_counts(page) == engine_counts(expected[step]), f"step {step}"
        assert page.locator("#board").get_attribute("data-decisions") == str(
            expected[step].decisions
        )
    # After the match, the record's full state is shown: every supply.
    assert page.locator("#scores td.supply.hidden").count() == 0
    assert page.locator("#result").is_visible()
    # The docs' picture: a step in the middle (its move marked, the plot's cursor there).
    page.locator("#slider").fill(str(last // 2))
    page.wait_for_selector(f'body[data-step="{last // 2}"]')
    assert_drawn(screenshot(page, tmp_path, "replay", full_page=True))


def test_the_replay_page_steps_with_the_keyboard_and_buttons(
    arena: ArenaThread, states: tuple[str, list[GameState]], page: Page
) -> None:
    match_id, expected = states
    last = len(expected) - 1
    page.goto(f"{arena.url}/replay/{match_id}")
    page.wait_for_selector('body[data-ready="yes"]')

    def at(step: int) -> None:
        page.wait_for_selector(f'body[data-step="{step}"]')
        assert shown_scores(page) == list(result(expected[step]).totals)

    page.keyboard.press("End")
    at(last)
    page.keyboard.press("Home")
    at(0)
    for _ in range(3):
        page.keyboard.press("ArrowRight")
    at(3)
    page.keyboard.press("ArrowLeft")
    at(2)
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")  # never below the start
    at(0)
    page.click("#last")
    at(last)
    page.keyboard.press("ArrowRight")  # never past the end
    at(last)
    page.click("#prev")
    at(last - 1)
    page.click("#first")
    at(0)
    page.click("#next")
    at(1)
    page.locator("#movelist li").nth(9).click()
    at(10)
    assert page.locator("#movelist li.current").inner_text().startswith("seat ")


def test_the_matches_page_lists_matches_with_links(
    arena: ArenaThread, page: Page, tmp_path: Path
) -> None:
    match_id = finished_id(arena)
    page.goto(f"{arena.url}/")
    row = page.locator(f'tr[data-match="{match_id}"]')
    assert row.get_attribute("data-state") == "finished"
    assert "random-0" in row.inner_text()
    assert_drawn(screenshot(page, tmp_path, "matches"))
    row.locator("a.replay").click()
    page.wait_for_selector('body[data-ready="yes"]')
    assert page.url.endswith(f"/replay/{match_id}")


def test_the_matches_page_refreshes_by_itself_filters_by_state_and_pages(
    arena: ArenaThread, page: Page
) -> None:
    page.goto(f"{arena.url}/")
    first = page.locator("body").get_attribute("data-etag")
    hosted = arena.create(MatchSettings("medina-v2", 2, 21))
    try:
        # No reload: the page asks with its ETag and redraws when the list changed.
        row = page.locator(f'tr[data-match="{hosted.match_id}"]')
        row.wait_for(timeout=15_000)
        assert row.get_attribute("data-state") == "waiting"
        assert page.locator("body").get_attribute("data-etag") != first
        assert (
            page.locator("#listing tr[data-match]").first.get_attribute("data-match")
            == hosted.match_id
        )  # newest first
        page.click('a[data-filter="finished"]')
        page.wait_for_url("**/?state=finished")
        states = page.locator("#listing tr[data-match]")
        assert states.count() >= 1
        assert {states.nth(i).get_attribute("data-state") for i in range(states.count())} == {
            "finished"
        }
        page.goto(f"{arena.url}/?per=1")
        assert page.locator("#listing tr[data-match]").count() == 1
        assert page.locator("p.pager .shown").first.inner_text().startswith("1 to 1 of ")
        page.locator('a[rel="next"]').first.click()
        page.wait_for_url("**/?page=2&per=1")
        assert page.locator("p.pager .shown").first.inner_text().startswith("2 to 2 of ")
        assert page.locator(f'tr[data-match="{hosted.match_id}"]').count() == 0
    finally:
        hosted.match.abort("test over")
        arena.call(hosted.match.wait_done())


def test_the_standings_page_says_when_no_tournament_is_configured(
    arena: ArenaThread, page: Page
) -> None:
    page.goto(f"{arena.url}/standings")
    assert "No tournament database configured" in page.locator("#no-standings").inner_text()


@pytest.fixture(scope="module")
def ladder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ArenaThread]:
    a = ArenaThread(tmp_path_factory.mktemp("ladder"), standings=STANDINGS)
    try:
        yield a
    finally:
        a.close()


def test_the_standings_page_lists_the_bots(ladder: ArenaThread, page: Page, tmp_path: Path) -> None:
    page.goto(f"{ladder.url}/standings")
    rows = page.locator("table.standings tbody tr")
    assert [rows.nth(i).get_attribute("data-bot") for i in range(rows.count())] == [
        "greedy",
        "random",
    ]
    assert "1580.0 to 1660.0" in rows.nth(0).inner_text()
    assert "timeout 1" in rows.nth(0).inner_text()
    assert_drawn(screenshot(page, tmp_path, "standings"))


def test_an_empty_arena_lists_no_matches(ladder: ArenaThread, page: Page) -> None:
    page.goto(f"{ladder.url}/")
    assert "No matches yet" in page.locator("p.empty").inner_text()
    assert str(ladder.running.arena.records_dir) not in page.content()


def test_the_matches_page_says_when_the_server_stops_answering(
    tmp_path: Path, browser: Browser
) -> None:
    # Its list stays as it was, "running" included, so it must say it is out of date.
    a = ArenaThread(tmp_path)
    context = browser.new_context(viewport={"width": 1100, "height": 760})
    page = context.new_page()
    errors = PageErrors(page)
    stopped = False
    try:
        page.goto(f"{a.url}/")
        away = page.locator("#away")
        assert away.count() == 1 and away.is_hidden()
        a.call(a.http.stop())
        stopped = True
        away.wait_for(state="visible", timeout=15_000)
        said = away.inner_text()
        assert said.startswith("the server cannot be reached since ")
        assert "the list below may be out of date; asking again every 3 s" in said
    finally:
        context.close()
        if not stopped:
            a.call(a.http.stop())
        a.call(a.running.stop(1))
        a.loop.call_soon_threadsafe(a.loop.stop)
        a.thread.join(10)
        a.loop.close()
    assert unexpected(errors) == []
