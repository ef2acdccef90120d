"""What an unsandboxed bot writes to its log directory (MEDINA_LOG_DIR) is kept beside its
seat log once it exited, each file as ``MATCH.seatN.NAME.log``: never as a name that reads
as a match record, never over a file already there."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from medina.launch.botproc import spawn_bot

WRITES = """
import os, sys
d = os.environ["MEDINA_LOG_DIR"]
for name in ("x.jsonl", "log", "a", "a.log", "bot-x-1.log"):
    with open(os.path.join(d, name), "w") as f:
        f.write(name)
os.symlink(sys.argv[1], os.path.join(d, "link"))
print("the bot's own output")
"""


def test_files_a_bot_logged_are_kept_as_logs_beside_its_seat_log(tmp_path: Path) -> None:
    # x.jsonl was kept as M.seat0.x.jsonl (a match record to `replay list`); `log` replaced
    # the seat log.
    secret = tmp_path / "secret.txt"
    secret.write_text("not a log")
    log = tmp_path / "M.seat0.log"
    (tmp_path / "M.seat0.a.log").write_text("there before")

    async def main() -> int:
        proc = await spawn_bot([sys.executable, "-c", WRITES, str(secret)], "127.0.0.1:1", "t", log)
        return await asyncio.wait_for(proc.wait(), 30)

    assert asyncio.run(main()) == 0
    assert log.read_text() == "the bot's own output\n"
    kept = {p.name: p.read_text() for p in tmp_path.glob("M.seat0.?*.log")}
    assert kept == {
        "M.seat0.a.log": "there before",
        "M.seat0.a.1.log": "a",
        "M.seat0.a.2.log": "a.log",
        "M.seat0.bot-x-1.log": "bot-x-1.log",
        "M.seat0.log.log": "log",
        "M.seat0.x.jsonl.log": "x.jsonl",
    }
    assert not list(tmp_path.glob("*.jsonl"))
    # only regular files are kept: the link stays in the log directory, its target untouched
    assert [p.name for p in (tmp_path / "M.seat0.logs").iterdir()] == ["link"]
    assert secret.read_text() == "not a log"


def test_a_bot_is_told_where_its_log_files_will_be_kept(tmp_path: Path) -> None:
    # A stdio bridge names its program's log in its last line; the name in MEDINA_LOG_DIR
    # was gone once the bot exited, so it names the kept one, from MEDINA_LOG_KEPT_PREFIX.
    writes = (
        "import os\n"
        "path = os.path.join(os.environ['MEDINA_LOG_DIR'], 'bot-x-7.log')\n"
        "open(path, 'w').write('mine')\n"
        "print(os.environ['MEDINA_LOG_KEPT_PREFIX'] + 'bot-x-7.log')\n"
    )
    log = tmp_path / "M.seat1.log"

    async def main() -> int:
        proc = await spawn_bot([sys.executable, "-c", writes], "127.0.0.1:1", "t", log)
        return await asyncio.wait_for(proc.wait(), 30)

    assert asyncio.run(main()) == 0
    named = Path(log.read_text().strip())
    assert named == tmp_path.resolve() / "M.seat1.bot-x-7.log"
    assert named.read_text() == "mine"
