"""What docs/bot-authors.md says about how a bot is started and about placement numbers is
what the code does."""

from __future__ import annotations

import asyncio
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest
from medina.engine import ActionKind, EventKind, apply_action, legal_moves, new_game
from medina.engine.types import ROOF_KINDS
from medina.launch.botproc import bot_argv, spawn_bot

ROOT = Path(__file__).resolve().parent.parent
GUIDE = " ".join((ROOT / "docs" / "bot-authors.md").read_text().split())
ADDR = "127.0.0.1:5000"


def test_the_guide_says_how_the_server_address_and_the_token_reach_a_bot() -> None:
    for fact in (
        "`--server HOST:PORT` is appended",
        "before the first `--` word",
        "`{server}` or `{token}`, nothing is appended",
        "`MEDINA_SERVER` (the same `HOST:PORT`), `MEDINA_TOKEN`",
        "`MEDINA_LOG_DIR`",
    ):
        assert fact in GUIDE
    assert bot_argv(["bot", "-v"], ADDR, "t") == ["bot", "-v", "--server", ADDR]
    assert bot_argv(["bridge", "--", "prog"], ADDR, "t") == [
        "bridge",
        "--server",
        ADDR,
        "--",
        "prog",
    ]
    assert bot_argv(["bot", "--host={server}"], ADDR, "t") == ["bot", f"--host={ADDR}"]
    assert bot_argv(["bot", "--key={token}"], ADDR, "t") == ["bot", "--key=t"]  # no --server


def test_the_environment_carries_the_address_the_token_and_the_log_directory(
    tmp_path: Path,
) -> None:
    names = ("MEDINA_SERVER", "MEDINA_TOKEN", "MEDINA_LOG_DIR")
    show = f"import os; print(*(os.environ[k] for k in {names!r}))"
    log = tmp_path / "seat0.log"

    async def main() -> int:
        proc = await spawn_bot([sys.executable, "-c", show], ADDR, "secret", log)
        return await asyncio.wait_for(proc.wait(), 30)

    assert asyncio.run(main()) == 0
    # A directory of the seat's own beside its log (emptied beside it once the bot exited).
    assert log.read_text().split() == [ADDR, "secret", str(tmp_path.resolve() / "seat0.logs")]


#: A fresh ``medina-arena`` process (the CLI imported first, as its entry points do) starts a
#: bot that prints the gRPC variables it was given.
ARENA_STARTS_A_BOT = """
import asyncio, os, sys
from pathlib import Path
import medina.cli
from medina.launch.botproc import spawn_bot
NAMES = ('GRPC_EXPERIMENTS', 'GRPC_VERBOSITY', 'GRPC_ENABLE_FORK_SUPPORT')
show = f"import os; print([os.environ.get(k) for k in {NAMES!r}])"
async def main():
    argv = [sys.executable, "-c", show]
    proc = await spawn_bot(argv, "127.0.0.1:5000", "t", Path(sys.argv[1]))
    return await asyncio.wait_for(proc.wait(), 30)
assert asyncio.run(main()) == 0
print([os.environ.get(k) for k in NAMES])
"""


def arena_and_bot_see(env: dict[str, str], log: Path) -> tuple[str, str]:
    """The gRPC variables as a fresh arena process holds them, and as the bot it started
    was given them."""
    done = subprocess.run(
        [sys.executable, "-c", ARENA_STARTS_A_BOT, str(log)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip(), log.read_text().strip()


def test_a_bot_does_not_inherit_the_arenas_own_grpc_settings(tmp_path: Path) -> None:
    assert "are not passed on to bots" in GUIDE
    log = tmp_path / "seat0.log"
    names = ("GRPC_EXPERIMENTS", "GRPC_VERBOSITY", "GRPC_ENABLE_FORK_SUPPORT")
    env = {k: v for k, v in os.environ.items() if k not in names}
    arena, bot = arena_and_bot_see(env, log)
    assert arena.endswith("'false']"), f"the arena itself runs without its settings: {arena}"
    assert bot == "[None, None, None]"
    # An operator's own value is theirs, and reaches the bots as it is.
    _arena, bot = arena_and_bot_see({**env, "GRPC_ENABLE_FORK_SUPPORT": "true"}, log)
    assert bot.endswith("'true']")


def test_the_guide_says_a_bot_reads_its_stream_to_match_ended_after_a_forfeit() -> None:
    assert "After a forfeit the stream goes on" in GUIDE
    assert "`MatchEnded` still comes when the game is over" in GUIDE


@pytest.mark.parametrize(
    ("ruleset", "players"), [("medina-v1", 3), ("medina-v1-2p", 2), ("medina-v2", 2)]
)
def test_placement_numbers_skip_the_v1_start_merchant(ruleset: str, players: int) -> None:
    assert "`Palace.tie_break_placement`" in GUIDE
    assert (
        "neither does the 1st-edition start merchant (medina-v1 and medina-v1-2p), although "
        "it is in the history" in GUIDE
    )
    rng = random.Random(5)
    s = new_game(ruleset, players, 5)
    while not any(p.claimed for p in s.palaces):
        legal = legal_moves(s)
        s = apply_action(s, legal.nth(rng.randrange(len(legal))))
    placed = [e for e in s.events_since(0) if e.kind is EventKind.PLACED]
    assert placed[-1].piece in ROOF_KINDS  # the first claim, just now
    counted = [e for e in placed if e.piece != ActionKind.START_MERCHANT]
    (claimed,) = [p for p in s.palaces if p.claimed]
    assert claimed.time == len(counted)
    if ruleset != "medina-v2":
        assert placed[0].piece == ActionKind.START_MERCHANT and len(counted) == len(placed) - 1
    assert re.search(r"\bplacements of the game from 1\b", GUIDE)
