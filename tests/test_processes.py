"""tests/processes.py: a process is stopped while what the look sees holds, else let go on."""

from __future__ import annotations

import subprocess

import pytest
from processes import state_of, stop_when


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
