"""Replays are built in the viewer's child process at a low priority (web/builds.py), never on
the interpreter the referee may share: a flood of replay requests took a server refereeing 64
matches from ~1,240 decisions a second to 28-51 when threads built them."""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import signal
import subprocess
import sys
import zlib
from pathlib import Path

from bounded import run
from medina.web.builds import NICENESS, Builds, builder_pids
from medina.web.shelf import RecordShelf

from .test_view import write_match

#: How long a child's death is waited for at most.
WITHIN_S = 20.0


def test_a_replay_is_built_in_a_lower_priority_child_that_is_replaced_when_it_dies(
    tmp_path: Path,
) -> None:
    write_match(tmp_path, "m1")
    shelf = RecordShelf(tmp_path)

    async def main() -> None:
        _version, body = await shelf.replay_bytes("m1", compressed=True)
        assert json.loads(gzip.decompress(body))["record"] == "m1"
        pids = builder_pids()
        assert len(pids) == 1 and pids[0] != os.getpid()
        assert os.getpriority(os.PRIO_PROCESS, pids[0]) >= NICENESS
        # A child that died (killed, out of memory) is replaced at the next build.
        os.kill(pids[0], signal.SIGKILL)
        _version, plain = await shelf.replay_bytes("m1", compressed=False)
        assert json.loads(plain)["record"] == "m1"
        assert builder_pids() and builder_pids() != pids

    run(main())


def test_requests_for_one_build_share_it_and_others_have_their_own() -> None:
    async def main() -> None:
        builds = Builds()
        data = b"medina" * 1000
        first, second, other = await asyncio.gather(
            builds.run("k", zlib.compress, data),
            builds.run("k", zlib.compress, data),
            builds.run("other", zlib.compress, data),
        )
        assert first is second  # one build's result, as the child sent it
        assert other == first and other is not first

    run(main())


def test_a_build_that_fails_fails_every_request_sharing_it(tmp_path: Path) -> None:
    (tmp_path / "junk.jsonl").write_text("not a record\n")
    shelf = RecordShelf(tmp_path)

    async def main() -> None:
        outcomes = await asyncio.gather(
            shelf.replay_bytes("junk", compressed=True),
            shelf.replay_bytes("junk", compressed=True),
            return_exceptions=True,
        )
        for outcome in outcomes:
            assert isinstance(outcome, LookupError)
            assert "record 'junk' cannot be read" in str(outcome)
            assert str(tmp_path) not in str(outcome)  # the directory stays private

    run(main())


def test_a_build_nobody_waits_for_any_more_is_dropped_before_the_child_takes_it(
    tmp_path: Path,
) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    dropped = tmp_path / "dropped"

    async def main() -> None:
        builds = Builds()
        # The child waits in open() until the FIFO has a writer.
        blocked = asyncio.ensure_future(builds.run("block", os.open, str(fifo), os.O_RDONLY))
        # The pool hands the child a few items ahead of time: these are taken, not dropped.
        filled = asyncio.gather(*(builds.run(f"filler{i}", zlib.compress, b"x") for i in range(3)))
        gone = asyncio.ensure_future(builds.run("gone", os.mkdir, str(dropped)))
        for _ in range(10):
            await asyncio.sleep(0)  # every one submitted (no time passes: turns of the loop)
        gone.cancel()
        # Opened for reading and writing, a FIFO never blocks (Linux): the child's open returns.
        writer = os.open(fifo, os.O_RDWR)
        try:
            await blocked
            await filled
            await builds.run("last", zlib.compress, b"y")  # the child is past "gone"'s turn
        finally:
            os.close(writer)
        assert not dropped.exists()
        # Asked again, it is built anew.
        await builds.run("gone", os.mkdir, str(dropped))
        assert dropped.is_dir()

    run(main())


CHILD = """
import asyncio, sys, zlib
from medina.web.builds import Builds, builder_pids
async def main():
    await Builds().run("k", zlib.compress, b"x")
    print(builder_pids()[0], flush=True)
    await asyncio.sleep(3600)
asyncio.run(main())
"""


def test_the_builder_dies_with_the_process_that_started_it() -> None:
    # Its resource tracker, left behind, warns of the semaphores the pool held: not ours.
    parent = subprocess.Popen(
        [sys.executable, "-c", CHILD], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    try:
        assert parent.stdout is not None
        builder = int(parent.stdout.readline())
        parent.kill()  # SIGKILL: no atexit, no pool shutdown
        parent.wait(WITHIN_S)

        async def gone() -> None:
            while Path(f"/proc/{builder}").exists() and not _zombie(builder):
                await asyncio.sleep(0.02)

        run(gone(), WITHIN_S)
    finally:
        if parent.poll() is None:
            parent.kill()


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1].startswith("Z")
    except OSError:
        return False
