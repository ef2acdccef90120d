"""A bot process dies with whatever started it, however that dies: a tournament runner
SIGKILLed mid-game left its bots running under init (one that ignored SIGTERM ran on for
good); a stdio bridge that exited left its program running. And the bridge's program gets
neither the seat token nor a ladder bot's account key."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from medina.boundary.children import SETPRIV
from medina_client.stdio_process import child_environment
from processes import state_of

pytestmark = pytest.mark.skipif(SETPRIV is None, reason="needs Linux's setpriv (util-linux)")

#: Ignores SIGTERM and SIGINT, says its pid, and waits ten minutes.
STUBBORN = (
    "import os, signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
    "signal.signal(signal.SIGINT, signal.SIG_IGN); print(os.getpid(), flush=True); "
    "time.sleep(600)"
)

#: Starts STUBBORN as the arena starts a seat's bot, says the bot's pid, then waits.
STARTER = """
import asyncio, sys
from pathlib import Path
from medina.launch.botproc import spawn_bot
async def main():
    log = Path(sys.argv[2])
    await spawn_bot([sys.executable, "-c", sys.argv[1]], "127.0.0.1:1", "t", log)
    while not log.read_text().strip():
        await asyncio.sleep(0.05)  # until the bot has said its pid in its log
    print(log.read_text().strip(), flush=True)
    await asyncio.sleep(600)
asyncio.run(main())
"""

#: Starts STUBBORN as the stdio bridge starts its program.
BRIDGE = """
import asyncio, sys
from pathlib import Path
from medina_client.stdio_process import BotProcess
async def main():
    bot = await BotProcess.start([sys.executable, "-c", sys.argv[1]], Path(sys.argv[2]))
    print(await bot.proc.stdout.readline(), flush=True)
    await asyncio.sleep(600)
asyncio.run(main())
"""


def dies_with_its_starter(script: str, log: Path) -> None:
    starter = subprocess.Popen(
        [sys.executable, "-c", script, STUBBORN, str(log)], stdout=subprocess.PIPE, text=True
    )
    out = starter.stdout
    assert out is not None
    dies_when_killed(starter, lambda: int(out.readline().strip().strip("b'\\n")))


def dies_when_killed(starter: subprocess.Popen[str], bot_pid: Callable[[], int]) -> None:
    """SIGKILL ``starter`` once ``bot_pid`` has said which process it started; that process
    must be gone within 30 s."""
    try:
        bot = bot_pid()
        handle = os.pidfd_open(bot)  # the bot itself, whatever pid is reused later
    finally:
        starter.send_signal(signal.SIGKILL)
        starter.wait(30)
    try:
        ready, _, _ = select.select([handle], [], [], 30)  # readable once the bot has exited
        assert ready, f"the bot {bot} outlived what started it by 30 s"
    finally:
        os.close(handle)


def test_a_bot_dies_with_the_arena_process_that_started_it(tmp_path: Path) -> None:
    dies_with_its_starter(STARTER, tmp_path / "seat.log")


def test_a_stdio_program_dies_with_its_bridge(tmp_path: Path) -> None:
    dies_with_its_starter(BRIDGE, tmp_path / "bridge.log")


def test_the_bridges_program_gets_no_token_and_no_account_key() -> None:
    env = {"PATH": "/bin", "MEDINA_TOKEN": "seat", "MEDINA_BOT_KEY": "mdk_", "MEDINA_SERVER": "h:1"}
    assert child_environment(env) == {"PATH": "/bin", "MEDINA_SERVER": "h:1"}


def test_a_ladders_house_bots_die_with_it(tmp_path: Path) -> None:
    # A SIGKILLed ladder left its house bots running under init, retrying its lobby.
    ladder = subprocess.Popen(
        [sys.executable, "-m", "medina.cli", "--log-level", "INFO", "ladder", "serve",
         "--db", str(tmp_path / "l.db"), "--port", "0", "--records", str(tmp_path / "rec"),
         "--house", "greedy"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip

    def house_bot() -> int:
        assert ladder.stderr is not None
        for line in ladder.stderr:
            if "house bot house-greedy started (pid " in line:
                bot = int(line.rsplit("(pid ", 1)[1].rstrip(")\n"))
                # setpriv asks for the parent-death signal, then becomes the bot: a parent
                # killed before that leaves nothing to signal (the log line comes first).
                cmdline = Path(f"/proc/{bot}/cmdline")
                deadline = time.monotonic() + 30
                while b"setpriv" in cmdline.read_bytes().split(b"\0")[0]:
                    assert time.monotonic() < deadline, "setpriv never ran the house bot"
                    time.sleep(0.01)  # polling another process's state
                return bot
        raise AssertionError("the ladder ended without starting its house bot")

    dies_when_killed(ladder, house_bot)


#: A bot that leaves two processes behind: one in its process group, one out of it
#: (setsid); each writes its pid to a file of the bot's directory.
LEAVER = """\
setsid sh -c 'echo $$ > escaped.$$.pid; exec sleep 600' </dev/null >/dev/null 2>&1 &
sh -c 'echo $$ > grouped.$$.pid; exec sleep 600' </dev/null >/dev/null 2>&1 &
exec {python} -m medina_client --bot random "$@"
"""


@pytest.mark.parametrize("command", ["match", "tournament"])
def test_what_a_bot_leaves_behind_is_killed_by_the_games_end(tmp_path: Path, command: str) -> None:
    # A bot's background processes, in its group or setsid'd out of it, outlived the game
    # and the runner: the parent-death signal covers the bot's own process only.
    (tmp_path / "leaver.sh").write_text(LEAVER.format(python=sys.executable))
    bots = ["sh leaver.sh", "python -m medina_client --bot random"]
    if command == "match":
        argv = ["match", "--players", "2", "--records", "rec"]
        argv += [w for b in bots for w in ("--bot", b)]
    else:
        (tmp_path / "cup.toml").write_text(
            'name = "cup"\ngames = 2\nvalidation = "off"\n'
            '[[variants]]\nruleset = "medina-v2"\nplayers = 2\n'
            + "".join(f'[[bots]]\nname = "b{n}"\ncommand = "{b}"\n' for n, b in enumerate(bots))
        )
        argv = ["tournament", "run", "cup.toml", "--quiet"]
    done = subprocess.run(
        [sys.executable, "-m", "medina.cli", *argv],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    left = [int(p.read_text()) for p in tmp_path.glob("*.pid")]
    assert len(left) == (2 if command == "match" else 4), left
    alive = [pid for pid in left if state_of(pid) not in ("", "Z")]
    for pid in alive:
        os.kill(pid, signal.SIGKILL)
    assert not alive, f"{len(alive)} of the bot's {len(left)} background processes outlived it"
