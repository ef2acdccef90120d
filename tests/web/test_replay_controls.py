"""The replay page's controls in a real browser (Debian's Chromium via Playwright): the last
move marked on the board and the move shown kept in view at every step, play and pause, a
link to a step that follows the page, the score plot, the breakdown, the record's download,
and medina-v1-2p's blocking rooftops."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from medina.engine import ActionKind, EventKind, GameState, result, square_name
from medina.records.writer import RecordWriter
from medina.referee.config import MatchSettings
from medina.referee.local import local_match, random_policy
from playwright.sync_api import Page

from .conftest import ArenaThread, finished_id, screenshot
from .test_pages import engine_states, shown_scores

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def game(arena: ArenaThread) -> Iterator[tuple[str, Path, list[GameState]]]:
    """The arena's finished match: its id, record and the engine's state at every step."""
    match_id = finished_id(arena)
    hosted = arena.running.arena.get(match_id)
    assert hosted is not None
    yield match_id, hosted.record_path, engine_states(hosted.record_path)


def last_move_square(before: GameState, after: GameState) -> str:
    """What the board should mark after a step: the placement's square, or "tea"."""
    for e in after.events_since(before.n_events):
        if e.kind is EventKind.PLACED:
            return square_name(after.rules.geometry, e.square)
        if e.kind is EventKind.TEA_SPENT:
            return "tea"
    raise AssertionError("a step without a move")


def open_replay(page: Page, arena: ArenaThread, record: str, query: str = "") -> None:
    page.goto(f"{arena.url}/replay/{record}{query}")
    page.wait_for_selector('body[data-ready="yes"]')


# Every step, driven through the slider in the page: what the board marks, and whether the
# highlighted move lies inside the move list's visible box.
EVERY_STEP = """(last) => {
  const slider = document.getElementById("slider");
  const list = document.getElementById("movelist");
  const out = [];
  for (let n = 0; n <= last; n++) {
    slider.value = String(n);
    slider.dispatchEvent(new Event("input"));
    const current = list.querySelectorAll("li.current");
    let visible = current.length === 0;
    if (current.length === 1) {
      const box = list.getBoundingClientRect(), item = current[0].getBoundingClientRect();
      visible = item.top >= box.top - 0.5 && item.bottom <= box.bottom + 0.5;
    }
    out.push({
      step: Number(document.body.dataset.step),
      marked: document.getElementById("board").getAttribute("data-last"),
      rings: document.querySelectorAll("#board .last-move").length,
      current: current.length,
      visible,
    });
  }
  return out;
}"""


def test_every_step_marks_its_move_on_the_board_and_keeps_it_in_view_in_the_list(
    arena: ArenaThread, game: tuple[str, Path, list[GameState]], page: Page
) -> None:
    match_id, _path, states = game
    last = len(states) - 1
    open_replay(page, arena, match_id)
    seen = page.evaluate(EVERY_STEP, last)
    assert [s["step"] for s in seen] == list(range(last + 1))
    assert seen[0] == {"step": 0, "marked": "", "rings": 0, "current": 0, "visible": True}
    for n in range(1, last + 1):
        expected = last_move_square(states[n - 1], states[n])
        assert seen[n]["marked"] == expected, f"step {n}"
        assert seen[n]["rings"] == (0 if expected == "tea" else 1), f"step {n}"
        assert seen[n]["current"] == 1 and seen[n]["visible"], f"step {n}: move out of view"


@pytest.mark.parametrize("where", [40, 78, -1])
def test_the_move_shown_is_in_view_after_a_jump(
    arena: ArenaThread, game: tuple[str, Path, list[GameState]], page: Page, where: int
) -> None:
    """The steps the scroll bug hid (40, 78 and the last of the game), reached by a link
    and by the keyboard."""
    match_id, _path, states = game
    step = where % len(states)
    open_replay(page, arena, match_id, f"?step={step}")
    page.wait_for_selector(f'body[data-step="{step}"]')
    current = page.locator("#movelist li.current")
    assert current.inner_text().startswith(f"seat {states[step - 1].to_move}:")
    box = page.locator("#movelist").bounding_box()
    item = current.bounding_box()
    assert box is not None and item is not None
    assert (
        box["y"] - 0.5 <= item["y"] and item["y"] + item["height"] <= box["y"] + box["height"] + 0.5
    )


