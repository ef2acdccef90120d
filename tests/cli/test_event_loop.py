"""The servers' event loop: uvloop where installed, asyncio's on request or without it, and a
clear error for a value that names no loop (medina/cli/event_loop.py)."""

from __future__ import annotations

import asyncio
import inspect
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from medina.cli import event_loop
from medina.cli.errors import CommandError

ROOT = Path(__file__).resolve().parents[2]


async def loop_module() -> str:
    return type(asyncio.get_running_loop()).__module__


def test_uvloop_is_the_default_where_it_is_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(event_loop.ENV, raising=False)
    name, _factory = event_loop.loop_factory()
    assert name.startswith("uvloop ")
    assert event_loop.run(loop_module()).startswith("uvloop")


def test_asyncio_on_request(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(event_loop.ENV, "asyncio")
    assert event_loop.loop_factory()[0] == "asyncio"
    assert event_loop.run(loop_module()).startswith("asyncio")


def test_without_uvloop_the_default_is_asyncio_and_asking_for_it_says_it_is_missing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "uvloop", None)  # import uvloop now raises ImportError
    monkeypatch.delenv(event_loop.ENV, raising=False)
    assert event_loop.loop_factory()[0] == "asyncio"
    monkeypatch.setenv(event_loop.ENV, "uvloop")
    with pytest.raises(CommandError, match="MEDINA_EVENT_LOOP=uvloop, but uvloop is not installed"):
        event_loop.loop_factory()


@pytest.mark.parametrize("value", ["", "UVLOOP", "trio"])
def test_a_value_that_names_no_loop_is_refused_by_name(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv(event_loop.ENV, value)
    words = f"MEDINA_EVENT_LOOP='{value}': it must be one of uvloop, asyncio (or unset)"
    with pytest.raises(CommandError, match=words.replace("(", r"\(").replace(")", r"\)")):
        event_loop.loop_factory()
    coro = loop_module()
    with pytest.raises(CommandError):
        event_loop.run(coro)
    assert inspect.getcoroutinestate(coro) == inspect.CORO_CLOSED  # no never-awaited warning


def serve_log(tmp_path: Path, loop: str | None) -> tuple[int, str]:
    """Start ``medina-arena serve`` (INFO logs), stop it once it listens: its exit code and
    its log. The SIGTERM comes as soon as the address is read, so a server whose signal
    handlers came after that line died of it (exit -15) here."""
    env = {k: v for k, v in os.environ.items() if k != event_loop.ENV}
    if loop is not None:
        env[event_loop.ENV] = loop
    argv = [sys.executable, "-m", "medina.cli", "--log-level", "INFO", "serve"]
    argv += ["--host", "127.0.0.1", "--port", "0", "--records", str(tmp_path / "records")]
    proc = subprocess.Popen(
        argv, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # "listening on ..." or nothing, if it failed
        if "listening" in line:
            proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    return proc.returncode, err


def test_serve_runs_on_uvloop_by_default_and_says_so(tmp_path: Path) -> None:
    code, log = serve_log(tmp_path, None)
    assert code == 0, log
    assert "medina.cli: event loop: uvloop 0." in log


def test_serve_runs_on_asyncio_on_request(tmp_path: Path) -> None:
    code, log = serve_log(tmp_path, "asyncio")
    assert code == 0, log
    assert "medina.cli: event loop: asyncio" in log


def test_serve_refuses_a_loop_it_does_not_know_before_it_listens(tmp_path: Path) -> None:
    code, log = serve_log(tmp_path, "tokio")
    assert code == 2
    assert "MEDINA_EVENT_LOOP='tokio': it must be one of uvloop, asyncio (or unset)" in log
    assert not (tmp_path / "records").exists()
