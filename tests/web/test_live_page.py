"""The live page in a real browser (Debian's Chromium via Playwright): the last move marked
and the score plot growing as the match is played, and a stream that fails for good saying
why within 5 s (too many streams; a server restart that left the match interrupted), with
the replay linked and retries where they can help."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path

import grpc
import pytest
from e2e.rawbot import Chooser, RawBot
from medina.engine import EventKind, result, square_name
from medina.referee.config import MatchSettings
from medina.rpc.common.limits import Limits
from medina.v1 import admin_pb2, admin_pb2_grpc, arena_pb2, game_pb2, match_pb2
from playwright.sync_api import Browser, Page, Request
from stall import NoRoom

from .conftest import (
    ArenaThread,
    PageErrors,
    choose_randomly,
    finished_id,
    screenshot,
    unexpected,
)
from .test_pages import shown_scores

pytestmark = pytest.mark.timeout(300)

#: The bar: a failed stream says why within this many milliseconds.
SAYS_WHY_MS = 5_000

# Records every value the plot's point count takes, to see it grow message by message. Each
# message shown sets it once; messages read in one chunk (a loaded browser) are shown in one
# task and reach the observer together, so each record's value is read from the next
# record's old value (the last one's from the attribute).
WATCH_PLOT = """() => {
  window.plotPoints = [];
  const plot = document.getElementById("plot");
  new MutationObserver((records) => records.forEach((r, i) => window.plotPoints.push(
    Number(i + 1 < records.length ? records[i + 1].oldValue : plot.dataset.points))))
    .observe(plot, { attributes: true, attributeFilter: ["data-points"], attributeOldValue: true });
}"""


def test_the_live_page_marks_the_last_move_and_grows_the_score_plot(
    arena: ArenaThread, page: Page
) -> None:
    hosted = arena.create(MatchSettings("medina-v2", 3, 12))
    page.goto(f"{arena.url}/live/{hosted.match_id}")
    page.wait_for_selector('body[data-connection="open"]')
    assert page.locator("#plot").get_attribute("data-points") == "1"  # the start
    assert page.locator("#board").get_attribute("data-last") == ""
    page.evaluate(WATCH_PLOT)
    played = arena.play(hosted, 80)
    page.wait_for_selector('body[data-state="over"]', timeout=90_000)
    played.result(60)
    state = hosted.match.state
    outcome = hosted.match.outcome
    assert outcome is not None
    grown: list[int] = page.evaluate("window.plotPoints")
    # It grew message by message (how many depends on how the news was batched).
    assert grown == sorted(grown) and len(set(grown)) >= 2, grown
    assert grown[-1] == state.decisions + 1
    plot = page.locator("#plot")
    assert plot.get_attribute("data-points") == str(state.decisions + 1)
    lines = plot.locator("polyline.score-line")
    assert [int(lines.nth(i).get_attribute("data-last") or "-1") for i in range(3)] == [
        s.total for s in outcome.seats
    ]
    # The board marks the match's last move; the list highlights it, in view.
    moves = [e for e in state.events_since(0) if e.kind in (EventKind.PLACED, EventKind.TEA_SPENT)]
    last = moves[-1]
    square = square_name(state.rules.geometry, last.square)
    expected = square if last.kind is EventKind.PLACED else "tea"
    assert page.locator("#board").get_attribute("data-last") == expected
    current = page.locator("#moves li.current")
    assert current.count() == 1 and current.is_visible()
    assert current.inner_text().startswith(f"seat {last.seat}: ")
    assert current.inner_text().endswith(square if expected != "tea" else "tea break")


def test_a_page_opened_after_the_end_has_the_whole_story(arena: ArenaThread, page: Page) -> None:
    match_id = finished_id(arena)
    hosted = arena.running.arena.get(match_id)
    assert hosted is not None and hosted.match.outcome is not None
    page.goto(f"{arena.url}/live/{match_id}")
    page.wait_for_selector('body[data-state="over"]')
    assert page.locator("#plot").get_attribute("data-points") == str(
        hosted.match.state.decisions + 1
    )
    assert shown_scores(page) == list(result(hosted.match.state).totals)


#: The live page's last moves: each line's number (its ``value``; 0 when unnumbered), text
#: and whether it is shown unnumbered.
LIVE_MOVES = """() => [...document.querySelectorAll("#moves li")].map(
  (li) => [li.value, li.textContent, getComputedStyle(li).listStyleType === "none"])"""


def test_the_last_moves_are_numbered_by_step_as_the_replay_numbers_them(
    arena: ArenaThread, page: Page
) -> None:
    match_id = finished_id(arena)
    hosted = arena.running.arena.get(match_id)
    assert hosted is not None
    page.goto(f"{arena.url}/live/{match_id}")
    page.wait_for_selector('body[data-state="over"]')
    lines: list[tuple[int, str, bool]] = page.evaluate(LIVE_MOVES)
    numbered = [(n, text) for n, text, unnumbered in lines if not unnumbered]
    # Passes and the game's end are listed unnumbered (no decision); the newest decision is
    # the match's last step.
    assert all(text == "game over" or text.endswith(": passes") for n, text, u in lines if u)
    assert numbered[-1][0] == hosted.match.state.decisions
    assert [n for n, _text in numbered] == list(
        range(numbered[-1][0] - len(numbered) + 1, numbered[-1][0] + 1)
    )
    page.goto(f"{arena.url}/replay/{match_id}")
    page.wait_for_selector('body[data-ready="yes"]')
    replayed = page.locator("#movelist li").all_inner_texts()  # step N is item N
    assert numbered == [(n, replayed[n - 1]) for n, _text in numbered]


def test_a_match_waiting_for_its_bots_shows_no_clock(arena: ArenaThread, page: Page) -> None:
    hosted = arena.create(MatchSettings("medina-v2", 2, 31))
    try:
        page.goto(f"{arena.url}/live/{hosted.match_id}")
        page.wait_for_function("() => Number(document.body.dataset.updates) >= 1")
        assert "waiting for the bots" in page.locator("#status").inner_text()
        # Nobody is to move yet: no allowance counts down (the page draws the clock as soon
        # as it shows a message, then every 200 ms).
        assert page.locator("#clock").inner_text() == ""
        page.wait_for_function(
            "() => { window.ticks = (window.ticks || 0) + 1; return window.ticks > 3; }",
            polling=300,
        )
        assert page.locator("#clock").inner_text() == ""
    finally:
        hosted.match.abort("test over")
        arena.call(hosted.match.wait_done())


@pytest.fixture
def one_stream_each(tmp_path: Path) -> Iterator[ArenaThread]:
    a = ArenaThread(tmp_path, limits=Limits(max_streams_per_client=1, limit_loopback=True))
    try:
        yield a
    finally:
        a.close()


def test_too_many_streams_is_said_within_5_s_and_retried_until_a_stream_is_free(
    one_stream_each: ArenaThread, browser: Browser
) -> None:
    a = one_stream_each
    hosted = a.create(MatchSettings("medina-v2", 2, 1))
    context = browser.new_context()
    try:
        first, second = context.new_page(), context.new_page()
        errors = [PageErrors(first), PageErrors(second)]
        url = f"{a.url}/live/{hosted.match_id}"
        first.goto(url)
        first.wait_for_selector('body[data-connection="open"]')
        second.goto(url)
        second.wait_for_selector('body[data-connection="retrying"]', timeout=SAYS_WHY_MS)
        said = second.locator("#status").inner_text()
        assert "too many live streams from this address" in said
        assert "the limit is 1" in said and "retrying in" in said
        first.close()  # its stream ends: the retry gets in (waits grow to 4 s at most)
        second.wait_for_selector('body[data-connection="open"]', timeout=15_000)
        assert "waiting for the bots" in second.locator("#status").inner_text()
        assert unexpected(errors[0]) == unexpected(errors[1]) == []
    finally:
        context.close()
        hosted.match.abort("test over")
        a.call(hosted.match.wait_done())


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def start_serve(records: Path, http: int) -> tuple[subprocess.Popen[str], str]:
    """``medina-arena serve`` with its viewer on ``http``; the process and its gRPC address."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "medina.cli", "serve", "--port", "0", "--http", str(http),
         "--records", str(records)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    assert proc.stdout is not None
    address = ""
    for line in proc.stdout:
        if line.startswith("medina-arena listening on "):
            address = line.split()[-1]
        if "viewer on" in line:
            return proc, address
    raise AssertionError(f"serve ended before its viewer started (exit {proc.wait()})")