def test_play_runs_to_the_end_and_pauses(
    arena: ArenaThread, game: tuple[str, Path, list[GameState]], page: Page
) -> None:
    match_id, _path, states = game
    last = len(states) - 1
    open_replay(page, arena, match_id, f"?step={last - 20}")
    page.select_option("#speed", "16")
    page.click("#play")
    assert page.locator("body").get_attribute("data-playing") == "yes"
    page.wait_for_selector(f'body[data-step="{last}"][data-playing="no"]', timeout=15_000)
    assert page.locator("#play").inner_text().endswith("play")
    assert shown_scores(page) == list(result(states[last]).totals)
    assert page.locator("#result").is_visible()
    # Play again from the end starts over; Space pauses it.
    page.click("#play")
    page.wait_for_selector('body:not([data-step="0"]):not([data-step="1"])')
    page.locator("body").press(" ")
    page.wait_for_selector('body[data-playing="no"]')
    stopped = int(page.locator("body").get_attribute("data-step") or "-1")
    assert 2 <= stopped < last
    assert page.locator("#play").inner_text().endswith("play")


def test_a_link_to_a_step_opens_there_and_the_url_follows_the_step(
    arena: ArenaThread, game: tuple[str, Path, list[GameState]], page: Page
) -> None:
    match_id, _path, states = game
    last = len(states) - 1
    open_replay(page, arena, match_id, "?step=17")
    assert page.locator("body").get_attribute("data-step") == "17"
    assert shown_scores(page) == list(result(states[17]).totals)
    page.keyboard.press("ArrowRight")
    page.wait_for_selector('body[data-step="18"]')
    assert page.url.endswith(f"/replay/{match_id}?step=18")
    assert (page.locator("#moment").get_attribute("href") or "").endswith("?step=18")
    open_replay(page, arena, match_id, "#23")
    assert page.locator("body").get_attribute("data-step") == "23"
    assert page.url.endswith("?step=23")
    open_replay(page, arena, match_id, "?step=99999")  # past the end: the last step
    assert page.locator("body").get_attribute("data-step") == str(last)
    page.goto(f"{arena.url}/replay/{match_id}?step=5#9")  # the query wins
    page.wait_for_selector('body[data-step="5"]')


def test_a_new_anchor_takes_the_page_to_its_step(
    arena: ArenaThread, game: tuple[str, Path, list[GameState]], page: Page
) -> None:
    match_id, _path, states = game
    open_replay(page, arena, match_id, "?step=5")  # the URL holds ?step=5 from now on
    page.evaluate("location.hash = '#30'")
    page.wait_for_selector('body[data-step="30"]', timeout=10_000)
    assert shown_scores(page) == list(result(states[30]).totals)
    assert page.url.endswith(f"/replay/{match_id}?step=30")
    page.evaluate("location.hash = '#step=12'")
    page.wait_for_selector('body[data-step="12"]')
    page.evaluate("location.hash = '#30'")  # the same anchor again: the URL dropped it
    page.wait_for_selector('body[data-step="30"]')


# Records whether the page took each key press (preventDefault) and the step after it.
WATCH_KEYS = """() => {
  window.keys = [];
  window.addEventListener("keydown", (e) => window.keys.push(
    { key: e.key, taken: e.defaultPrevented, step: document.body.dataset.step }));
}"""


def test_keys_with_a_modifier_are_left_to_the_browser(
    arena: ArenaThread, game: tuple[str, Path, list[GameState]], page: Page
) -> None:
    match_id, _path, _states = game
    open_replay(page, arena, match_id, "?step=5")
    page.evaluate(WATCH_KEYS)
    for key in ("Alt+ArrowLeft", "Alt+ArrowRight", "Control+ArrowRight", "Meta+End", "Alt+Home"):
        page.keyboard.press(key)
    page.keyboard.press("ArrowRight")  # the one the page takes, after all the others
    # Each press returns once the page has handled its events, so all are recorded by now.
    keys = page.evaluate("window.keys")
    pressed = [k for k in keys if k["key"] not in ("Alt", "Control", "Meta")]
    assert [(k["taken"], k["step"]) for k in pressed] == [(False, "5")] * 5 + [(True, "6")]


def test_the_score_plot_tells_the_game_and_ends_at_the_final_scores(
    arena: ArenaThread, game: tuple[str, Path, list[GameState]], page: Page
) -> None:
    match_id, _path, states = game
    last = len(states) - 1
    outcome = arena.running.arena.matches[match_id].match.outcome
    assert outcome is not None
    open_replay(page, arena, match_id)
    plot = page.locator("#plot")
    assert plot.get_attribute("data-points") == str(last + 1)
    lines = plot.locator("polyline.score-line")
    assert [int(lines.nth(i).get_attribute("data-last") or "-1") for i in range(4)] == [
        s.total for s in outcome.seats
    ]
    claims = sum(
        1
        for e in states[-1].events_since(states[0].n_events)
        if e.kind is EventKind.PLACED and e.piece == ActionKind.ROOFTOP
    )
    assert plot.locator(".mark.claim").count() == claims > 0
    assert plot.locator(".mark.tile").count() > 0
    # A click on the plot jumps to that step; the cursor follows the step shown.
    box = plot.bounding_box()
    assert box is not None
    plot.click(position={"x": box["width"] * 0.6, "y": box["height"] / 2})
    page.wait_for_selector('body:not([data-step="0"])')
    step = page.locator("body").get_attribute("data-step")
    assert plot.get_attribute("data-cursor") == step


