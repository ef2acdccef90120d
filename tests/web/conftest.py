"""Fixtures of the browser tests: Debian's Chromium (installed here when missing) driven by
Playwright, and a real server with its viewer running on an event loop in a thread."""

from __future__ import annotations

import asyncio
import io
import os
import random
import shutil
import subprocess
import threading
from collections.abc import Coroutine, Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any, TypeVar

import pytest
from e2e.rawbot import Hook, RawBot, first_legal
from medina.referee.config import MatchSettings
from medina.rpc.common.config import ServerConfig
from medina.rpc.common.limits import Limits
from medina.rpc.single.host import HostedMatch
from medina.rpc.single.server import RunningServer, start_server
from medina.v1 import arena_pb2, game_pb2
from medina.web import HttpServer, StandingRow, Standings, serve_viewer
from PIL import Image
from playwright.sync_api import Browser, ConsoleMessage, Page, sync_playwright

T = TypeVar("T")

CHROMIUM = Path("/usr/bin/chromium")
#: Set to a directory to also save the pages' screenshots there (docs/viewer.md uses them).
SCREENSHOTS_ENV = "MEDINA_VIEWER_SCREENSHOTS"


def ensure_chromium() -> Path:
    """Debian's chromium, installed with apt-get when missing (the tests run as root)."""
    if CHROMIUM.exists():
        return CHROMIUM
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium (apt-get install chromium)")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update", "-qq"], check=True, timeout=600, env=env)
    subprocess.run(
        ["apt-get", "install", "-y", "-qq", "chromium"], check=True, timeout=900, env=env
    )
    if not CHROMIUM.exists():
        pytest.fail(f"apt-get installed chromium but {CHROMIUM} is still missing")
    return CHROMIUM


@pytest.fixture(scope="session")
def chromium() -> Path:
    """The browser's executable, installed once per session when missing."""
    return ensure_chromium()


# Module scope, not session: Playwright's synchronous API keeps an event loop running on the
# main thread while it is open, and tests elsewhere call asyncio.run() there.
@pytest.fixture(scope="module")
def browser(chromium: Path) -> Iterator[Browser]:
    executable = chromium
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(executable), args=["--no-sandbox"])
        try:
            yield b
        finally:
            b.close()


class PageErrors:
    """JavaScript errors and console errors a page reported."""

    def __init__(self, page: Page) -> None:
        self.errors: list[str] = []
        page.on("console", self._console)
        page.on("pageerror", lambda exc: self.errors.append(f"uncaught: {exc}"))

    def _console(self, message: ConsoleMessage) -> None:
        if message.type == "error":
            self.errors.append(f"console: {message.text}")


def unexpected(errors: PageErrors) -> list[str]:
    """The page's errors but the browser's own reports of the refusals and lost connections
    the test causes (a 404, a 429, a refused connection)."""
    return [e for e in errors.errors if "Failed to load resource" not in e]


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1100, "height": 760})
    p = context.new_page()
    p.set_default_timeout(30_000)
    errors = PageErrors(p)
    try:
        yield p
    finally:
        context.close()
    assert errors.errors == [], "the page reported errors:\n" + "\n".join(errors.errors)


def choose_randomly(seed: int) -> Any:
    """A RawBot chooser playing uniformly random legal actions."""
    rng = random.Random(seed)

    def choose(request: arena_pb2.DecisionRequest, _attempt: int) -> game_pb2.Action:
        options = [
            game_pb2.Action(kind=p.kind, square=sq, colour=p.colour)
            for p in request.legal.placements
            for sq in p.squares
        ]
        if request.legal.tea:
            options.append(game_pb2.Action(kind=game_pb2.ACTION_KIND_TEA))
        return rng.choice(options)

    return choose


class HoldOne:
    """A RawBot hook that holds the first request whose id is ``first_id`` or more (the bot
    does not answer it) until ``release``: the match stays in play, at a known point."""

    def __init__(self, first_id: int) -> None:
        self.first_id = first_id
        self.held: list[tuple[RawBot, arena_pb2.DecisionRequest]] = []
        #: Set once a request is held (for a test on another thread than the bot's).
        self.taken = threading.Event()

    def __call__(self, bot: RawBot, message: arena_pb2.PlayResponse) -> bool:
        if self.held or message.WhichOneof("message") != "request":
            return False
        if message.request.request_id < self.first_id:
            return False
        self.held.append((bot, message.request))
        self.taken.set()
        return True

    def release(self) -> None:
        """Answer the held request (first legal action); on the bot's event loop."""
        holder, request = self.held[0]
        holder.reply(request.request_id, first_legal(request, 0))


