"""The bot program of a stdio bridge: its stdin fed from a queue, its stdout read line by line,
its stderr appended to a log file."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
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
        self._buffer = bytearray()  # read from its stdout, not yet returned as a line
        self._skipping = False  # dropping the rest of a line longer than LINE_LIMIT
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
                crlf = crlf_hint(command)
                raise BotStartError(
                    f"cannot start the bot {command[0]!r}: {reason}"
                    + (f" ({crlf})" if crlf else "")
                ) from None
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
        """The next line from the bot's stdout, b"" at its end (a last line without its
        newline is returned as it is).

        Raises ValueError for a line longer than ``LINE_LIMIT`` (all of it is dropped).
        """
        stdout = self.proc.stdout
        assert stdout is not None
        while True:
            end = self._buffer.find(b"\n")
            if end >= 0:
                line = bytes(self._buffer[: end + 1])
                del self._buffer[: end + 1]
                if self._skipping:  # the end of a line too long to read
                    self._skipping = False
                    continue
                return line
            if len(self._buffer) > LINE_LIMIT:
                self._buffer.clear()
                if not self._skipping:
                    self._skipping = True
                    raise ValueError(f"a line longer than {LINE_LIMIT} bytes")
            chunk = await stdout.read(1 << 16)
            if not chunk:
                line, skipped = bytes(self._buffer), self._skipping
                self._buffer.clear()
                self._skipping = False
                return b"" if skipped else line
            self._buffer += chunk

    @property
    def partial(self) -> int:
        """How many bytes the bot wrote to its stdout after its last newline (a line it has
        not ended, read but not yet returned by ``readline``)."""
        return 0 if self._skipping else len(self._buffer)

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


def crlf_hint(command: Sequence[str]) -> str:
    """'' unless the program is a script whose ``#!`` line ends in a carriage return (it was
    saved with Windows line endings: the kernel looks for an interpreter named ``perl\\r``,
    which does not exist); then what to do about it."""
    program = command[0] if command else ""
    found = program if os.sep in program else shutil.which(program)
    try:
        with open(found or program, "rb") as f:
            first = f.readline(4096)
    except OSError:
        return ""
    if not (first.startswith(b"#!") and first.endswith(b"\r\n")):
        return ""
    return (
        f"{program} has Windows line endings (CRLF): its #! line ends in a carriage return, "
        "so its interpreter is not found; save it with Unix line endings (e.g. dos2unix)"
    )


def not_started(status: int, command: Sequence[str]) -> str:
    """Why a program that exited with ``status`` 126 or 127 before writing a line could not
    be started."""
    crlf = crlf_hint(command)
    if crlf:
        return f"it could not be started: {crlf}"
    what = "was not found" if status == 127 else "is not executable"
    return f"it could not be started: the program, or the interpreter its #! line names, {what}"


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


#: The log file of the bridge running in this context (an asyncio task and the tasks it
#: starts): on a ladder several matches' bridges share the process and its loggers.
_CURRENT_LOG: contextvars.ContextVar[LogFile | None] = contextvars.ContextVar(
    "medina_client_stdio_log", default=None
)

#: The log files in use, and the SDK logger's level from before the first of them.
_OPEN: set[LogFile] = set()
_SAVED_LEVEL = [logging.NOTSET]


class _BridgeLines(logging.FileHandler):
    """The bridge's lines in the bot's log file, each starting a line of its own: the bot's
    stderr goes to the same file, and may have left a line unfinished (a shell's "setpriv:
    failed to execute" before its ": No such file or directory")."""

    def emit(self, record: logging.LogRecord) -> None:
        stream = self.stream
        if stream is not None:
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
                fd = stream.fileno()
                size = os.fstat(fd).st_size
                if size and os.pread(fd, 1, size - 1) != b"\n":
                    stream.write("\n")
        super().emit(record)


class LogFile:
    """While in use, the SDK's messages (INFO and up) logged in this context (the asyncio
    task that entered it, and the tasks it starts) are appended to the bot's log file,
    marked ``[bridge]``, beside the bot's own stderr; another match's bridge in the same
    process writes its own lines to its own file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.handler: logging.FileHandler | None = None
        self._token: contextvars.Token[LogFile | None] | None = None

    def __enter__(self) -> LogFile:
        try:
            # a+: the handler reads the file's last byte (see _BridgeLines)
            self.handler = _BridgeLines(self.path, mode="a+", encoding="utf-8")
        except OSError as exc:
            raise OSError(f"cannot write the log file {self.path}: {exc.strerror}") from None
        self.handler.setFormatter(logging.Formatter("%(asctime)s [bridge] %(message)s"))
        self.handler.setLevel(logging.INFO)
        self.handler.addFilter(lambda _record: _CURRENT_LOG.get() is self)
        self._token = _CURRENT_LOG.set(self)
        sdk = logging.getLogger("medina_client")
        if not _OPEN:  # the first of the overlapping ones lowers the level, the last restores it
            _SAVED_LEVEL[0] = sdk.level
            if sdk.getEffectiveLevel() > logging.INFO:
                sdk.setLevel(logging.INFO)
        _OPEN.add(self)
        sdk.addHandler(self.handler)
        return self

    def __exit__(self, *exc: object) -> None:
        sdk = logging.getLogger("medina_client")
        assert self.handler is not None and self._token is not None
        sdk.removeHandler(self.handler)
        _OPEN.discard(self)
        if not _OPEN:
            sdk.setLevel(_SAVED_LEVEL[0])
        _CURRENT_LOG.reset(self._token)
        self.handler.close()
