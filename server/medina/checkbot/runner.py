"""Playing one scenario: its match on the kit's arena, the bot process, and what happened."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from medina.engine import ActionKind, GameState, get_ruleset, legal_moves
from medina.launch.botlog import LogSays, log_says
from medina.launch.botproc import BotProcess
from medina.records.reader import read_record
from medina.referee.outcome import MatchOutcome
from medina.referee.record import DecisionEntry, Incident
from medina.rpc.single.host import HostedMatch
from medina.rpc.single.server import RunningServer
from medina.wire.records import decision_from_proto, incident_from_proto

from .drills import Drills
from .positions import legal_kinds
from .scenarios import Scenario

#: Starts the bot for one seat: (server address, seat token, log file) -> its process.
Launcher = Callable[[str, str, Path], Awaitable[BotProcess]]


@dataclass(frozen=True)
class Crash:
    """The bot process exited while its match was still running."""

    code: int  # exit status; negative: killed by that signal
    connected: bool  # whether it had ever connected
    request_id: int  # the request open then (0: none)
    decision: int  # the decision index then
    kinds: frozenset[ActionKind]  # the legal kinds of the open request


@dataclass(frozen=True)
class Trial:
    """What happened when the bot played one scenario."""

    scenario: Scenario
    match_id: str
    record_path: Path
    log_path: Path
    outcome: MatchOutcome
    timeline: tuple[DecisionEntry | Incident, ...]  # decisions and incidents, record order
    final: GameState  # the game when the match ended
    crash: Crash | None
    overran: bool  # the kit aborted the match at its time limit
    limit_s: float
    exit_code: int | None  # after the match: None when the bot did not exit in time
    exit_after_s: float  # seconds from the match's end to the bot's exit
    drilled: int  # the request refused as a drill (0: none)
    dropped_after: int  # the request after whose reply the stream was dropped (0: none)
    #: The limit the bot's sandbox stopped it at ("sandbox: memory limit 512 MiB reached"),
    #: when it ran sandboxed and went over one.
    limit: str | None = None

    @property
    def opening_end(self) -> int:
        """Index of the first decision after the scripted opening."""
        return len(self.scenario.opening)

    def bot_decisions(self) -> list[DecisionEntry]:
        """The bot seat's decisions after the opening, in order."""
        bot = self.scenario.bot
        return [
            d
            for d in self.timeline
            if isinstance(d, DecisionEntry) and d.seat == bot and d.index >= self.opening_end
        ]

    def incidents(self) -> list[Incident]:
        """The bot seat's incidents, in order."""
        bot = self.scenario.bot
        return [i for i in self.timeline if isinstance(i, Incident) and i.seat == bot]

    def bridge_diagnosis(self, limit: int = 800) -> str:
        """What a stdio bridge in the bot's log said about the program's lines ('' when the
        bot is no stdio bot or the bridge had nothing to say): its first complaint about a
        line, else its note that an answer never arrived (with its guess why)."""
        try:
            lines = self.log_path.read_bytes().decode("utf-8", "replace").splitlines()
        except OSError:
            return ""
        said = [
            line.split(": ", 1)[1].strip()
            for line in lines
            if line.startswith(("medina_client stdio: ", "medina_client.stdio: "))
        ]
        about_lines = [text for text in said if text.startswith("line ")]
        overdue = [text for text in said if OVERDUE in text or OWED in text]
        text = (about_lines or overdue or [""])[0]
        return text if len(text) <= limit else text[: limit - 3] + "..."

    def log_says(self) -> LogSays:
        """What the bot's log says of how it ended (a stdio bridge's program's last stderr
        line and exit status, when the bot is one)."""
        return log_says(self.log_path)

    def log_ends(self) -> str:
        """``its log ends: ...`` ('' when the log is empty)."""
        return self.log_says().ends(self.log_path)


#: How a stdio bridge's notes on missing answers start (medina_client.stdio).
OVERDUE = "the bot did not answer before the server moved on"
OWED = "the match ended while the bot still owed"


