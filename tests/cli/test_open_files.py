"""The servers raise their soft open-files limit to the hard one: a soft limit of 1,024 (a
login shell's, a service manager's) would otherwise end at about 250 matches whose bots each
connect on their own (medina/cli/open_files.py)."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from medina.cli import open_files

ROOT = Path(__file__).resolve().parents[2]


def soft_limit(pid: int) -> int:
    """The soft 'Max open files' of a running process, as the kernel reports it."""
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
        if line.startswith("Max open files"):
            return int(line.split()[3])
    raise AssertionError(f"no open-files limit for process {pid}")


def lowered(soft: int) -> None:
    """In the child before exec: start with a soft limit of ``soft``."""
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_the_soft_limit_is_raised_to_the_hard_one_within_the_ceiling() -> None:
    before = resource.getrlimit(resource.RLIMIT_NOFILE)
    hard = before[1]
    wanted = open_files.CEILING if hard == resource.RLIM_INFINITY else min(hard, open_files.CEILING)
    if wanted <= 256:
        pytest.skip(f"the hard limit here ({hard}) leaves nothing to raise")
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))
        assert open_files.raise_open_files_limit() == (256, wanted)
        assert resource.getrlimit(resource.RLIMIT_NOFILE) == (wanted, hard)
        # Already there: nothing changes.
        assert open_files.raise_open_files_limit() == (wanted, wanted)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, before)


def test_an_operators_lower_hard_limit_is_the_ceiling() -> None:
    before = resource.getrlimit(resource.RLIMIT_NOFILE)
    if before[1] != resource.RLIM_INFINITY and before[1] < 512:
        pytest.skip(f"the hard limit here ({before[1]}) is below the test's")
    pid = os.fork()  # lowering a hard limit cannot be undone: do it in a child
    if pid == 0:  # pragma: no cover - the child reports through its exit code
        code = 1
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (256, 512))
            ok = open_files.raise_open_files_limit() == (256, 512)
            code = 0 if ok and resource.getrlimit(resource.RLIMIT_NOFILE) == (512, 512) else 1
        finally:
            os._exit(code)
    _pid, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_serve_raises_its_limit_before_it_listens(tmp_path: Path) -> None:
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    wanted = open_files.CEILING if hard == resource.RLIM_INFINITY else min(hard, open_files.CEILING)
    if wanted <= 256:
        pytest.skip(f"the hard limit here ({hard}) leaves nothing to raise")
    argv = [sys.executable, "-m", "medina.cli", "--log-level", "INFO", "serve"]
    argv += ["--host", "127.0.0.1", "--port", "0", "--records", str(tmp_path / "records")]
    proc = subprocess.Popen(
        argv,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: lowered(256),
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "listening" in line, line
        assert soft_limit(proc.pid) == wanted
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    assert proc.returncode == 0, err
    assert f"open-files limit raised from 256 to {wanted}" in err
