"""A misbehaving bot (Python SDK) for the sandbox tests: at its first decision it does what
``--do`` says, writes what happened to stderr (its log), then plays random legal actions.

  fork   start processes until it cannot (each sleeps)      -> the process limit
  hog    allocate (and touch) 1 MiB after 1 MiB            -> the memory limit
  spin   one busy process per core, after trying to widen its CPU affinity, then SPIN_WAIT_S
         seconds before it answers                          -> the CPU limit
  write  write a file in its own directory and at each path of WRITE_TARGETS (':'-separated)
  probe  connect to 127.0.0.1:PROBE_PORT, a port outside the sandbox
  env    say which environment variables, user id and home it has
  read   say what it finds at each path of READ_TARGETS (':'-separated): a directory's
         entries, a file's size and first bytes, or the error
  shout  write to stderr without end                       -> the output limit
  none   nothing: a well-behaved bystander
"""

from __future__ import annotations

import argparse
import asyncio
import errno
import os
import random
import socket
import subprocess
import sys
import time

from medina.engine import Action
from medina_client import Bot, Turn, play


def say(text: str) -> None:
    print(f"rogue: {text}", file=sys.stderr, flush=True)


def fork() -> None:
    # new processes that sleep (a bare fork of this gRPC process could hang on the locks of
    # its threads): as many as it can
    children = []
    while True:
        try:
            children.append(subprocess.Popen(["sleep", "3600"]))
        except OSError as exc:
            say(f"fork failed after {len(children)} children: {errno.errorcode[exc.errno or 0]}")
            return


def hog() -> None:
    chunks = []
    while True:
        try:
            chunks.append(bytearray(b"x" * (1 << 20)))
        except MemoryError:
            say(f"MemoryError after {len(chunks)} MiB")
            return


def spin() -> None:
    mine = sorted(os.sched_getaffinity(0))
    say(f"affinity {mine} of {os.cpu_count()} cores")
    try:
        os.sched_setaffinity(0, range(os.cpu_count() or 1))
        say("widened the affinity")
    except OSError as exc:
        say(f"sched_setaffinity refused: {errno.errorcode[exc.errno or 0]}")
    # new processes (a fork of this gRPC process could hang on a lock held by its threads)
    spinners = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"])
        for _ in range(os.cpu_count() or 1)
    ]
    say(f"{len(spinners)} spinners started")
    time.sleep(float(os.environ.get("SPIN_WAIT_S", "0")))  # let them spin before answering


def write() -> None:
    targets = ["own.txt", *filter(None, os.environ.get("WRITE_TARGETS", "").split(":"))]
    for path in targets:
        try:
            with open(path, "w") as f:
                f.write("rogue was here\n")
            say(f"wrote {path}")
        except OSError as exc:
            say(f"cannot write {path}: {errno.errorcode[exc.errno or 0]}")


def shout() -> None:
    line = "rogue: " + "la" * 500 + "\n"
    while True:
        sys.stderr.write(line)


def env() -> None:
    say(f"environment: {' '.join(sorted(os.environ))}")
    say(f"user {os.getuid()}, home {os.environ.get('HOME')}, cwd {os.getcwd()}")


def read() -> None:
    for path in filter(None, os.environ.get("READ_TARGETS", "").split(":")):
        try:
            if os.path.isdir(path):
                say(f"listed {path}: {sorted(os.listdir(path))}")
            else:
                with open(path, "rb") as f:
                    data = f.read()
                say(f"read {path}: {len(data)} bytes {data[:64]!r}")
        except OSError as exc:
            say(f"cannot read {path}: {errno.errorcode[exc.errno or 0]}")


def probe() -> None:
    port = int(os.environ["PROBE_PORT"])
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            say(f"connected to 127.0.0.1:{port}")
    except OSError as exc:
        say(f"cannot connect to 127.0.0.1:{port}: {errno.errorcode.get(exc.errno or 0, exc)}")


ACTS = {
    "fork": fork,
    "hog": hog,
    "spin": spin,
    "write": write,
    "probe": probe,
    "env": env,
    "read": read,
    "shout": shout,
    "none": None,
}


class Rogue(Bot):
    """Random play after one act of misbehaviour."""

    name = "rogue"

    def __init__(self, act: str) -> None:
        self.act = ACTS[act]
        self.rng = random.Random(5)

    def choose(self, turn: Turn) -> Action:
        """A random legal action (the first decision does the act first)."""
        if self.act is not None:
            act, self.act = self.act, None
            act()
        return turn.legal[self.rng.randrange(len(turn.legal))]


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--server", required=True)
    p.add_argument("--do", choices=sorted(ACTS), default="none")
    args = p.parse_args()
    asyncio.run(play(Rogue(args.do), args.server, os.environ["MEDINA_TOKEN"]))
