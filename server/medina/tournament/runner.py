"""Playing a tournament's games: claim a game from the store, play it on a server, store its
result, N at once. ``tournament run`` and ``tournament worker`` are both this loop; the run
also creates the tournament and waits until every game is done.

A game is stored only by the lease that played it, so a runner killed at any moment loses
nothing but the games it was playing, which are replayed from scratch."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import grpc

from medina.boundary.stopping import STOP_SIGNALS
from medina.rpc.common.auth import bearer_metadata
from medina.rpc.organiser import open_channel
from medina.rpc.single.server import RunningServer, start_private_server
from medina.storage.tournaments import (
    Claim,
    NewGame,
    SeatRow,
    StoreError,
    TournamentRow,
    TournamentStore,
    worker_id,
)
from medina.wire.shared.tls import ClientTls

from .config import TournamentConfig, Variant
from .play import GameError, PlayedGame, play_game
from .schedule import ScheduledGame, build
from .sprt import SprtStatus, SprtTracker, pair_scores
from .standings import GameResult, SeatResult, Standings, compute, first_separated_block

log = logging.getLogger("medina.tournament")


def enter(
    store: TournamentStore, cfg: TournamentConfig, games: Sequence[ScheduledGame] | None = None
) -> tuple[TournamentRow, bool]:
    """The tournament of ``cfg`` in ``store``: created with its bots and schedule (``games``,
    else ``build(cfg)``) when new (True), or found as stored (False). StoreError when a
    tournament of that name was started from a different file."""
    return store.ensure_tournament(
        cfg.name,
        cfg.digest,
        cfg.to_json(),
        [(b.name, b.command, b.cwd, b.env) for b in cfg.bots],
        (
            NewGame(
                g.number, g.block, g.variant.ruleset, g.variant.players, g.seed, g.rotation, g.seats
            )
            for g in (build(cfg) if games is None else games)
        ),
    )


DEFAULT_LEASE_S = 60.0
#: Seconds a stopped runner waits for a game to come back from its match's abort: the
#: abort's answer (10 s at most), the result, and a complete game's bots' exit (10 s).
STOP_GAME_S = 25.0


@dataclass
class RunOptions:
    """How to play: ``server`` None starts an in-process server on 127.0.0.1."""

    concurrency: int = 2
    records: Path = Path("records")
    server: str | None = None
    organiser_token: str | None = None
    #: How ``server`` is dialled, by the runner and the bots it starts (None: in clear).
    tls: ClientTls | None = None
    lease_s: float = DEFAULT_LEASE_S
    #: Only this tournament (by id); None: any running tournament of the store (a worker).
    tournament_id: int | None = None
    #: Keep waiting for games while a tournament is running elsewhere; False: stop when
    #: nothing is left to claim and nothing is being played.
    poll_s: float = 2.0
    #: What sandboxed bots must not see besides the other bots' directories (the records,
    #: the database's directory).
    hide: tuple[Path, ...] = ()


@dataclass
class Tally:
    """What a runner did, for its progress line and final message."""

    played: int = 0
    given_back: int = 0
    lost_leases: int = 0
    started: float = field(default_factory=time.monotonic)


#: Called after every stored game (for progress displays).
OnGame = Callable[[Claim, PlayedGame], None]
#: Called with a line to show about a game being played (its match waits in the server's
#: start queue: a busy server, not a hang).
OnNote = Callable[[Claim, str], None]
#: Started beside the runner's own server (the web viewer); returns how to stop it.
Beside = Callable[[RunningServer], Awaitable[Callable[[], Awaitable[None]]]]


class Runner:
    """Plays games of a store until none is left (or it is stopped)."""

    def __init__(
        self,
        store: TournamentStore,
        options: RunOptions,
        on_game: OnGame | None = None,
        beside: Beside | None = None,
        on_note: OnNote | None = None,
    ) -> None:
        self.beside = beside
        self.on_note = on_note
        self.store = store
        self.options = options
        self.on_game = on_game
        self.owner = worker_id()
        self.tally = Tally()
        self.stopping: str | None = None
        #: The signal that stopped it ('' for none).
        self.signal = ""
        #: Why the runner gave up (a server that refuses every game), if it did.
        self.failed: str | None = None
        self._stop = asyncio.Event()
        self._changed = asyncio.Event()  # a game of this runner ended (stored or given back)
        self._configs: dict[int, TournamentConfig] = {}
        self._trackers: dict[int, SprtTracker] = {}
        self._server: RunningServer | None = None

    def stop(self, why: str) -> None:
        """Stop claiming; games being played are aborted and given back."""
        if self.stopping is None:
            self.stopping = why
        self._stop.set()

    def config(self, tid: int) -> TournamentConfig:
        """A tournament's configuration, as stored."""
        if tid not in self._configs:
            row = next(t for t in self.store.tournaments() if t.id == tid)
            self._configs[tid] = TournamentConfig.from_json(row.config)
        return self._configs[tid]

    async def run(self) -> Tally:
        """Play until no game is left to claim and none is being played (by anyone), or
        until ``stop``."""
        await asyncio.to_thread(self.store.reclaim_dead_local, self.options.tournament_id)
        stop_beside: Callable[[], Awaitable[None]] | None = None
        if self.options.server is None:
            self._server = await start_private_server(self.options.records)
            address = self._server.address
            if self.beside is not None:
                try:
                    stop_beside = await self.beside(self._server)
                except BaseException:
                    await self._server.stop(grace_s=1)
                    raise
        else:
            address = self.options.server
            if not self.options.organiser_token:
                log.warning(
                    "the bots are handed %s and no organiser token is used there: unless that "
                    "server refuses organiser calls without one, a bot can forfeit its "
                    "opponents or abort its game (serve --organiser-token, then "
                    "--organiser-token here)",
                    address,
                )
        metadata = (
            self._server.organiser_metadata
            if self._server is not None
            else bearer_metadata(self.options.organiser_token)
        )
        try:
            async with open_channel(address, self.options.tls) as channel:
                slots = [
                    asyncio.create_task(self._slot(channel, address, metadata))
                    for _ in range(self.options.concurrency)
                ]
                try:
                    await asyncio.gather(*slots)
                finally:
                    for s in slots:
                        s.cancel()
                    await asyncio.gather(*slots, return_exceptions=True)
        finally:
            if stop_beside is not None:
                await stop_beside()
            if self._server is not None:
                await self._server.stop(grace_s=1)
        return self.tally

    async def _slot(
        self, channel: grpc.aio.Channel, address: str, metadata: tuple[tuple[str, str], ...]
    ) -> None:
        while not self._stop.is_set():
            claim = await asyncio.to_thread(
                self.store.claim, self.owner, self.options.lease_s, self.options.tournament_id
            )
            if claim is None:
                if not await asyncio.to_thread(self._work_left):
                    return
                # Games are in play (here or elsewhere): one may come back. Look again when
                # one of ours ends, or after poll_s for the others'.
                self._changed.clear()
                waits = [
                    asyncio.create_task(self._stop.wait()),
                    asyncio.create_task(self._changed.wait()),
                ]
                _done, pending = await asyncio.wait(
                    waits, timeout=self.options.poll_s, return_when=asyncio.FIRST_COMPLETED
                )
                for w in pending:
                    w.cancel()
                continue
            try:
                await self._play(claim, channel, address, metadata)
            finally:
                self._changed.set()

    def _work_left(self) -> bool:
        """Whether games are still pending or being played in the tournaments this runner
        serves (a game leased elsewhere may come back when its lease runs out)."""
        ids = (
            [self.options.tournament_id]
            if self.options.tournament_id is not None
            else [t.id for t in self.store.tournaments() if t.status == "running"]
        )
        for tid in ids:
            counts = self.store.counts(tid)
            if counts.get("pending", 0) or counts.get("running", 0):
                return True
        return False

    async def _play(
        self,
        claim: Claim,
        channel: grpc.aio.Channel,
        address: str,
        metadata: tuple[tuple[str, str], ...],
    ) -> None:
        cfg = self.config(claim.tournament_id)
        variant = Variant(claim.ruleset, claim.players)
        settings = cfg.settings(variant, claim.seed, claim.seats)
        bots = [cfg.bot(name) for name in claim.seats]
        on_note = self.on_note

        def say(text: str) -> None:
            if on_note is not None:
                on_note(claim, text)

        stop_game = asyncio.Event()
        #: The result, once stored: before the bots of a complete game are given their time
        #: to exit, so a runner killed meanwhile has not lost a finished game.
        kept: list[PlayedGame] = []

        async def keep(played: PlayedGame) -> None:
            if played.ending != "aborted" and await self._store(claim, played):
                kept.append(played)

        game = asyncio.create_task(
            play_game(
                channel,
                address,
                settings,
                bots,
                Path(cfg.base_dir),
                self.options.records,
                metadata=metadata,
                hide=(
                    self.options.records,
                    *self.options.hide,
                    *(b.directory(Path(cfg.base_dir)) for b in cfg.bots),
                ),
                say=None if on_note is None else say,
                stop=stop_game,
                tls=self.options.tls,
                on_result=keep,
            )
        )
        lost = asyncio.Event()
        beat = asyncio.create_task(self._heartbeat(claim, lost, lambda: bool(kept)))
        stop = asyncio.create_task(self._stop.wait())
        lost_wait = asyncio.create_task(lost.wait())
        try:
            await asyncio.wait({game, stop, lost_wait}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            beat.cancel()
            stop.cancel()
            lost_wait.cancel()
        if not game.done() and not lost.is_set():
            # Stopped: the match is aborted and its result read. One that had ended first
            # (its record complete on disk, the runner not told yet) is stored, not thrown
            # away and played again; one stored already has its bots given their time.
            if not kept:
                stop_game.set()
            await asyncio.wait({game}, timeout=STOP_GAME_S)
        if not game.done():
            game.cancel()
            with contextlib.suppress(asyncio.CancelledError, GameError):
                await game
            if kept:  # stored; only its bots' exit was cut short
                await self._after_stored(claim, kept[0])
                return
            why = (
                f"interrupted: {self.stopping}; replayed from scratch"
                if not lost.is_set()
                else "lease lost (the database did not hear from this worker in time)"
            )
            if lost.is_set():
                self.tally.lost_leases += 1
            else:
                await asyncio.to_thread(self.store.release, claim, why)
                self.tally.given_back += 1
            return
        try:
            played = game.result()
        except GameError as exc:
            log.warning("game %d of %s: %s; given back", claim.number + 1, claim.tournament, exc)
            await asyncio.to_thread(self.store.release, claim, f"not played: {exc}")
            self.tally.given_back += 1
            if exc.fatal:
                self.failed = str(exc)
                self.stop(f"stopped: {exc}")
                return
            # A server that refuses games (full, shutting down) is not asked again at once.
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.options.poll_s):
                    await self._stop.wait()
            return
        if played.ending == "aborted":
            why = (
                f"interrupted: {self.stopping}; replayed from scratch"
                if stop_game.is_set()
                else f"match {played.match_id} was aborted; replayed"
            )
            await asyncio.to_thread(self.store.release, claim, why)
            self.tally.given_back += 1
            return
        if kept:  # else the lease ran out before the result could be stored (_store said so)
            await self._after_stored(claim, played)

    async def _after_stored(self, claim: Claim, played: PlayedGame) -> None:
        await asyncio.to_thread(self._after_game, claim.tournament_id)
        if self.on_game is not None:
            self.on_game(claim, played)

    async def _store(self, claim: Claim, played: PlayedGame) -> bool:
        """Store a game's result under its lease; False (counted, logged) when the lease
        ran out first: another worker plays the game again."""
        seats = [
            SeatRow(
                seat=s.seat,
                bot=claim.seats[s.seat],
                total=s.total,
                rank=s.rank,
                termination=s.termination.name.lower(),
                strikes=s.strikes,
                detail=played.detail(s.seat),
            )
            for s in played.outcome.seats
        ]
        stored = await asyncio.to_thread(
            self.store.finish,
            claim,
            match_id=played.match_id,
            record_path=played.record_path,
            ending=played.ending,
            seats=seats,
        )
        if not stored:
            self.tally.lost_leases += 1
            log.warning(
                "game %d of %s: the lease ran out before the result was stored; another worker "
                "plays it again",
                claim.number + 1,
                claim.tournament,
            )
            return False
        self.tally.played += 1
        return True

    async def _heartbeat(
        self, claim: Claim, lost: asyncio.Event, stored: Callable[[], bool]
    ) -> None:
        """Renew the game's lease until it is lost (``lost`` set) or its result ``stored``:
        the lease of a stored game is over, not lost, and its bots keep their time to exit
        (it was taken for a lost lease, the game cancelled and its bots left running)."""
        while True:
            await asyncio.sleep(self.options.lease_s / 3)
            try:
                held = await asyncio.to_thread(self.store.renew, claim, self.options.lease_s)
            except StoreError as exc:
                log.warning("cannot renew the lease of game %d: %s", claim.number + 1, exc)
                continue
            if not held:
                if not stored():
                    lost.set()
                return

    def _after_game(self, tid: int) -> None:
        """Stop early once the standings separated (--until-separated) or the SPRT reached
        its verdict, then mark the tournament finished when nothing is left."""
        cfg = self.config(tid)
        if cfg.until_separated:
            block = separated_block(self.store, tid, cfg)
            if block is not None and self.store.stop_early(tid, block):
                log.info("tournament %s: the standings separated after block %d", cfg.name, block)
        if cfg.format == "sprt" and cfg.sprt is not None:
            tracker = self._trackers.setdefault(tid, SprtTracker(cfg.sprt))
            test = sprt_status(self.store, tid, cfg, tracker)
            if test.verdict is not None and test.decided_at is not None:
                block = (test.decided_at + 1) * cfg.pair_blocks - 1
                if self.store.stop_early(tid, block, status=f"sprt-{test.verdict.lower()}"):
                    log.info("tournament %s: %s", cfg.name, test.line())
        self.store.finish_if_done(tid)