async def play_bots(
    running: RunningServer, hosted: HostedMatch, seed: int, hook: Hook | None = None
) -> None:
    """Play every seat of ``hosted`` with random RawBots over gRPC, to the end (``hook``:
    seat 0's, ``RawBot.hook``)."""
    bots = [
        RawBot(running.address, token, chooser=choose_randomly(seed + i), name=f"random-{i}")
        for i, token in enumerate(hosted.tokens)
    ]
    bots[0].hook = hook
    await asyncio.gather(*(b.play() for b in bots))
    await hosted.match.wait_done()


class ArenaThread:
    """A server and its viewer on an event loop of their own, in a thread; the tests (and
    Playwright's synchronous API) stay on the main thread."""

    def __init__(
        self, records: Path, standings: Standings | None = None, limits: Limits | None = None
    ) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        config = ServerConfig(
            host="127.0.0.1", port=0, records_dir=records, limits=limits or Limits()
        )
        self.running: RunningServer = self.call(start_server(config))
        provider = (lambda: standings) if standings is not None else None
        self.http: HttpServer = self.call(
            serve_viewer(self.running, "127.0.0.1", 0, standings=provider)
        )

    @property
    def url(self) -> str:
        return self.http.url

    def submit(self, coro: Coroutine[Any, Any, T]) -> Future[T]:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def call(self, coro: Coroutine[Any, Any, T], timeout: float = 60) -> T:
        return self.submit(coro).result(timeout)

    def create(self, settings: MatchSettings) -> HostedMatch:
        async def create() -> HostedMatch:
            return self.running.arena.create(settings)

        return self.call(create())

    def play(self, hosted: HostedMatch, seed: int, hook: Hook | None = None) -> Future[None]:
        return self.submit(play_bots(self.running, hosted, seed, hook))

    def close(self) -> None:
        self.call(self.http.stop())
        self.call(self.running.stop(1))
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


STANDINGS = Standings(
    title="Test ladder",
    rows=(
        StandingRow("greedy", 1620.0, 1580.0, 1660.0, 40, {"normal": 39, "timeout": 1}),
        StandingRow("random", 1380.0, 1340.0, 1420.0, 40, {"normal": 40}),
    ),
    note="made up for the test",
)


@pytest.fixture(scope="module")
def arena(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ArenaThread]:
    """A server with one finished 4-player match (seed 5) in its records."""
    a = ArenaThread(tmp_path_factory.mktemp("records"))
    try:
        finished = a.create(MatchSettings("medina-v2", 4, 5))
        a.play(finished, 50).result(120)
        yield a
    finally:
        a.close()


def finished_id(arena: ArenaThread) -> str:
    """The id of a finished match of ``arena``."""
    return next(
        h.match_id for h in arena.running.arena.matches.values() if h.match.outcome is not None
    )


def screenshot(page: Page, tmp_path: Path, name: str, *, full_page: bool = False) -> bytes:
    """A screenshot of the page, saved under ``tmp_path`` (and for the docs when asked)."""
    data = page.screenshot(path=str(tmp_path / f"{name}.png"), full_page=full_page)
    docs = os.environ.get(SCREENSHOTS_ENV)
    if docs:
        save_small(data, Path(docs) / f"{name}.png")
    return data


def save_small(data: bytes, where: Path) -> None:
    """A smaller copy for the docs: three quarters of the size, 128 colours (octree: the
    seats' colours stay themselves)."""
    image = Image.open(io.BytesIO(data)).convert("RGB")
    size = (image.width * 3 // 4, image.height * 3 // 4)
    image = image.resize(size, Image.Resampling.LANCZOS)
    where.parent.mkdir(parents=True, exist_ok=True)
    image.quantize(colors=128, method=Image.Quantize.FASTOCTREE).save(where, optimize=True)


def distinct_colours(data: bytes) -> int:
    """Distinct colours in a screenshot (a blank page has one or two)."""
    image = Image.open(io.BytesIO(data)).convert("RGB")
    found = image.getcolors(maxcolors=1 << 20)
    return len(found) if found is not None else 1 << 20
