"""The replay route and the child that builds replays under load (web/builds.py, web/app.py):
a client that goes away drops its build, the builds pending are bounded, a builder that dies
twice is a 503 and one log line per death, and a viewer that stops answers every waiting
request at once. The child is held busy with a FIFO: ``os.open(fifo, O_RDONLY)`` as a build
waits for a writer, and opening the FIFO for reading and writing lets it go."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Coroutine, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import pytest
from bounded import run
from medina.web import HttpServer
from medina.web.app import build_app, records_viewer, stop_building
from medina.web.builds import MAX_PENDING, BuildCancelledError, BuilderDiedError, Builds
from medina.web.shelf import RecordShelf

from .test_view import write_match

T = TypeVar("T")

#: How long a condition is waited for at most.
WITHIN_S = 20.0


class ViewerThread:
    """The viewer of a records directory served by uvicorn on an event loop in a thread."""

    def __init__(self, records: Path) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.app = build_app(records_viewer(records))
        self.http = HttpServer(self.app)
        self.call(self.http.start())

    @property
    def shelf(self) -> RecordShelf:
        shelf: RecordShelf = self.app.state.viewer.records
        return shelf

    def submit(self, coro: Coroutine[Any, Any, T]) -> Future[T]:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def call(self, coro: Coroutine[Any, Any, T]) -> T:
        return self.submit(coro).result(WITHIN_S)

    def close(self) -> None:
        self.call(self.http.stop())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


class Blocker:
    """The child held busy in ``os.open`` of a FIFO, started on the viewer's loop."""

    def __init__(self, viewer: ViewerThread, fifo: Path) -> None:
        os.mkfifo(fifo)
        self.viewer = viewer
        self.fifo = fifo
        self.builds = Builds()
        self.writer: int | None = None

        async def start() -> asyncio.Future[int]:
            # The child is up (started at the first build) before it is blocked.
            await self.builds.run("alive", os.getpid)
            return asyncio.ensure_future(self.builds.run("block", os.open, str(fifo), os.O_RDONLY))

        self.blocked = viewer.call(start())

    def release(self) -> None:
        """Let the child's open return (a FIFO opened for reading and writing never blocks)."""
        if self.writer is None:
            self.writer = os.open(self.fifo, os.O_RDWR)

            async def done() -> None:
                await self.blocked

            self.viewer.call(done())
            os.close(self.writer)


@pytest.fixture
def records(tmp_path: Path) -> Path:
    """A records directory of ``MAX_PENDING + 1`` copies of one finished match."""
    directory = tmp_path / "records"
    directory.mkdir()
    first = write_match(directory, "m0")
    for i in range(1, MAX_PENDING + 1):
        shutil.copy(first, directory / f"m{i}.jsonl")
    return directory


@pytest.fixture
def viewer(records: Path) -> Iterator[ViewerThread]:
    v = ViewerThread(records)
    try:
        yield v
    finally:
        v.close()


@pytest.fixture
def blocker(viewer: ViewerThread, tmp_path: Path) -> Iterator[Blocker]:
    b = Blocker(viewer, tmp_path / "fifo")
    try:
        yield b
    finally:
        b.release()  # the child is this process's: the next test needs it


def until(condition: Callable[[], bool], what: str) -> None:
    """Returns once ``condition()`` holds; fails after ``WITHIN_S``."""
    deadline = time.monotonic() + WITHIN_S
    while not condition():
        assert time.monotonic() < deadline, f"still not {what} after {WITHIN_S} s"
        time.sleep(0.01)


def fetch(url: str) -> tuple[int, dict[str, str], bytes]:
    try:
        with urllib.request.urlopen(url, timeout=WITHIN_S * 2) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def replay_url(viewer: ViewerThread, record_id: str) -> str:
    return f"{viewer.http.url}/api/records/{record_id}/replay"


def test_a_client_that_goes_away_drops_its_replays_build(
    viewer: ViewerThread, blocker: Blocker
) -> None:
    builds = viewer.shelf.builds
    request = b"GET /api/records/m0/replay HTTP/1.1\r\nHost: viewer\r\n\r\n"
    with socket.create_connection(("127.0.0.1", viewer.http.port), timeout=WITHIN_S) as client:
        client.sendall(request)
        until(lambda: builds.pending == 1, "building the replay")
    # uvicorn never cancels the handler of a client that left: the build stayed queued.
    until(lambda: builds.pending == 0 and builds.waiting == 0, "dropped")
    blocker.release()
    status, _headers, body = fetch(replay_url(viewer, "m0"))  # asked again, built anew
    assert status == 200 and json.loads(body)["record"] == "m0"


