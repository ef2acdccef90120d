"""Matches beside a viewer under load: ``medina-arena serve --http`` refereeing 64 matches of
bots thinking 20-80 ms, alone and while eight keep-alive HTTP clients on the same machine ask
for replays as fast as they can, cycling through the records directory's 40 games.

The viewer shares the referee's event loop inside ``serve --http``: it paces all its clients
together (``web/pacing.py``) and builds replays in a low-priority child process
(``web/builds.py``), so the matches should play as they do without the flood. The rows give
the matches' decisions a second, the bots' p99 latency (a reply sent -> the next request
received, think time excluded), strikes, and the replays the flood was served a second.
``serve`` runs with its defaults plus ``--http 0``; the bots send the SDK's default Hello.
"""

from __future__ import annotations

import asyncio
import shutil
import sys
import tempfile
import time
from pathlib import Path

from medina.records.writer import RecordWriter
from medina.referee.config import MatchSettings
from medina.referee.local import local_match, random_policy

from bench import capacity
from bench.capacity import Load

MATCHES = 64
FLOODERS = 8
RECORDS = 40
WARMUP_S = 4.0
WINDOW_S = 8.0


def _records(directory: Path, count: int) -> list[str]:
    """``count`` seeded 4-player games' records in ``directory``; their ids."""
    ids = []
    for seed in range(1, count + 1):
        writer = RecordWriter(directory, f"flood-{seed}")
        settings = MatchSettings("medina-v2", 4, seed)
        policies = [random_policy(seed * 10 + i) for i in range(4)]
        asyncio.run(local_match(f"f{seed}", settings, policies, writer).run())
        writer.close()
        ids.append(f"flood-{seed}")
    return ids


#: The flooding clients, a process of their own (threads in the bots' process would take
#: its interpreter lock from the bots): argv host, port, clients, record ids; on SIGTERM
#: (or stdin closed) it prints how many replays were served.
FLOODER = """
import http.client, sys, threading
host, port, n, ids = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
stop = threading.Event()
served = [0] * n
def flood(k):
    conn = http.client.HTTPConnection(host, port, timeout=60)
    i = k
    while not stop.is_set():
        conn.request("GET", f"/api/records/{ids[i % len(ids)]}/replay",
                     headers={"Accept-Encoding": "gzip"})
        answer = conn.getresponse()
        answer.read()
        served[k] += answer.status == 200
        i += n
threads = [threading.Thread(target=flood, args=(k,), daemon=True) for k in range(n)]
for t in threads:
    t.start()
sys.stdin.read()
stop.set()
for t in threads:
    t.join(60)
print(sum(served), flush=True)
"""


async def _row(records: Path, ids: list[str], flooders: int) -> tuple[capacity.Level, float]:
    """One fresh server on a copy of ``records``: the matches' level and the replays served
    a second while they were measured."""
    with tempfile.TemporaryDirectory() as tmp:
        for path in records.iterdir():
            shutil.copy(path, tmp)
        proc = await asyncio.create_subprocess_exec(
            *capacity.serve_argv(tmp, "--http", "0"),
            cwd=str(capacity.ROOT),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
        assert proc.stdout is not None
        address = url = ""
        while not (address and url):
            line = (await asyncio.wait_for(proc.stdout.readline(), 60)).decode()
            if not line:
                raise RuntimeError("serve --http exited before it listened")
            if "viewer on " in line:
                url = line.split("viewer on ", 1)[1].split()[0].rstrip("/")
            elif "listening on" in line:
                address = line.rsplit(" ", 1)[1].strip()
        host, port = url.removeprefix("http://").rsplit(":", 1)
        flood = await asyncio.create_subprocess_exec(
            sys.executable, "-c", FLOODER, host, port, str(flooders), *ids,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        )  # fmt: skip
        assert flood.stdin is not None and flood.stdout is not None
        try:
            started = time.perf_counter()
            level, _stats = await capacity.measure(
                address, proc.pid or 0, Load(MATCHES, (0.02, 0.08)), WARMUP_S, WINDOW_S
            )
            flood.stdin.close()
            served = int((await asyncio.wait_for(flood.stdout.read(), 90)).decode() or 0)
            rate = served / (time.perf_counter() - started)
        finally:
            if flood.returncode is None:
                flood.kill()
            await flood.wait()
            await capacity.stop_process(proc)
    return level, rate


async def _main(records: Path, ids: list[str]) -> None:
    print(f"{'':<34} {'dec/s':>7} {'p50 ms':>7} {'p99 ms':>7} {'strikes':>7} {'replays/s':>9}")
    for label, flooders in (("matches alone", 0), (f"{FLOODERS} clients flooding", FLOODERS)):
        level, rate = await _row(records, ids, flooders)
        print(
            f"{label:<34} {level.decisions_s:>7.0f} {level.p50_ms:>7.2f} "
            f"{level.p99_ms:>7.2f} {level.strikes:>7} {rate:>9.0f}",
            flush=True,
        )
    print(
        f"({MATCHES} matches of 4-player medina-v2, bots thinking 20-80 ms, {capacity.DECISION_MS} "
        f"ms a decision; `serve --http 0`, otherwise its defaults; the flood: {FLOODERS} "
        f"keep-alive HTTP/1.1 clients on this machine (loopback: the per-address pace does not "
        f"apply, the viewer's shared one does) cycling through {RECORDS} games' replays, "
        "gzipped, from a process of their own; the bots in the bench's)"
    )


def main() -> None:
    """Print the two rows."""
    if sys.platform != "linux":
        print("(viewer_load: Linux only, skipped)")
        return
    with tempfile.TemporaryDirectory() as tmp:
        records = Path(tmp)
        asyncio.run(_main(records, _records(records, RECORDS)))
