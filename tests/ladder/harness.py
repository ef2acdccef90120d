"""Ladder servers and bots as the user runs them: ``medina-arena ladder serve`` and
``medina-arena bots`` as processes, bots started from their command lines."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from medina.storage.ladder import LadderStore

ROOT = Path(__file__).resolve().parents[2]
ARENA = [sys.executable, "-m", "medina.cli"]
NODE_BOT = ROOT / "clients" / "node" / "bot.js"
AWK_BOT = ROOT / "clients" / "stdio" / "first_bot.awk"


def wait_until(check: Callable[[], bool], timeout_s: float, what: str) -> None:
    """Poll ``check`` until it holds; AssertionError naming ``what`` after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s:g} s waiting for {what}")
        time.sleep(0.1)  # polling a database another process writes


def add_bot(db: str, name: str, owner: str = "") -> str:
    """``medina-arena bots add``; the key it prints."""
    argv = [*ARENA, "bots", "add", name, "--db", db, *(["--owner", owner] if owner else [])]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=True)
    key = done.stdout.strip()
    assert key.startswith("mdk_") and key not in done.stderr
    return key


def arena_cli(*args: str) -> subprocess.CompletedProcess[str]:
    """``medina-arena ARGS`` run to its end."""
    return subprocess.run([*ARENA, *args], capture_output=True, text=True, timeout=120)


@dataclass
class LadderServer:
    """A ``ladder serve`` process."""

    proc: subprocess.Popen[str]
    port: int
    log: Path
    #: The viewer's URL when started with --http.
    viewer: str = ""

    @classmethod
    def start(cls, db: str, tmp: Path, name: str, *extra: str) -> LadderServer:
        log = tmp / f"{name}.log"
        out = log.open("w")
        proc = subprocess.Popen(
            [*ARENA, "--log-level", "INFO", "ladder", "serve", "--db", db, "--port", "0",
             "--records", str(tmp / f"records-{name}"), "--server-id", name, *extra],
            stdout=subprocess.PIPE, stderr=out, text=True,
        )  # fmt: skip
        assert proc.stdout is not None
        line = proc.stdout.readline()
        found = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
        if found is None:
            proc.kill()
            raise AssertionError(f"ladder serve did not start: {line!r}\n{log.read_text()}")
        viewer = ""
        if "--http" in extra:
            shown = re.search(r"viewer on (http://\S+?)/?$", proc.stdout.readline().strip())
            assert shown, "ladder serve --http did not print the viewer's URL"
            viewer = shown.group(1)
        return cls(proc, int(found.group(1)), log, viewer)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


@dataclass
class BotProc:
    """A bot process on the ladder."""

    name: str
    proc: subprocess.Popen[str]
    log: Path

    def output(self) -> str:
        return self.log.read_text()

    def stop(self, timeout_s: float = 60) -> int:
        """SIGTERM (finish the matches in play), then wait for the exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
            raise AssertionError(
                f"{self.name} did not leave the ladder:\n{self.output()}"
            ) from None


@dataclass
class Bots:
    """Bot processes started for one test; all stopped at its end."""

    tmp: Path
    procs: list[BotProc] = field(default_factory=list)

    def start(self, name: str, argv: Sequence[str]) -> BotProc:
        log = self.tmp / f"bot-{name}.log"
        out = log.open("w")
        proc = subprocess.Popen(
            list(argv), stdout=out, stderr=subprocess.STDOUT, text=True, cwd=self.tmp,
            env={**os.environ, "MEDINA_LOG_DIR": str(self.tmp / "stdio-logs")},
        )  # fmt: skip
        bot = BotProc(name, proc, log)
        self.procs.append(bot)
        return bot

    def sdk(self, name: str, server: str, key: str, *extra: str) -> BotProc:
        return self.start(
            name,
            [sys.executable, "-m", "medina_client", "--server", server, "--bot-key", key,
             "--bot", "random", "--name", name, *extra],
        )  # fmt: skip

    def node(self, node: str, name: str, server: str, key: str, *extra: str) -> BotProc:
        return self.start(
            name,
            [node, str(NODE_BOT), "--server", server, "--bot-key", key, "--bot", "random",
             "--name", name, "--bot-version", "node-1", *extra],
        )  # fmt: skip

    def stdio(self, name: str, server: str, key: str, *extra: str) -> BotProc:
        return self.start(
            name,
            [sys.executable, "-m", "medina_client", "stdio", "--server", server, "--bot-key",
             key, "--name", name, *extra, "--", "mawk", "-W", "interactive", "-f",
             str(AWK_BOT)],
        )  # fmt: skip

    def kill_all(self) -> None:
        for bot in self.procs:
            if bot.proc.poll() is None:
                bot.proc.kill()
                bot.proc.wait(10)


def finished(store: LadderStore) -> int:
    """Matches finished so far."""
    return store.counts().get("finished", 0)


def running_with(store: LadderStore, bot: str) -> int | None:
    """A running match with ``bot`` at a seat, if there is one (any match: other bots may
    have played many since it began)."""
    for m in store.matches(newest_first=True):
        if m.status == "running" and any(s[1] == bot for s in m.seats):
            return m.id
    return None