def test_past_the_most_builds_pending_a_new_one_is_refused_and_a_pending_one_shared(
    viewer: ViewerThread, blocker: Blocker
) -> None:
    builds = viewer.shelf.builds
    with ThreadPoolExecutor(MAX_PENDING + 1) as pool:
        asked = [pool.submit(fetch, replay_url(viewer, f"m{i}")) for i in range(MAX_PENDING)]
        until(lambda: builds.waiting == MAX_PENDING, f"{MAX_PENDING} builds pending")
        status, headers, body = fetch(replay_url(viewer, f"m{MAX_PENDING}"))
        assert status == 503
        assert headers["retry-after"] == "5"
        assert json.loads(body) == {
            "error": f"the viewer is building too many replays ({MAX_PENDING}); "
            "try again in a few seconds"
        }
        again = pool.submit(fetch, replay_url(viewer, "m0"))
        until(lambda: builds.waiting == MAX_PENDING + 1, "the request for m0 sharing its build")
        assert builds.pending == MAX_PENDING
        blocker.release()
        answers = [f.result(WITHIN_S * 2) for f in [*asked, again]]
    assert [status for status, _h, _b in answers] == [200] * (MAX_PENDING + 1)
    assert answers[-1][2] == answers[0][2]


def test_a_builder_that_dies_twice_is_a_503_and_one_log_line_per_death(
    viewer: ViewerThread, blocker: Blocker, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    builds = viewer.shelf.builds

    async def die() -> asyncio.Future[None]:
        # Queued behind the block, before the replays: the child dies at it, and so does
        # the new child the builds still pending are sent to.
        return asyncio.ensure_future(blocker.builds.run("die", os._exit, 1))

    dying = viewer.call(die())
    with ThreadPoolExecutor(2) as pool:
        asked = [pool.submit(fetch, replay_url(viewer, f"m{i}")) for i in range(2)]
        until(lambda: builds.waiting == 2, "two replays pending")
        blocker.release()
        answers = [f.result(WITHIN_S * 2) for f in asked]

    async def died() -> BaseException | None:
        return (await asyncio.gather(dying, return_exceptions=True))[0]

    assert isinstance(viewer.call(died()), BuilderDiedError)
    for status, headers, body in answers:
        assert status == 503 and headers["retry-after"] == "5"
        assert json.loads(body) == {
            "error": "the replay builder died twice in a row; try again in a few seconds"
        }
    deaths = [r.getMessage() for r in caplog.records if "replay builder" in r.getMessage()]
    assert len(deaths) == 2, deaths
    assert all(r.levelno == logging.WARNING for r in caplog.records if "died" in r.getMessage())
    assert all("(pid " in d and "a new one starts at the next replay" in d for d in deaths)
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []
    # A new child builds the next replay.
    status, _headers, _body = fetch(replay_url(viewer, "m0"))
    assert status == 200


def test_a_viewer_that_stops_answers_every_waiting_replay_request_at_once(
    viewer: ViewerThread, blocker: Blocker
) -> None:
    builds = viewer.shelf.builds
    stopping = {"error": "the viewer is stopping; the replay was not built"}
    with ThreadPoolExecutor(4) as pool:
        asked = [pool.submit(fetch, replay_url(viewer, f"m{i}")) for i in (0, 1, 2, 0)]
        until(lambda: builds.waiting == 4, "four replay requests waiting")

        async def stop() -> None:
            stop_building(viewer.app)

        viewer.call(stop())
        # Answered while the child is still busy.
        for f in asked:
            status, headers, body = f.result(WITHIN_S)
            assert (status, headers["retry-after"], json.loads(body)) == (503, "5", stopping)
    status, _headers, body = fetch(replay_url(viewer, "m5"))  # and so is any later one
    assert status == 503 and json.loads(body) == stopping


def test_a_requester_cancelled_itself_is_cancelled_not_told_the_build_was(
    tmp_path: Path,
) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)

    async def main() -> None:
        blocking = Builds()
        blocked = asyncio.ensure_future(blocking.run("block", os.open, str(fifo), os.O_RDONLY))
        builds = Builds()
        waiters = [asyncio.ensure_future(builds.run("k", os.getpid)) for _ in range(2)]
        for _ in range(10):
            await asyncio.sleep(0)  # both waiting (turns of the loop, no time passes)
        waiters[0].cancel()
        builds.stop()
        outcomes = await asyncio.gather(*waiters, return_exceptions=True)
        assert isinstance(outcomes[0], asyncio.CancelledError)
        assert isinstance(outcomes[1], BuildCancelledError)
        writer = os.open(fifo, os.O_RDWR)
        try:
            await blocked
        finally:
            os.close(writer)

    run(main())
