"""The stdio bridge's log file: its own lines beside the program's stderr, one bridge per file
even when a ladder runs matches side by side in one process."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from medina_client.stdio_process import LogFile

log = logging.getLogger("medina_client.stdio")


def test_a_bridge_line_never_continues_the_programs_unended_line(tmp_path: Path) -> None:
    path = tmp_path / "bot.log"
    with LogFile(path):
        with path.open("ab") as program:  # as the program's stderr: a descriptor of its own
            program.write(b"setpriv: failed to execute bots/winedit.pl")
            program.flush()
            log.info("the bot exited with status 127")
            program.write(b"after\n")
        log.info("the end")
    lines = path.read_text().splitlines()
    assert lines[0] == "setpriv: failed to execute bots/winedit.pl"
    assert lines[1].endswith(" [bridge] the bot exited with status 127")
    assert lines[2] == "after" and lines[3].endswith(" [bridge] the end")


def test_overlapping_bridges_each_write_their_own_lines_once(tmp_path: Path) -> None:
    # On a ladder one match's bridge ends while the next one's starts (or several play at
    # once): every [bridge] line was written to every open log file.
    first, second = asyncio.Event(), asyncio.Event()

    async def match(name: str, mine: asyncio.Event, other: asyncio.Event) -> None:
        with LogFile(tmp_path / f"{name}.log"):
            log.info("%s starts", name)
            mine.set()
            await other.wait()  # both files are open now
            log.info("%s ends", name)

    async def both() -> None:
        async with asyncio.timeout(10):
            await asyncio.gather(match("m1", first, second), match("m2", second, first))

    asyncio.run(both())
    for name, other in (("m1", "m2"), ("m2", "m1")):
        text = (tmp_path / f"{name}.log").read_text()
        assert text.count(f"[bridge] {name} starts") == 1 and text.count(f"{name} ends") == 1
        assert other not in text
    assert logging.getLogger("medina_client").level == logging.NOTSET  # given back
