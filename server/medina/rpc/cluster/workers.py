"""Worker processes of a multi-worker server (``serve --workers N``): start, watch, restart,
stop.

Each worker is an ordinary ``medina-arena serve`` on 127.0.0.1 and a free port, told the
internal organiser secret in its environment (so only the front creates matches there). It
prints its address on its first stdout line, as ``serve`` does; it stops when the front
closes its stdin (a front that dies leaves no worker behind) or on SIGTERM. A worker that
dies is logged, its slot gets a new generation, and a replacement is started.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import grpc

from medina.v1 import admin_pb2, admin_pb2_grpc

from ..common.auth import bearer_metadata

log = logging.getLogger("medina.rpc")

PLAY = "/medina.v1.ArenaService/Play"
WATCH = "/medina.v1.SpectatorService/Watch"
READY_PREFIX = "medina-arena listening on "
#: A worker that dies sooner than this after starting counts as a failed start: the next
#: replacement waits longer (0.5 s, doubling, at most ``MAX_BACKOFF_S``).
HEALTHY_AFTER_S = 10.0
MAX_BACKOFF_S = 30.0
#: How long a dead worker's channel stays open: three of the front's call timeouts (60 s;
#: a CreateMatch may count loads, then create, on a worker it picked before the death).
DEAD_CHANNEL_GRACE_S = 180.0


class WorkerStartError(RuntimeError):
    """A worker process did not start (the message names it and says why)."""


@dataclass(eq=False)
class Worker:
    """One running worker process and the channel to it."""

    slot: int
    generation: int
    process: asyncio.subprocess.Process
    address: str
    channel: grpc.aio.Channel
    auth: tuple[tuple[str, str], ...]
    started: float = field(default_factory=time.monotonic)
    alive: bool = True
    #: CreateMatch calls on their way to it (counted as load until answered).
    pending: int = 0
    #: The port of its own listener for bots, on the front's host (None: it has none).
    bots_port: int | None = None

    def __post_init__(self) -> None:
        self.matches = admin_pb2_grpc.MatchServiceStub(self.channel)
        # Raw bytes both ways: the front routes on the first message and never decodes
        # the rest.
        self.play: grpc.aio.StreamStreamMultiCallable[bytes, bytes] = self.channel.stream_stream(
            PLAY, request_serializer=None, response_deserializer=None
        )
        self.watch: grpc.aio.UnaryStreamMultiCallable[admin_pb2.WatchRequest, bytes] = (
            self.channel.unary_stream(
                WATCH,
                request_serializer=admin_pb2.WatchRequest.SerializeToString,
                response_deserializer=None,
            )
        )

    @property
    def name(self) -> str:
        """How logs and error messages name it."""
        return f"worker {self.slot} (pid {self.process.pid})"


class WorkerPool:
    """``count`` worker processes started from ``argv``, kept running until ``stop``."""

    def __init__(
        self,
        argv: Sequence[str],
        count: int,
        secret: str,
        *,
        start_timeout_s: float = 60.0,
        on_death: Callable[[Worker], None] | None = None,
    ) -> None:
        if count < 1:
            raise ValueError(f"a worker pool needs at least 1 worker, got {count}")
        self.argv = list(argv)
        self.count = count
        self.auth = bearer_metadata(secret)
        self._secret = secret
        self.start_timeout_s = start_timeout_s
        self.on_death = on_death
        self.workers: list[Worker | None] = [None] * count
        self.generations = [0] * count
        self.stopping = False
        self._tasks: set[asyncio.Task[None]] = set()
        #: Names of workers that died, by (slot, generation), for error messages.
        self.dead: dict[tuple[int, int], str] = {}

    async def start(self) -> None:
        """Start every worker; WorkerStartError (after stopping the others) if one fails."""
        results = await asyncio.gather(
            *(self._start(slot) for slot in range(self.count)), return_exceptions=True
        )
        failed = [r for r in results if isinstance(r, BaseException)]
        if failed:
            await self.stop(0.0)
            raise failed[0]

    def live(self) -> list[Worker]:
        """The workers running now."""
        return [w for w in self.workers if w is not None and w.alive]

    def find(self, slot: int, generation: int) -> Worker | None:
        """The worker of ``slot`` if it is still the generation that was asked for."""
        worker = self.workers[slot]
        if worker is None or not worker.alive or worker.generation != generation:
            return None
        return worker

    def describe(self, slot: int, generation: int) -> str:
        """A worker's name, also after it died."""
        worker = self.workers[slot]
        if worker is not None and worker.generation == generation:
            return worker.name
        return self.dead.get((slot, generation), f"worker {slot}")

    async def stop(self, grace_s: float, now: asyncio.Event | None = None) -> None:
        """SIGTERM every worker (each gives its running matches ``grace_s``), wait for them,
        kill any still running ``grace_s`` + 15 s later. When ``now`` is set meanwhile,
        SIGTERM them again: a worker told twice aborts its matches at once."""
        self.stopping = True
        for task in list(self._tasks):  # replacements being started are given up
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        workers = [w for w in self.workers if w is not None]

        def tell() -> None:
            for w in workers:
                if w.process.returncode is None:
                    with contextlib.suppress(ProcessLookupError):
                        w.process.send_signal(signal.SIGTERM)

        async def again() -> None:
            assert now is not None
            await now.wait()
            tell()

        tell()
        nudge = asyncio.create_task(again()) if now is not None else None
        try:
            for w in workers:
                try:
                    async with asyncio.timeout(grace_s + 15.0):
                        await w.process.wait()
                except TimeoutError:
                    log.error("%s did not stop in time; killing it", w.name)
                    with contextlib.suppress(ProcessLookupError):
                        w.process.kill()
                    await w.process.wait()
                await w.channel.close()
        finally:
            if nudge is not None:
                nudge.cancel()

    async def _start(self, slot: int) -> Worker:
        generation = self.generations[slot] + 1
        self.generations[slot] = generation
        env = dict(os.environ, MEDINA_ORGANISER_TOKEN=self._secret, MEDINA_WORKER=str(slot))
        proc = await asyncio.create_subprocess_exec(
            *self.argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            env=env,
            start_new_session=True,  # a terminal's Ctrl-C reaches the front, which stops us
        )
        assert proc.stdout is not None
        try:
            async with asyncio.timeout(self.start_timeout_s):
                line = (await proc.stdout.readline()).decode(errors="replace").strip()
        except BaseException as exc:  # timed out, or the pool stops while it starts
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await asyncio.shield(proc.wait())
            if isinstance(exc, TimeoutError):
                raise WorkerStartError(
                    f"worker {slot} (pid {proc.pid}) did not report its address within "
                    f"{self.start_timeout_s:g} s"
                ) from None
            raise
        if not line.startswith(READY_PREFIX):
            code = await proc.wait()
            raise WorkerStartError(
                f"worker {slot} (pid {proc.pid}) exited with code {code} before serving"
                + (f": {line}" if line else " (its log is on stderr)")
            )
        address, _, bots = line.removeprefix(READY_PREFIX).partition(" bots-port ")
        channel = grpc.aio.insecure_channel(
            address,
            options=[
                # Forwarded streams may be many: one connection per worker carries them all.
                ("grpc.max_receive_message_length", 16 * 1024 * 1024),
                ("grpc.keepalive_time_ms", 20_000),
            ],
        )
        worker = Worker(slot, generation, proc, address, channel, self.auth)
        worker.bots_port = int(bots) if bots.isdigit() else None
        self.workers[slot] = worker
        self._spawn(self._drain(proc.stdout))
        self._spawn(self._watch(worker))
        if worker.bots_port is None:
            log.info("%s serving on %s", worker.name, address)
        else:
            log.info("%s serving on %s, bots on port %d", worker.name, address, worker.bots_port)
        return worker

    def _spawn(self, coro: object) -> None:
        task: asyncio.Task[None] = asyncio.get_running_loop().create_task(coro)  # type: ignore[arg-type]
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _drain(self, stdout: asyncio.StreamReader) -> None:
        while await stdout.read(4096):
            pass

    async def _watch(self, worker: Worker) -> None:
        code = await worker.process.wait()
        worker.alive = False
        if self.stopping:
            return
        self.dead[(worker.slot, worker.generation)] = worker.name
        how = f"killed by signal {-code}" if code < 0 else f"exited with code {code}"
        log.error(
            "%s died (%s); its matches are lost (their records end where it stopped); "
            "starting a replacement",
            worker.name,
            how,
        )
        self._spawn(self._close_later(worker))
        if self.on_death is not None:
            self.on_death(worker)
        failures = 0 if time.monotonic() - worker.started >= HEALTHY_AFTER_S else 1
        await self._replace(worker.slot, failures)

    async def _close_later(self, worker: Worker) -> None:
        """Close a dead worker's channel once no call can still be using it. Closed at once,
        a call that picked the worker before it died (CreateMatch weighs every worker's load
        first) raised on the closed channel instead of failing as UNAVAILABLE, which every
        caller takes as a worker going away."""
        try:
            await asyncio.sleep(DEAD_CHANNEL_GRACE_S)
        finally:
            await worker.channel.close()

    async def _replace(self, slot: int, failures: int) -> None:
        while not self.stopping:
            if failures:
                await asyncio.sleep(min(MAX_BACKOFF_S, 0.5 * 2 ** (failures - 1)))
            if self.stopping:
                return
            try:
                worker = await self._start(slot)
            except (WorkerStartError, OSError) as exc:
                failures += 1
                log.error("could not restart worker %d: %s", slot, exc)
                continue
            log.warning("%s replaces the worker that died", worker.name)
            return
