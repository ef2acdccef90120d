"""Bot processes for ``match``, ``check-bot`` and tournaments: command line, start with a
log, reaping."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO


class BotStartError(Exception):
    """A bot's command is empty or cannot be started; the message names the command."""


def bot_argv(argv: Sequence[str], address: str, token: str) -> list[str]:
    """The command line of a bot for one seat.

    ``{server}`` (and, if a bot insists, ``{token}``) in the arguments are filled in;
    without them ``--server ADDRESS`` is appended, or inserted before a ``--`` word
    (``python -m medina_client stdio -- node bot.js``: the options are the bridge's, not
    the program's). The seat token is never put on the command line, where every user of
    the machine could read it in ``ps``: bots read it from ``MEDINA_TOKEN``. A leading
    ``python`` or ``python3`` means this interpreter (so bots run in the arena's
    environment).
    """
    out = list(argv)
    if out and out[0] in ("python", "python3"):
        out[0] = sys.executable
    if any("{token}" in a or "{server}" in a for a in out):
        return [a.replace("{server}", address).replace("{token}", token) for a in out]
    at = out.index("--") if "--" in out else len(out)
    return [*out[:at], "--server", address, *out[at:]]


async def spawn_bot(
    argv: Sequence[str],
    address: str,
    token: str,
    log_path: Path,
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> asyncio.subprocess.Process:
    """Start a bot for one seat (see ``bot_argv``); its stdout and stderr go to ``log_path``.

    The environment also carries ``MEDINA_SERVER``, ``MEDINA_TOKEN`` and ``MEDINA_LOG_DIR``
    (the log's directory: where a stdio bridge keeps its program's stderr), over ``env``
    (extra variables) and the arena's own. It runs in ``cwd`` (default: the current
    directory). BotStartError when the command is empty or cannot be started.
    """
    if not argv:
        raise BotStartError("empty bot command")
    full = bot_argv(argv, address, token)
    full_env = dict(
        os.environ,
        **(env or {}),
        MEDINA_SERVER=address,
        MEDINA_TOKEN=token,
        MEDINA_LOG_DIR=str(log_path.parent.resolve()),
    )
    log: IO[bytes] = log_path.open("wb")
    try:
        return await asyncio.create_subprocess_exec(
            *full,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            env=full_env,
            cwd=cwd,
        )
    except OSError as exc:
        raise BotStartError(f"cannot start bot {shlex.join(argv)!r}: {exc.strerror}") from None
    finally:
        log.close()


async def stop_bot(proc: asyncio.subprocess.Process, timeout_s: float) -> bool:
    """Wait up to ``timeout_s`` for the bot to exit, then kill it; True if it exited by itself."""
    try:
        async with asyncio.timeout(timeout_s):
            await proc.wait()
        return True
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        await proc.wait()
        return False


async def reap(procs: Sequence[asyncio.subprocess.Process], timeout_s: float = 10.0) -> None:
    """Give bots ``timeout_s`` each to exit after the match, then stop them."""
    for proc in procs:
        await stop_bot(proc, timeout_s)
