"""Bot processes for ``match``, ``check-bot`` and tournaments: command line, start with a
log (in a sandbox when asked), reaping."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import signal
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, TypeVar

from medina.boundary import orphans
from medina.boundary.children import dying_with_parent
from medina.boundary.environment import for_others
from medina.sandbox import Box, SandboxError, SandboxSpec, keep_logs, kept_prefix, seccomp_fd
from medina.wire.shared.bridge_log import KEPT_PREFIX_ENV
from medina.wire.shared.tls import ClientTls

from .botlog import log_says

T = TypeVar("T")


class BotStartError(Exception):
    """A bot's command is empty or cannot be started; the message names the command."""


def bot_argv(
    argv: Sequence[str], address: str, token: str, tls: ClientTls | None = None
) -> list[str]:
    """The command line of a bot for one seat.

    ``{server}`` (and, if a bot insists, ``{token}``) in the arguments are filled in;
    without them ``--server ADDRESS`` is appended, or inserted before a ``--`` word
    (``python -m medina_client stdio -- node bot.js``: the options are the bridge's, not
    the program's), followed by ``--tls-ca FILE`` (and ``--tls-cert``/``--tls-key``) when
    the server is dialled over TLS (a command with ``{server}`` finds them in
    ``MEDINA_TLS_CA``, ``MEDINA_TLS_CERT`` and ``MEDINA_TLS_KEY`` instead). The seat token
    is never put on the command line, where every user of the machine could read it in
    ``ps``: bots read it from ``MEDINA_TOKEN``. A leading
    ``python`` or ``python3`` means this interpreter (so bots run in the arena's
    environment).
    """
    out = list(argv)
    if out and out[0] in ("python", "python3"):
        out[0] = sys.executable
    if any("{token}" in a or "{server}" in a for a in out):
        return [a.replace("{server}", address).replace("{token}", token) for a in out]
    at = out.index("--") if "--" in out else len(out)
    options = tls.options() if tls is not None else []
    return [*out[:at], "--server", address, *options, *out[at:]]


