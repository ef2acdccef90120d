"""Fixtures: Debian's bubblewrap, installed when missing (the tests run as root, as the
sandbox needs)."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest


def ensure_bwrap() -> str:
    """The bwrap executable, installed with apt-get when missing."""
    found = shutil.which("bwrap")
    if found:
        return found
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        pytest.fail("bwrap is missing: install Debian's bubblewrap (apt-get install bubblewrap)")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update", "-qq"], check=True, timeout=600, env=env)
    subprocess.run(
        ["apt-get", "install", "-y", "-qq", "bubblewrap"], check=True, timeout=600, env=env
    )
    found = shutil.which("bwrap")
    if not found:
        pytest.fail("apt-get installed bubblewrap but bwrap is still not on PATH")
    return found


@pytest.fixture(scope="session")
def bwrap() -> str:
    """Debian's bubblewrap, installed once per session when missing."""
    return ensure_bwrap()
