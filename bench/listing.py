"""ListMatches on a server whose records directory holds many earlier matches, as an
organiser or the viewer pages through a standing arena's history.

``serve`` runs with its defaults on a records directory of ``N`` records (copies of one
real record under new ids, one file time each, a tenth of them aborted), and on an empty
one: the raw baseline, the call's own cost. ``start s`` is the time from starting ``serve``
to its listening (it reads every record's state first). The other columns are the median
time of ``CALLS`` calls of one request, seen by the client over gRPC on localhost:

* ``first page``: ``ListMatchesRequest()`` (100 matches, the default page);
* ``deep page``: the page after a token from the middle of the listing;
* ``aborted``: the first page of ``states = [ABORTED]``.

A page costs its own records (the catalog keeps them in listing order), so the rows stay
near the empty directory's at any ``N``; before, every call sorted all ``N`` entries on the
server's event loop.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import grpc
from medina.records.writer import RecordWriter
from medina.referee.config import MatchSettings
from medina.referee.local import local_match, policy
from medina.strategies import POLICIES
from medina.v1 import admin_pb2, admin_pb2_grpc

from bench import quick
from bench.capacity import serve_argv, start_process, stop_process

RECORDS = 20_000
QUICK_RECORDS = 5_000
CALLS = 20


def _one_record(directory: Path, match_id: str, stop_after: int | None) -> Path:
    """A real record of a short in-process match (aborted after ``stop_after`` decisions)."""
    settings = MatchSettings(ruleset="medina-v2", players=2, seed=1)
    writer = RecordWriter(directory, match_id)
    policies = [policy(POLICIES["random"], s) for s in range(2)]
    match = local_match(match_id, settings, policies, writer)

    async def play() -> None:
        if stop_after is None:
            await match.run()
            return
        task = asyncio.ensure_future(match.run())
        while match.state.decisions < stop_after:
            await asyncio.sleep(0)
        match.abort("bench: an aborted record")
        await task

    try:
        asyncio.run(play())
    finally:
        writer.close()
    return directory / f"{match_id}.jsonl"


def fill(directory: Path, n: int) -> None:
    """``n`` records: copies of a finished and an aborted record, a tenth aborted, each
    with its own id and file time (one second apart, the newest last)."""
    with tempfile.TemporaryDirectory() as tmp:
        finished = _one_record(Path(tmp), "finished", None)
        aborted = _one_record(Path(tmp), "aborted", 10)
        start = time.time() - n
        for i in range(n):
            path = directory / f"bench-{i:07d}.jsonl"
            shutil.copyfile(aborted if i % 10 == 0 else finished, path)
            os.utime(path, (start + i, start + i))


async def _median_ms(
    stub: admin_pb2_grpc.MatchServiceAsyncStub, request: admin_pb2.ListMatchesRequest
) -> float:
    times = []
    for _ in range(CALLS):
        began = time.perf_counter()
        await stub.ListMatches(request, timeout=60)
        times.append((time.perf_counter() - began) * 1e3)
    return statistics.median(times)


async def measure(directory: Path) -> tuple[float, float, float, float, int]:
    """(start-up in s, first page, deep page, aborted page in ms), and the listing's total."""
    began = time.perf_counter()
    proc, address = await start_process(*serve_argv(str(directory)))
    started = time.perf_counter() - began
    try:
        async with grpc.aio.insecure_channel(address) as channel:
            stub: admin_pb2_grpc.MatchServiceAsyncStub = admin_pb2_grpc.MatchServiceStub(channel)
            first = await stub.ListMatches(admin_pb2.ListMatchesRequest(), timeout=60)
            total = first.total_size
            token = first.next_page_token
            for _ in range(total // 200):  # to the middle, a page of 100 at a time
                page = await stub.ListMatches(
                    admin_pb2.ListMatchesRequest(page_token=token), timeout=60
                )
                token = page.next_page_token
            return (
                started,
                await _median_ms(stub, admin_pb2.ListMatchesRequest()),
                await _median_ms(stub, admin_pb2.ListMatchesRequest(page_token=token)),
                await _median_ms(
                    stub, admin_pb2.ListMatchesRequest(states=[admin_pb2.MATCH_STATE_ABORTED])
                ),
                total,
            )
    finally:
        await stop_process(proc)


def main() -> None:
    """Print the table."""
    n = QUICK_RECORDS if quick() else RECORDS
    print(
        f"ListMatches over gRPC, serve's defaults; start-up in s, then the median of {CALLS} "
        "calls in ms"
    )
    print(f"{'records':>8}  {'start s':>7}  {'first page':>10}  {'deep page':>9}  {'aborted':>7}")
    print(f"{'-' * 8}  {'-' * 7}  {'-' * 10}  {'-' * 9}  {'-' * 7}")
    for count in (0, n):
        with tempfile.TemporaryDirectory() as tmp:
            fill(Path(tmp), count)
            start, first, deep, aborted, total = asyncio.run(measure(Path(tmp)))
            assert total == count, f"the server listed {total} of {count} records"
            print(
                f"{count:>8,}  {start:>7.2f}  {first:>10.2f}  {deep:>9.2f}  {aborted:>7.2f}",
                flush=True,
            )
    sys.stdout.flush()