def game_results(store: TournamentStore, tid: int) -> list[GameResult]:
    """The stored results as standings input."""
    return [
        GameResult(
            number=g.number,
            block=g.block,
            ruleset=g.ruleset,
            players=g.players,
            ending=g.ending,
            seats=tuple(
                SeatResult(
                    bot=s.bot,
                    seat=s.seat,
                    total=s.total,
                    rank=s.rank,
                    termination=s.termination,
                    strikes=s.strikes,
                )
                for s in g.seats
            ),
        )
        for g in store.results(tid)
    ]


def separated_block(store: TournamentStore, tid: int, cfg: TournamentConfig) -> int | None:
    """The first whole block after which the standings separated, if they have."""
    sizes = store.block_sizes(tid)
    results = game_results(store, tid)
    done: dict[int, int] = {}
    for g in results:
        done[g.block] = done.get(g.block, 0) + 1
    whole = 0
    while done.get(whole, 0) == sizes.get(whole, -1):
        whole += 1
    counted = [g for g in results if g.block < whole]
    return first_separated_block([b.name for b in cfg.bots], counted, cfg.min_games)


def sprt_status(
    store: TournamentStore,
    tid: int,
    cfg: TournamentConfig,
    tracker: SprtTracker | None = None,
) -> SprtStatus:
    """Where an SPRT tournament's test stands: its whole pairs in order, up to the verdict
    (``tracker``, when given, remembers the pairs already counted)."""
    assert cfg.sprt is not None
    scores = pair_scores(game_results(store, tid), cfg.candidates[0], cfg.baseline, cfg.pair_blocks)
    return (tracker or SprtTracker(cfg.sprt)).feed(scores)


def standings(store: TournamentStore, tid: int) -> Standings:
    """The standings of a tournament: every game played, or, when it stopped early because
    the standings separated, the games up to that point."""
    row = next(t for t in store.tournaments() if t.id == tid)
    results = game_results(store, tid)
    if row.stop_block is not None:
        results = [g for g in results if g.block <= row.stop_block]
    return compute(store.bot_names(tid), results)


def install_signal_handlers(runner: Runner) -> None:
    """SIGINT, SIGTERM and SIGHUP (a closed terminal) stop the runner cleanly (games in
    play are given back); ``runner.signal`` names the first."""
    loop = asyncio.get_running_loop()

    def stop(sig: signal.Signals) -> None:
        runner.signal = runner.signal or sig.name
        runner.stop(f"runner stopped ({sig.name})")

    for sig in STOP_SIGNALS:
        loop.add_signal_handler(sig, stop, sig)
