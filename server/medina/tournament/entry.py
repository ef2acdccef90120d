"""Entry validation: before a tournament plays, each bot plays one quick game per variant on
a private arena, against the kit's in-process random players, under the tournament's clock
and policies. A bot that cannot start, or whose seat does not finish its game normally, fails
with the first thing it got wrong (check-bot's own diagnosis)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from medina.checkbot.runner import Launcher, play
from medina.checkbot.scenarios import Scenario
from medina.checkbot.verdicts import first_problem
from medina.launch.botproc import BotProcess, BotStartError, spawn_bot
from medina.referee.outcome import Termination
from medina.rpc.single.server import RunningServer, start_private_server

from .config import BotSpec, TournamentConfig, Variant
from .play import sandbox_spec

#: How long the bot has to connect after its process started.
CONNECT_S = 30.0
#: A validation game is aborted after this long, whatever the clock allows.
LIMIT_S = 600.0


@dataclass(frozen=True, slots=True)
class EntryResult:
    """One bot's entry game in one variant."""

    bot: str
    variant: Variant
    passed: bool
    #: Why it failed ('' when it passed): check-bot's first problem, e.g. "the bot exited
    #: with code 2 before connecting; its log ends: ...".
    reason: str
    seconds: float
    log: str = ""

    def line(self) -> str:
        """One line for the terminal."""
        what = f"{self.bot} ({self.variant.ruleset} {self.variant.players}p)"
        if self.passed:
            return f"entry: {what} ok ({self.seconds:.1f} s)"
        return f"entry: {what} FAILED: {self.reason}"


#: Chooses how to start a bot for its entry game (default: ``default_launcher``).
LauncherFor = Callable[[BotSpec], Launcher]


def default_launcher(base_dir: Path, hide: Sequence[Path] = ()) -> LauncherFor:
    """Starts each bot exactly as the tournament does (command, cwd, env, sandbox)."""

    def launcher_for(bot: BotSpec) -> Launcher:
        async def launch(address: str, token: str, log: Path) -> BotProcess:
            return await spawn_bot(
                bot.command,
                address,
                token,
                log,
                cwd=(base_dir / bot.cwd) if bot.cwd else None,
                env=dict(bot.env),
                sandbox=sandbox_spec(bot, base_dir, hide),
            )

        return launch

    return launcher_for


def scenario(cfg: TournamentConfig, bot: BotSpec, variant: Variant, seat: int) -> Scenario:
    """The entry game of ``bot`` in ``variant``: seat ``seat``, random players elsewhere."""
    return Scenario(
        name=f"entry-{bot.name}-{variant.ruleset}-{variant.players}p",
        ruleset=variant.ruleset,
        players=variant.players,
        bot=seat,
        seed=cfg.seed,
        opening=(),
        time=cfg.time,
        policies=cfg.policies,
        connect_s=CONNECT_S,
        opponents={s: "random" for s in range(variant.players) if s != seat},
        exit_s=0.5,
    )


async def validate(
    cfg: TournamentConfig,
    logs: Path,
    *,
    concurrency: int = 2,
    launcher_for: LauncherFor | None = None,
    on_result: Callable[[EntryResult], None] | None = None,
    hide: Sequence[Path] = (),
) -> list[EntryResult]:
    """Play every bot's entry game in every variant (``concurrency`` at once) on a private
    server on 127.0.0.1; records and bot logs go to ``logs``. Results in bot, then variant
    order. Sandboxed bots run as in the tournament, ``logs``, ``hide`` and the other bots'
    directories out of their sight."""
    base = Path(cfg.base_dir)
    hide = (logs, *hide, *(b.directory(base) for b in cfg.bots))
    launcher_for = launcher_for or default_launcher(base, hide)
    logs.mkdir(parents=True, exist_ok=True)
    server = await start_private_server(logs)
    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(i: int, bot: BotSpec, variant: Variant) -> EntryResult:
        async with gate:
            result = await _entry_game(
                server,
                scenario(cfg, bot, variant, i % variant.players),
                bot,
                variant,
                logs,
                launcher_for(bot),
            )
        if on_result is not None:
            on_result(result)
        return result

    try:
        return list(
            await asyncio.gather(
                *(
                    one(i, bot, variant)
                    for i, bot in enumerate(cfg.bots)
                    for variant in cfg.variants
                )
            )
        )
    finally:
        await server.stop(grace_s=1.0)


async def _entry_game(
    server: RunningServer,
    entry: Scenario,
    bot: BotSpec,
    variant: Variant,
    logs: Path,
    launch: Launcher,
) -> EntryResult:
    started = time.monotonic()
    try:
        trial = await play(server, entry, launch, logs, LIMIT_S)
    except BotStartError as exc:
        return EntryResult(bot.name, variant, False, str(exc), time.monotonic() - started)
    seconds = time.monotonic() - started
    seat = trial.outcome.seats[entry.bot]
    passed = (
        trial.crash is None
        and not trial.overran
        and trial.outcome.complete
        and seat.termination is Termination.NORMAL
    )
    reason = ""
    if not passed:
        problem = first_problem(trial)
        reason = problem.text if problem is not None else f"its seat ended {seat.termination.name}"
    return EntryResult(bot.name, variant, passed, reason, seconds, str(trial.log_path))


def failures(results: Sequence[EntryResult]) -> dict[str, str]:
    """The bots that failed, each with its first reason (in bot order)."""
    out: dict[str, str] = {}
    for r in results:
        if not r.passed and r.bot not in out:
            out[r.bot] = f"{r.reason} (entry game {r.variant.ruleset} {r.variant.players}p)"
    return out