async def play(
    server: RunningServer, scenario: Scenario, launch: Launcher, logs: Path, limit_s: float
) -> Trial:
    """Play ``scenario`` with a bot from ``launch`` on ``server``; never leaves it running."""
    # The scripted opening is part of the settings (the game starts after it); the drills
    # sit between the bot's seat and the referee, where its replies come in.
    hosted = server.arena.create(scenario.settings(), local=scenario.local_policies())
    seat = hosted.seats[scenario.bot]
    drills = Drills(
        scenario.bot,
        scenario.drill_at,
        scenario.drop_after,
        seat.submit,
        lambda: _drop(hosted, scenario.bot),
    )
    seat.submit = drills
    task = hosted.task
    assert task is not None  # Arena.create starts it
    log_path = logs / f"{scenario.name}.{hosted.match_id}.log"
    try:
        proc = await launch(server.address, hosted.tokens[scenario.bot], log_path)
    except BaseException:
        hosted.match.abort("check-bot: the bot did not start")
        await task
        raise
    try:
        crash, overran = await _watch(hosted, scenario.bot, task, proc, limit_s)
        outcome = await task
        ended = asyncio.get_running_loop().time()
        exit_code = await _wait_exit(proc, scenario.exit_s)
        exit_after = asyncio.get_running_loop().time() - ended
    finally:
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
    return Trial(
        scenario=scenario,
        match_id=hosted.match_id,
        record_path=hosted.record_path,
        log_path=log_path,
        outcome=outcome,
        timeline=_timeline(hosted, scenario),
        final=hosted.match.state,
        crash=crash,
        overran=overran,
        limit_s=limit_s,
        exit_code=exit_code,
        exit_after_s=exit_after,
        drilled=drills.drilled,
        dropped_after=drills.dropped_after,
        limit=proc.limit_hit(),
    )


async def _watch(
    hosted: HostedMatch,
    bot: int,
    task: asyncio.Task[MatchOutcome],
    proc: BotProcess,
    limit_s: float,
) -> tuple[Crash | None, bool]:
    """Wait for the match to end; abort it when the bot exits first or time runs out."""
    exited = asyncio.ensure_future(proc.wait())
    try:
        done, _ = await asyncio.wait(
            {task, exited}, timeout=limit_s, return_when=asyncio.FIRST_COMPLETED
        )
        if task in done:
            return None, False
        if exited in done:  # before MatchEnded, which is sent only once the match has ended
            crash = _crash(hosted, bot, exited.result())
            hosted.match.abort(f"check-bot: the bot process exited with code {crash.code}")
            return crash, False
        hosted.match.abort(f"check-bot: the match did not end within {limit_s:g} s")
        return None, True
    finally:
        if not exited.done():
            exited.cancel()


def _crash(hosted: HostedMatch, bot: int, code: int) -> Crash:
    """Where the match stood when the bot process exited."""
    seat = hosted.seats[bot]
    state = hosted.match.state
    request = seat.open_request
    asked = request and state.to_move == bot and not state.over
    kinds = legal_kinds(legal_moves(state)) if asked else frozenset()
    return Crash(code, seat.ever_connected, request, state.decisions, kinds)


async def _wait_exit(proc: BotProcess, timeout_s: float) -> int | None:
    """The bot's exit status, or None when it is still running after ``timeout_s``."""
    try:
        async with asyncio.timeout(timeout_s):
            return await proc.wait()
    except TimeoutError:
        return None


def _drop(hosted: HostedMatch, bot: int) -> None:
    """End the bot's stream from the server side, as a lost connection would."""
    connection = hosted.seats[bot].connection
    if connection is not None:
        connection.close()


def _timeline(hosted: HostedMatch, scenario: Scenario) -> tuple[DecisionEntry | Incident, ...]:
    """The decisions and incidents of the match's record, in order."""
    geometry = get_ruleset(scenario.ruleset, scenario.players).geometry
    record = read_record(hosted.record_path)
    out: list[DecisionEntry | Incident] = []
    for _line, entry in record.entries:
        if entry.HasField("decision"):
            out.append(decision_from_proto(entry.decision, geometry))
        elif entry.HasField("incident"):
            out.append(incident_from_proto(entry.incident))
    return tuple(out)


__all__ = ["Crash", "Launcher", "Trial", "play"]