def test_a_server_restart_that_interrupted_the_match_is_said_within_5_s_with_the_replay(
    tmp_path: Path, browser: Browser
) -> None:
    http = free_port()
    proc, address = start_serve(tmp_path, http)
    context = browser.new_context(viewport={"width": 1100, "height": 760})
    page = context.new_page()
    errors = PageErrors(page)
    bots = BotThread()
    try:
        with grpc.insecure_channel(address) as channel:
            config = match_pb2.MatchConfig(
                ruleset=1,  # type: ignore[arg-type]
                players=2,
                seed=3,
                time_control=match_pb2.TimeControl(decision_ms=600_000),
            )
            created = admin_pb2_grpc.MatchServiceStub(channel).CreateMatch(
                admin_pb2.CreateMatchRequest(config=config), timeout=30
            )
        match_id = created.match_id
        page.goto(f"http://127.0.0.1:{http}/live/{match_id}")
        page.wait_for_selector('body[data-connection="open"]')
        bots.play(address, [t.token for t in created.tokens], replies=STALL_AFTER)
        # Spectators hear of a decision once the next reply is in (referee/match.py
        # broadcasts off the deciding seat's critical path): the page shows one fewer.
        page.wait_for_selector(f'body[data-decisions="{STALL_AFTER - 1}"]')
        proc.kill()  # a crash mid-match: its record is left without its outcome
        proc.wait(30)
        page.wait_for_selector('body[data-connection="retrying"]', timeout=SAYS_WHY_MS)
        assert "retrying in" in page.locator("#status").inner_text()
        proc, _address = start_serve(tmp_path, http)
        page.wait_for_selector('body[data-state="interrupted"]', timeout=SAYS_WHY_MS)
        said = page.locator("#status").inner_text()
        assert said == (
            f"match '{match_id}' is not hosted here; its record is unfinished: no outcome "
            "line yet (still being played, or its server stopped during the match)"
        )
        link = page.locator("#replay-link")
        assert link.is_visible() and link.get_attribute("href") == f"/replay/{match_id}"
        screenshot(page, tmp_path, "live-unfinished")
        link.click()
        page.wait_for_selector('body[data-ready="yes"]')
        assert page.locator("body").get_attribute("data-steps") == str(STALL_AFTER)
        assert "supplies hidden (no outcome recorded)" in page.locator("#status").inner_text()
        assert unexpected(errors) == []
    finally:
        context.close()
        proc.kill()
        proc.wait(30)
        bots.close()