class BotProcess:
    """A started bot: its process (under ``prlimit``, ``taskset`` and bubblewrap when it is
    sandboxed) and, once it exited, the limit its sandbox stopped it at, if any."""

    def __init__(
        self, proc: asyncio.subprocess.Process, box: Box | None = None, token: str | None = None
    ) -> None:
        self.proc = proc
        self.box = box
        self._closed = box is None
        self._log_path: Path | None = None
        #: Unsandboxed: the seat token its leftovers are known by (its process group is
        #: its pid); they are killed once it exited.
        self._token = token
        self._leftovers: asyncio.Task[None] | None = None
        #: Unsandboxed: its own log directory (MEDINA_LOG_DIR), emptied beside its seat log.
        self._log_dir: Path | None = None

    @property
    def pid(self) -> int:
        """The process id (the sandbox's outer process when sandboxed)."""
        return self.proc.pid

    @property
    def returncode(self) -> int | None:
        """Its exit status, once it exited (negative: the signal that killed it)."""
        return self.proc.returncode

    @property
    def sandboxed(self) -> bool:
        """Whether it runs in a sandbox."""
        return self.box is not None

    async def wait(self) -> int:
        """Wait for it to exit; a sandbox's resources are given back then (its log
        directory's files kept beside its seat log)."""
        code = await self.proc.wait()
        if self._token is not None:
            if self._leftovers is None:
                self._leftovers = asyncio.ensure_future(
                    orphans.reap_leftovers(self.proc.pid, self._token)
                )
            await asyncio.shield(self._leftovers)
        if self._log_dir is not None and self._log_path is not None:
            log_dir, self._log_dir = self._log_dir, None
            keep_logs(log_dir, self._log_path)
            with contextlib.suppress(OSError):
                log_dir.rmdir()
        if not self._closed and self.box is not None:
            self._closed = True
            self.box.verdict()
            if self._log_path is not None:
                self.box.keep_logs(self._log_path)
            await asyncio.shield(self.box.close())
        return code

    def kill(self) -> None:
        """Kill it: its process group when unsandboxed (what it started in the background
        goes too), its sandbox (which ends with everything in it) otherwise."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if self._token is not None and self.proc.returncode is None:
                os.killpg(self.proc.pid, signal.SIGKILL)
            else:
                self.proc.kill()

    def exit_detail(self, when: str = "") -> str:
        """Why its seat forfeits when it exited early: the limit its sandbox stopped it at
        (``sandbox: memory limit 512 MiB reached; its bot was stopped during the match``),
        else its exit status (``its bot exited with code 1 during the match``; a stdio
        bridge's program's when the bridge told it, see ``LogSays.exited``); ``when``
        (`` during the match``) is appended."""
        hit = self.limit_hit()
        if hit is not None:
            return f"{hit}; its bot was stopped{when}"
        how = f"exited with code {self.returncode}"
        if self._log_path is None:
            return f"its bot {how}{when}"
        return "its bot" + log_says(self._log_path).exited(how, when)

    def limit_hit(self) -> str | None:
        """The limit the sandbox stopped it at (e.g. ``sandbox: memory limit 512 MiB
        reached``), or None."""
        return self.box.verdict() if self.box is not None else None


async def spawn_bot(
    argv: Sequence[str],
    address: str,
    token: str,
    log_path: Path,
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    sandbox: SandboxSpec | None = None,
    tls: ClientTls | None = None,
) -> BotProcess:
    """Start a bot for one seat (see ``bot_argv``); its stdout and stderr go to ``log_path``.

    The environment also carries ``MEDINA_SERVER``, ``MEDINA_TOKEN`` and ``MEDINA_LOG_DIR``
    (a directory of its own beside the log, ``LOGSTEM.logs``, where a stdio bridge keeps
    its program's stderr: its files are moved beside the log as ``LOGSTEM.NAME.log`` once
    the bot exited, see ``keep_logs``, the directory removed; ``MEDINA_LOG_KEPT_PREFIX``
    tells the bot that name, ``NAME`` left off, so that it can say where its files will
    be), over ``env``
    (extra variables) and the arena's own. It runs in ``cwd`` (default: the current
    directory). With ``sandbox`` it runs in bubblewrap under its limits (see
    ``medina.sandbox``), reaching the arena through the sandbox's relay at
    ``127.0.0.1:PORT`` and starting from a small environment rather than the arena's.
    With ``tls`` (the server is dialled over TLS) the bot gets the files on its command line
    and in its environment (``bot_argv``); a sandboxed bot gets none: the sandbox's
    forwarder dials the server over TLS and the bot speaks to the relay in clear.
    BotStartError when the command is empty or cannot be started (or the sandbox cannot be
    used here).
    """
    if not argv:
        raise BotStartError("empty bot command")
    if sandbox is not None:
        return await _spawn_sandboxed(argv, address, token, log_path, sandbox, env or {}, tls)
    full = bot_argv(argv, address, token, tls)
    # a log directory of its own, as a sandbox gives: what it writes there (a stdio bridge's
    # program's stderr) is named for the match and seat afterwards
    log_dir = log_path.parent / f"{log_path.stem}.logs"
    try:
        log_dir.mkdir(exist_ok=True)
    except OSError as exc:
        raise BotStartError(f"cannot make {log_dir}: {exc.strerror}") from None
    full_env = dict(
        for_others(),
        **(env or {}),
        **(tls.environment() if tls is not None else {}),
        MEDINA_SERVER=address,
        MEDINA_TOKEN=token,
        MEDINA_LOG_DIR=str(log_dir.resolve()),
        **{KEPT_PREFIX_ENV: kept_prefix(log_path)},
    )
    log: IO[bytes] = log_path.open("wb")
    try:
        proc = await asyncio.create_subprocess_exec(
            *dying_with_parent(full, full_env, cwd),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            env=full_env,
            cwd=cwd,
            process_group=0,  # a group of its own: killed as a whole (orphans)
        )
    except OSError as exc:
        raise BotStartError(f"cannot start bot {shlex.join(argv)!r}: {exc.strerror}") from None
    finally:
        log.close()
    orphans.adopt(proc.pid, token)
    bot = BotProcess(proc, token=token)
    bot._log_path, bot._log_dir = log_path, log_dir
    return bot


async def _spawn_sandboxed(
    argv: Sequence[str],
    address: str,
    token: str,
    log_path: Path,
    spec: SandboxSpec,
    env: Mapping[str, str],
    tls: ClientTls | None,
) -> BotProcess:
    try:
        box = Box(spec, address, tls.ssl_context() if tls is not None else None)
    except SandboxError as exc:
        raise BotStartError(f"cannot sandbox bot {shlex.join(argv)!r}: {exc}") from None
    try:
        await box.start()
        inside = box.inside_address
        full_env = box.environment(
            {
                **env,
                "MEDINA_SERVER": inside,
                "MEDINA_TOKEN": token,
                KEPT_PREFIX_ENV: kept_prefix(log_path),
            }
        )
        filter_fd = seccomp_fd()
        log: IO[bytes] = log_path.open("wb")
        try:
            proc = await asyncio.create_subprocess_exec(
                *box.command(bot_argv(argv, inside, token), filter_fd),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                env=full_env,
                cwd=spec.bot_dir,
                pass_fds=() if filter_fd is None else (filter_fd,),
            )
        finally:
            log.close()
            if filter_fd is not None:
                os.close(filter_fd)
    except OSError as exc:
        await box.close()
        raise BotStartError(f"cannot start bot {shlex.join(argv)!r}: {exc.strerror}") from None
    except BaseException:
        await box.close()
        raise
    bot = BotProcess(proc, box)
    bot._log_path = log_path
    return bot


async def stop_bot(proc: BotProcess, timeout_s: float) -> bool:
    """Wait up to ``timeout_s`` for the bot to exit, then kill it; True if it exited by itself."""
    try:
        async with asyncio.timeout(timeout_s):
            await proc.wait()
        return True
    except TimeoutError:
        proc.kill()
        await proc.wait()
        return False


async def watch_bot_exit(
    proc: BotProcess, seat: int, forfeit: Callable[[int, str], Awaitable[T]]
) -> T:
    """Wait for a seat's bot to exit, then tell the referee at once: ``forfeit(seat, why)``,
    ``why`` being ``exit_detail()`` (its exit status, or the sandbox limit it was stopped
    at). The one way a bot process's exit reaches the referee, for ``match`` and the
    tournaments alike, whether the server runs in the same process or elsewhere:
    ``forfeit`` is the organiser's ForfeitSeat call (``medina.rpc.organiser.seat_forfeiter``),
    and what it answers is returned. Cancel it once the match is over."""
    await proc.wait()
    return await forfeit(seat, proc.exit_detail())


async def reap(procs: Sequence[BotProcess], timeout_s: float = 10.0) -> None:
    """Give bots ``timeout_s`` each to exit after the match, then stop them."""
    for proc in procs:
        await stop_bot(proc, timeout_s)
