"""tests/processes.py: a process is stopped while what the look sees holds, else let go on."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest
from processes import state_of, stop_when, wait_stopped


def test_a_look_that_no_longer_holds_once_stopped_lets_the_process_go_on() -> None:
    proc = subprocess.Popen(["sleep", "60"])
    try:
        answers = iter([[1], [], [], [2], [2]])  # seen, gone by the stop, ..., seen and held
        assert stop_when(proc.pid, lambda: next(answers), 10, "the look") == [2]
        assert state_of(proc.pid) == "T"
    finally:
        proc.kill()
        proc.wait(10)


def test_a_look_that_never_holds_times_out_by_name() -> None:
    proc = subprocess.Popen(["sleep", "60"])
    try:
        with pytest.raises(AssertionError, match="waiting for nothing at all"):
            stop_when(proc.pid, lambda: False, 0.3, "nothing at all")
        assert state_of(proc.pid) != "T"
    finally:
        proc.kill()
        proc.wait(10)


def test_a_group_stopped_while_it_spawns_a_child_counts_as_stopped() -> None:
    # Python spawns with vfork: a parent stopped with its group while its child has not yet
    # exec'd waits in "D" for as long as the group stays stopped (CI saw it once in a
    # tournament worker). A process that does nothing but spawn is caught there about one
    # stop in eight here, so 200 stops meet it.
    spawner = "import subprocess\nwhile True:\n subprocess.run(['true'])\n print(flush=True)\n"
    proc = subprocess.Popen(
        [sys.executable, "-c", spawner], start_new_session=True, stdout=subprocess.PIPE
    )
    assert proc.stdout is not None
    try:
        proc.stdout.readline()  # spawning
        for _ in range(200):
            os.killpg(proc.pid, signal.SIGSTOP)
            wait_stopped(proc.pid, timeout_s=5)
            os.killpg(proc.pid, signal.SIGCONT)
            proc.stdout.readline()  # going on
        assert proc.poll() is None
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)