#: Replies the bots give in all before they stop answering (the match then waits on).
STALL_AFTER = 8


class BotThread:
    """RawBots on an event loop of their own: random replies until ``replies`` were given
    in all, then none (the match waits for the next one as long as its clock allows)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.futures: list[Future[None]] = []

    def play(self, address: str, tokens: list[str], replies: int) -> None:
        given = [0]

        def stalling(seed: int) -> Chooser:
            randomly = choose_randomly(seed)

            def choose(request: arena_pb2.DecisionRequest, attempt: int) -> game_pb2.Action | None:
                if given[0] >= replies:
                    return None
                given[0] += 1
                action: game_pb2.Action = randomly(request, attempt)
                return action

            return choose

        for seat, token in enumerate(tokens):
            bot = RawBot(address, token, chooser=stalling(seat), name=f"bot-{seat}")
            bot.keep_status = True  # the server goes away under it
            self.futures.append(asyncio.run_coroutine_threadsafe(bot.play(), self.loop))

    def close(self) -> None:
        for future in self.futures:
            with contextlib.suppress(Exception):
                future.result(30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


def test_a_match_held_in_the_start_queue_says_so_then_plays(
    tmp_path: Path, browser: Browser
) -> None:
    a = ArenaThread(tmp_path)
    try:

        async def hold() -> NoRoom:
            return NoRoom(a.running)

        room = a.call(hold())  # on the server's loop, whose ticks it hooks
        hosted = a.create(MatchSettings("medina-v2", 2, 1))
        played = a.play(hosted, 7)
        page = browser.new_page()
        errors = PageErrors(page)
        page.goto(f"{a.url}/live/{hosted.match_id}")
        queued = "queued: its bots are here; it starts when the server has room (0 ahead)"
        page.wait_for_function(
            "text => document.getElementById('status').innerText.includes(text)", arg=queued
        )

        async def release() -> None:
            room.release()

        a.call(release())
        played.result(120)
        page.wait_for_selector('body[data-state="over"]', timeout=15_000)
        assert "queued" not in page.locator("#status").inner_text()
        assert unexpected(errors) == []
        page.close()
    finally:
        a.close()


#: Makes a page's document hidden, as a browser does for a background tab (or shown again).
SET_VISIBILITY = """(state) => {
  Object.defineProperty(document, "visibilityState", { value: state, configurable: true });
  document.dispatchEvent(new Event("visibilitychange"));
}"""

#: Live pages open at once in one browser: as many HTTP/1.1 connections as it keeps to a host.
PER_HOST = 6


def wait_for_streams(a: ArenaThread, match_id: str, pages: int) -> None:
    """Wait (10 s at most) until the viewer sends ``match_id``'s messages to ``pages`` pages
    (its fan-out's count) and follows the match for them with one spectator subscription
    (none for no page)."""
    viewer = a.http.app.state.viewer
    hosted = a.running.arena.get(match_id)
    assert hosted is not None

    def held() -> tuple[int, int]:
        return viewer.fanout.pages(match_id), hosted.match.watchers

    async def until() -> None:
        async with asyncio.timeout(10):
            while held() != (pages, min(pages, 1)):
                await asyncio.sleep(0.02)

    async def now() -> tuple[int, int]:
        return held()

    try:
        a.call(until())
    except TimeoutError:
        raise AssertionError(
            f"(pages, subscriptions) of the match are {a.call(now())}, not {(pages, min(pages, 1))}"
        ) from None


def requested(page: Page) -> list[str]:
    """The URLs ``page`` asks for from now on (the list grows as it does)."""
    urls: list[str] = []

    def add(request: Request) -> None:
        urls.append(request.url)

    page.on("request", add)
    return urls


def test_hidden_live_tabs_close_their_streams_so_a_7th_page_loads_and_reopen_when_shown(
    arena: ArenaThread, browser: Browser
) -> None:
    hosted = arena.create(MatchSettings("medina-v2", 3, 43))
    url = f"{arena.url}/live/{hosted.match_id}"
    context = browser.new_context()
    context.set_default_timeout(30_000)
    try:
        tabs = [context.new_page() for _ in range(PER_HOST)]
        errors = [PageErrors(tab) for tab in tabs]
        asked = [requested(tab) for tab in tabs]
        for tab in tabs:
            tab.goto(url)
            tab.wait_for_selector('body[data-connection="open"]')
        wait_for_streams(arena, hosted.match_id, PER_HOST)
        for tab in tabs:
            tab.evaluate(SET_VISIBILITY, "hidden")
        wait_for_streams(arena, hosted.match_id, 0)
        for tab in tabs:
            assert tab.locator("body").get_attribute("data-connection") == "paused"
        # Every connection the browser keeps to the viewer is free: another page loads.
        seventh = context.new_page()
        seventh.goto(f"{arena.url}/", timeout=10_000)
        assert seventh.locator("#listing").is_visible()
        # Shown again, a tab opens its stream again and follows the match to its end.
        shown = tabs[0]
        shown.evaluate(SET_VISIBILITY, "visible")
        shown.wait_for_selector('body[data-connection="open"]')
        wait_for_streams(arena, hosted.match_id, 1)
        played = arena.play(hosted, 90)
        shown.wait_for_selector('body[data-state="over"]', timeout=90_000)
        played.result(60)
        assert shown.locator("body").get_attribute("data-decisions") == str(
            hosted.match.state.decisions
        )
        # Hidden and shown again, the ended match's page stays as it is, with no stream.
        said = shown.locator("#status").inner_text()
        shown.evaluate(SET_VISIBILITY, "hidden")
        shown.evaluate(SET_VISIBILITY, "visible")
        assert shown.locator("#status").inner_text() == said
        assert shown.locator("body").get_attribute("data-state") == "over"
        # The hidden tabs asked for no stream since (no retries while hidden).
        streams = [sum(u.endswith("/events") for u in urls) for urls in asked]
        assert streams == [2] + [1] * (PER_HOST - 1), streams
        assert all(unexpected(e) == [] for e in errors)
    finally:
        context.close()