def test_each_seat_has_its_score_breakdown(
    arena: ArenaThread, game: tuple[str, Path, list[GameState]], page: Page
) -> None:
    match_id, _path, states = game
    last = len(states) - 1
    open_replay(page, arena, match_id, f"?step={last}")
    totals = result(states[last])
    rows = page.locator("#scores tr.breakdown-row")
    assert rows.count() == 4
    for seat in range(4):
        text = rows.nth(seat).inner_text()
        assert sum(int(n) for n in re.findall(r"\d+", text)) == totals.totals[seat], text
        b = totals.breakdowns[seat]
        if b.palace_tiles:
            assert f"palace tiles {b.palace_tiles}" in text


def test_the_record_downloads_as_the_arena_wrote_it(
    arena: ArenaThread, game: tuple[str, Path, list[GameState]], page: Page
) -> None:
    match_id, path, _states = game
    open_replay(page, arena, match_id)
    with page.expect_download() as info:
        page.click("#download")
    download = info.value
    assert download.suggested_filename == f"{match_id}.jsonl"
    saved = download.path()
    assert saved is not None and Path(saved).read_bytes() == path.read_bytes()


@pytest.fixture(scope="module")
def two_player_v1(arena: ArenaThread) -> Iterator[tuple[str, list[GameState]]]:
    """A medina-v1-2p record in the arena's records directory."""
    writer = RecordWriter(arena.running.arena.records_dir, "v1-2p-game")
    settings = MatchSettings("medina-v1-2p", 2, 6)
    policies = [random_policy(60), random_policy(61)]
    arena.call(local_match("v1-2p-game", settings, policies, writer).run())
    writer.close()
    yield "v1-2p-game", engine_states(writer.path)


def test_v1_2p_shows_each_seats_blocking_rooftops_and_words_unheld_tiles_as_the_rules(
    arena: ArenaThread, two_player_v1: tuple[str, list[GameState]], page: Page, tmp_path: Path
) -> None:
    record, states = two_player_v1
    open_replay(page, arena, record)
    colours = ("grey", "purple", "brown", "orange")
    for step in (0, len(states) // 2, len(states) - 1):
        page.locator("#slider").fill(str(step))
        page.wait_for_selector(f'body[data-step="{step}"]')
        shown = page.locator("#scores span.blocking")
        assert shown.count() == 2
        for seat in range(2):
            mask = states[step].blocking[seat]
            expected = " ".join(c for i, c in enumerate(colours) if (mask >> i) & 1)
            assert shown.nth(seat).get_attribute("data-blocking") == expected, f"step {step}"
            assert shown.nth(seat).inner_text().strip() == str(mask.bit_count())
        if step == len(states) // 2:
            screenshot(page, tmp_path, "replay-v1-2p")
    page.locator("#slider").fill("0")
    page.wait_for_selector('body[data-step="0"]')
    tiles = page.locator("#tiles").inner_text()
    assert "grey palace tile: at the board edge" in tiles
    assert "the board\n" not in tiles + "\n"


def test_a_record_that_stops_short_says_where_and_why(
    page: Page, arena: ArenaThread, game: tuple[str, Path, list[GameState]]
) -> None:
    _match_id, record, states = game
    lines = record.read_bytes().splitlines(keepends=True)
    # No outcome line, and the last decision's line cut mid-write, as a crash leaves it.
    cut = b"".join(lines[:-2]) + lines[-2][: len(lines[-2]) // 2]
    target = arena.running.arena.records_dir / "stops-short.jsonl"
    target.write_bytes(cut)
    try:
        open_replay(page, arena, "stops-short")
        shown = page.locator("#status").inner_text()
        steps = int(page.evaluate("document.body.dataset.steps"))
    finally:
        target.unlink()
    assert steps < len(states) - 1
    assert (
        f"the record stops after {steps} decisions, its last line cut off mid-write "
        "(unfinished: still being played, or its server stopped during the match)"
    ) in shown
