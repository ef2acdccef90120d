"""The bot program of a stdio bridge: its stdin fed from a queue, its stdout read line by line,
its stderr appended to a log file."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import shutil
import signal
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

log = logging.getLogger("medina_client.stdio")

#: Longest line read from the bot; an Action line is a few dozen bytes.
LINE_LIMIT = 1 << 20


class BotStartError(OSError):
    """The bot program could not be started."""


class BotProcess:
    """A running bot program. Create with ``start``; end with ``stop``.

    Lines for the bot go through a queue written by a task of their own, so a
    bot that stops reading never blocks the bridge (the lines wait in memory).
    """

    def __init__(self, proc: asyncio.subprocess.Process, command: Sequence[str]) -> None:
        self.proc = proc
        self.command = list(command)
        self._queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._input_closed = False
        self._writer = asyncio.get_running_loop().create_task(self._write_lines())

    @classmethod
    async def start(
        cls,
        command: Sequence[str],
        log_path: Path,
        env: Mapping[str, str] | None = None,
        *,
        own_session: bool = False,
    ) -> BotProcess:
        """Start ``command`` with its stderr appended to ``log_path`` (in a session of its
        own with ``own_session``: the terminal's signals do not reach it).

        Raises BotStartError naming the command and the reason.
        """
        if not command:
            raise BotStartError("no bot command given")
        with log_path.open("ab") as stderr:  # the child keeps its own descriptor
            try:
                proc = await asyncio.create_subprocess_exec(
                    *_dying_with_bridge(command, env),
                    stdin=asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=stderr,
                    env=None if env is None else dict(env),
                    limit=LINE_LIMIT,
                    start_new_session=own_session,
                )
            except OSError as exc:
                reason = exc.strerror or str(exc)
                raise BotStartError(f"cannot start the bot {command[0]!r}: {reason}") from None
        return cls(proc, command)

    @property
    def pid(self) -> int:
        """The bot's process id."""
        return self.proc.pid

    @property
    def returncode(self) -> int | None:
        """Exit status once the bot has exited (negative: killed by that signal)."""
        return self.proc.returncode

    def send(self, line: bytes) -> None:
        """Queue one line for the bot's stdin (never blocks; dropped after ``close_input``)."""
        if not self._input_closed:
            self._queue.put_nowait(line)

    def close_input(self) -> None:
        """Close the bot's stdin once the queued lines are written."""
        if not self._input_closed:
            self._input_closed = True
            self._queue.put_nowait(None)

    async def _write_lines(self) -> None:
        stdin = self.proc.stdin
        assert stdin is not None
        try:
            while (line := await self._queue.get()) is not None:
                stdin.write(line)
                await stdin.drain()
            stdin.close()
        except ConnectionError:
            # The bot is gone; reading its stdout reports that, with its exit status.
            log.debug("the bot's stdin is closed; lines for it are dropped")

    async def readline(self) -> bytes:
        """The next line from the bot's stdout, b"" at its end.

        Raises ValueError for a line longer than ``LINE_LIMIT`` (its start is dropped).
        """
        stdout = self.proc.stdout
        assert stdout is not None
        return await stdout.readline()

    async def wait_exit(self, timeout_s: float) -> int | None:
        """The exit status if the bot exits within ``timeout_s`` seconds, else None."""
        try:
            async with asyncio.timeout(timeout_s):
                return await self.proc.wait()
        except TimeoutError:
            return None

    async def stop(self, exit_wait_s: float) -> bool:
        """Close the bot's stdin and give it ``exit_wait_s`` seconds to write what is queued
        and exit; then terminate it (and kill it if that does not work either).

        Returns True when the bot exited by itself.
        """
        self.close_input()
        exited = await self.wait_exit(exit_wait_s) is not None
        if not exited:
            with contextlib.suppress(ProcessLookupError):
                self.proc.terminate()
            if await self.wait_exit(exit_wait_s) is None:
                with contextlib.suppress(ProcessLookupError):
                    self.proc.kill()
                await self.proc.wait()
        self._writer.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._writer
        return exited


#: What only the bridge needs: the seat token, and a ladder bot's account key (which
#: outlives every match and opens the account's lobby).
BRIDGE_ONLY = frozenset({"MEDINA_TOKEN", "MEDINA_BOT_KEY"})


def child_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The bot's environment: ours without the seat token and the account key, which only
    the bridge needs."""
    return {k: v for k, v in environ.items() if k not in BRIDGE_ONLY}


#: util-linux's setpriv on Linux, to have the kernel kill the program when the bridge dies.
_SETPRIV = shutil.which("setpriv") if sys.platform.startswith("linux") else None


def _dying_with_bridge(command: Sequence[str], env: Mapping[str, str] | None) -> list[str]:
    """``command`` run so that the kernel kills it when the bridge's process dies, however
    it dies (a bridge that exited on a ladder's refusal left its program running under
    init); as it is where that cannot be asked. A missing program is still an OSError."""
    if _SETPRIV is None:
        return list(command)
    program = command[0]
    path = (env if env is not None else os.environ).get("PATH", os.defpath)
    found = program if os.sep in program else shutil.which(program, path=path)
    if found is None or not os.path.exists(found):
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), program)
    if os.path.isdir(found) or not os.access(found, os.X_OK):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), program)
    return [_SETPRIV, "--pdeathsig", "KILL", "--", *command]


def describe_status(returncode: int | None) -> str:
    """An exit status in words: ``status 4``, ``signal SIGTERM``."""
    if returncode is None:
        return "no status"
    if returncode < 0:
        try:
            return f"signal {signal.Signals(-returncode).name}"
        except ValueError:
            return f"signal {-returncode}"
    return f"status {returncode}"


class LogFile:
    """While in use, the SDK's messages (INFO and up) are appended to the bot's log file,
    marked ``[bridge]``, beside the bot's own stderr."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.handler: logging.FileHandler | None = None
        self.level = logging.NOTSET

    def __enter__(self) -> LogFile:
        try:
            self.handler = logging.FileHandler(self.path, mode="a", encoding="utf-8")
        except OSError as exc:
            raise OSError(f"cannot write the log file {self.path}: {exc.strerror}") from None
        self.handler.setFormatter(logging.Formatter("%(asctime)s [bridge] %(message)s"))
        self.handler.setLevel(logging.INFO)
        sdk = logging.getLogger("medina_client")
        self.level = sdk.level
        if sdk.getEffectiveLevel() > logging.INFO:
            sdk.setLevel(logging.INFO)
        sdk.addHandler(self.handler)
        return self

    def __exit__(self, *exc: object) -> None:
        sdk = logging.getLogger("medina_client")
        assert self.handler is not None
        sdk.removeHandler(self.handler)
        sdk.setLevel(self.level)
        self.handler.close()
