"""``python -m medina_client stdio [OPTIONS] -- COMMAND ARGS...``: a bridge that lets a program
speaking JSON lines on stdin/stdout play one seat (docs/protocol.md, "stdio bots").

The bridge starts the program, connects to the arena, writes every server message to the
program's stdin as one JSON line (a ``medina.v1.PlayResponse``) and sends each line the
program writes to its stdout (a ``medina.v1.Action``) as the reply to the oldest
``request`` or ``rejected`` line not yet answered. Answers are paired with those lines in
order, so a program must write exactly one line for each of them. The program's stderr
goes to a log file. Move timeouts are the server's: the bridge never answers for the
program.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import re
import sys
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import grpc
from medina.v1 import arena_pb2, common_pb2, ladder_pb2, match_pb2
from medina.wire.shared.bridge_log import KEPT_PREFIX_ENV, failure_text, program_lines
from medina.wire.shared.client import program_notice, program_welcome

from . import messages
from .connection import Connection, add_tls_options, credentials_from_files
from .errors import AddressError, ConnectionLost, MedinaClientError, SessionOver
from .ladder import LadderOptions, run_ladder
from .route import Route, check_address
from .runner import reconnecting
from .stdio_lines import LineError, NotJsonError, decode_answer, encode_line, excerpt
from .stdio_process import (
    BotProcess,
    BotStartError,
    LogFile,
    child_environment,
    describe_status,
    not_started,
)

log = logging.getLogger("medina_client.stdio")

#: Exit statuses of ``main``.
EXIT_ENDED, EXIT_ARENA, EXIT_USAGE, EXIT_BOT = 0, 1, 2, 3

#: Interpreters whose script (the next argument that is not an option) names the bot.
_INTERPRETERS = frozenset(
    {"node", "nodejs", "deno", "bun", "python", "pypy", "ruby", "perl", "php", "java", "lua"}
    | {"sh", "bash", "dash", "ksh", "zsh", "fish", "julia", "Rscript", "dotnet", "mono"}
    | {"racket", "guile", "sbcl", "tclsh", "wish", "jimsh", "expect", "awk", "gawk", "mawk"}
    | {"raku", "luajit", "elixir", "escript", "ocaml", "swipl", "gforth", "runghc", "pwsh"}
)


#: What the bridge says when the program owes an answer past its time and no line from it
#: ever reached the bridge: by far the most common cause is an answer sitting in the
#: program's output buffer.
UNFLUSHED_HINT = (
    "no answer line reached the bridge. The usual cause is output buffering: when stdout is "
    "a pipe, most languages hold printed lines until a buffer fills. Flush after every "
    "line (Python: print(..., flush=True) or python -u; C: fflush(stdout) or "
    "setvbuf(stdout, NULL, _IOLBF, 0); Node: process.stdout.write is unbuffered), and read "
    "stdin line by line, not to its end. Debian's awk is mawk, which also reads its input in "
    "blocks: run it as mawk -W interactive (fflush() alone is not enough for mawk; other awks "
    "need fflush() after each line)"
)

#: The fix for a line on the program's stdout that is no answer (a debug print, most often).
STDOUT_IS_FOR_ANSWERS = "write one line per request or rejected line, and anything else to stderr"

#: ... when earlier lines from the program did reach the bridge: its output flows.
LATE_HINT = (
    "its earlier lines reached the bridge, so its output is not stuck in a buffer: it "
    "answered too late (it needs more time than the clock allows)"
)


def unended_hint(count: int) -> str:
    """What the bridge says when the program owes an answer and has written ``count`` bytes
    after its last newline."""
    return (
        f"the bot wrote {count} byte(s) to its stdout without ending the line: end every "
        'answer line with "\\n" (the bridge reads whole lines only), and flush after it'
    )


class BotFailed(MedinaClientError):
    """The bot program failed: it exited or closed its stdout before the match ended."""


@dataclass(frozen=True)
class BridgeConfig:
    """How to run one bot program for one seat.

    ``exit_wait_s`` is how long the program has to exit once its stdin is closed (at the
    end of the match, or when the bridge gives up) before it is terminated. The
    reconnect settings mean what they mean for ``medina_client.play``.
    """

    server: str
    token: str
    command: tuple[str, ...]
    log_path: Path
    name: str
    version: str = "0"
    omit_legal_actions: bool = False
    credentials: grpc.ChannelCredentials | None = None
    exit_wait_s: float = 2.0
    reconnect_for_s: float = 10.0
    first_backoff_s: float = 0.05
    max_backoff_s: float = 1.0
    #: Opt-in protocol features the program asked for (its new line kinds); none by default,
    #: so a program written for protocol 1.0 never gets a line kind it does not know.
    features: tuple[str, ...] = ()
    #: Ask for Update messages (``update`` lines). Off by default: every ``request`` line
    #: carries the events since the previous one, and the server's path is cheaper without.
    updates: bool = False
    #: Start the program in a session of its own, so a Ctrl-C at the terminal reaches only
    #: the bridge: on a ladder the first one lets the match in play finish.
    own_session: bool = False

    def __post_init__(self) -> None:
        if not self.command:
            raise ValueError("command: no bot command given")
        for field in ("exit_wait_s", "reconnect_for_s", "first_backoff_s", "max_backoff_s"):
            value = getattr(self, field)
            if not value > 0:
                raise ValueError(f"{field} must be positive, not {value!r}")


@dataclass(frozen=True)
class BridgeOutcome:
    """How a bridged match ended: the result, our seat, and whether the program exited by
    itself once its stdin was closed (False: it was terminated)."""

    result: match_pb2.MatchResult
    seat: int
    bot_exited: bool


async def run_bridge(config: BridgeConfig) -> BridgeOutcome:
    """Start the bot program, play its seat to the end of the match, stop the program.

    Raises BotStartError or BotFailed when the program cannot start or fails before the
    end (the stream is closed at once: the server's policies take the seat), and the
    errors of ``medina_client.play`` (HandshakeError, ConnectionLost, ProtocolError).
    """
    return await StdioBridge(config).run()


class StdioBridge:
    """One program playing one seat, kept across reconnects. Use ``run`` once."""

    def __init__(self, config: BridgeConfig) -> None:
        self.config = config
        #: Ids of the request and rejected lines the program still owes an answer, oldest first.
        self.pending: deque[int] = deque()
        self.resume_token = ""
        self.seat = -1
        self.welcomed = False  # a Welcome arrived since the reconnect loop last looked
        self.ended = False
        self.conn: Connection | None = None
        self.bot: BotProcess | None = None
        self._overdue: set[int] = set()  # pending ids the server already moved past
        self.lines_read = 0  # lines from the program's stdout so far, blank ones included
        self._log_start = 0  # where this run's part of the log file starts

    async def run(self) -> BridgeOutcome:
        """Play the match (see ``run_bridge``)."""
        with LogFile(self.config.log_path):
            with contextlib.suppress(OSError):
                self._log_start = self.config.log_path.stat().st_size
            # Said before it starts: once it runs, its stderr goes to the same file, and a line
            # written then could land in the middle of one of its own.
            log.info("starting the bot: %s", " ".join(self.config.command))
            bot = await BotProcess.start(
                self.config.command,
                self.config.log_path,
                child_environment(os.environ),
                own_session=self.config.own_session,
            )
            self.bot = bot
            reader = asyncio.create_task(self._read_bot(bot))
            try:
                result = await self._serve(bot, reader)
                exited = await bot.stop(self.config.exit_wait_s)
            except BaseException:
                await bot.stop(self.config.exit_wait_s)
                raise
            finally:
                reader.cancel()
                await asyncio.gather(reader, return_exceptions=True)
            if exited:
                log.info(
                    "the bot exited with %s (pid %d)", describe_status(bot.returncode), bot.pid
                )
            else:  # main says so on stderr; the log file keeps it too
                log.info(
                    "the bot did not exit within %g s of its stdin closing at the end of the "
                    "match; terminated it",
                    self.config.exit_wait_s,
                )
            return BridgeOutcome(result, self.seat, exited)

    async def _serve(self, bot: BotProcess, reader: asyncio.Task[None]) -> match_pb2.MatchResult:
        """Play until MatchEnded; a failing program ends the play (and its stream) at once."""
        session = asyncio.create_task(self._play(bot))
        try:
            await asyncio.wait({session, reader}, return_when=asyncio.FIRST_COMPLETED)
            if not session.done():
                reader.result()  # the program's output ended: raises BotFailed
            return await session
        finally:
            session.cancel()  # closes the stream if the session is still running
            await asyncio.gather(session, return_exceptions=True)

    # -- the server side -------------------------------------------------------------------

    async def _play(self, bot: BotProcess) -> match_pb2.MatchResult:
        """Streams until MatchEnded, reconnecting with backoff like ``medina_client.play``."""
        cfg = self.config
        route = Route(cfg.server)
        return await reconnecting(
            self,
            lambda: self._stream(bot, route),
            reconnect_for_s=cfg.reconnect_for_s,
            first_backoff_s=cfg.first_backoff_s,
            max_backoff_s=cfg.max_backoff_s,
            route=route,
        )

    async def _stream(self, bot: BotProcess, route: Route) -> match_pb2.MatchResult:
        """One stream: handshake, then forward its messages until MatchEnded or a break."""
        cfg = self.config
        hello = messages.hello(
            cfg.token,
            cfg.name,
            cfg.version,
            self.resume_token,
            cfg.omit_legal_actions,
            not cfg.updates,
            # Redirects are the bridge's business (the program never sees one).
            features=messages.features(redirects=route.redirects, asked=cfg.features),
        )
        async with Connection(route.current, cfg.credentials) as conn:
            welcome = await conn.handshake(hello)
            route.arrived()
            self.welcomed = True
            self.resume_token = welcome.resume_token or self.resume_token
            self.seat = welcome.seat
            log.info("playing seat %d of match %s", welcome.seat, welcome.match_id)
            self.conn = conn
            try:
                bot.send(encode_line(program_welcome(welcome)))
                async for message in conn.messages():
                    if self._forward(bot, message):
                        return message.ended.result
            finally:
                self.conn = None
        raise ConnectionLost("the server closed the stream before the match ended")

    def _forward(self, bot: BotProcess, message: arena_pb2.PlayResponse) -> bool:
        """Write one server message to the program; True at MatchEnded."""
        kind = message.WhichOneof("message")
        if kind is None:
            log.warning("ignoring a server message of a kind this bridge does not know")
            return False
        if kind == "request":
            request = message.request
            self._note_overdue(bot, request.request_id, request.clock.strikes)
            self.pending.append(request.request_id)
        elif kind == "rejected":
            rejected = message.rejected
            log.info(
                "request %d: the server refused the bot's action (%s): %s",
                rejected.request_id,
                rejected.rule or common_pb2.ErrorCode.Name(rejected.code),
                rejected.message,
            )
            self.pending.append(rejected.request_id)
        elif kind == "ended":
            self.ended = True
            result = message.ended.result
            if self.pending and result.ending == match_pb2.MATCH_ENDING_ABORTED:
                # Ended by the server (the organiser, a shutdown): an answer still owed then
                # is no sign of buffering or slowness, and blaming them misled bot authors.
                mine = [s for s in result.seats if s.seat == self.seat]
                why = mine[0].detail if mine and mine[0].detail else "by the server"
                log.info(
                    "the match was aborted (%s) while the bot was answering %d request(s) "
                    "(%s): not the bot's doing",
                    why,
                    len(self.pending),
                    ", ".join(str(rid) for rid in self.pending),
                )
            elif self.pending:
                log.warning(
                    "the match ended while the bot still owed %d answer(s) (requests %s); %s",
                    len(self.pending),
                    ", ".join(str(rid) for rid in self.pending),
                    self._late_hint(bot),
                )
            self.pending.clear()
            self._log_result(message.ended.result)
        bot.send(encode_line(message))
        return kind == "ended"

    def _note_overdue(self, bot: BotProcess, request_id: int, strikes: int) -> None:
        """A new request means the server settled every earlier one; say which the program
        never answered (the server's timeout policy decided them)."""
        for rid in self.pending:
            if rid != request_id and rid not in self._overdue:
                self._overdue.add(rid)
                log.warning(
                    "request %d: the bot did not answer before the server moved on (its "
                    "timeout policy decided for the seat; strikes now %d); %s",
                    rid,
                    strikes,
                    self._late_hint(bot),
                )

    def _late_hint(self, bot: BotProcess) -> str:
        """Why an answer is late, as far as the bridge can tell: an unended line, output
        stuck in a buffer (no line ever came), or a slow program."""
        if bot.partial:
            return unended_hint(bot.partial)
        return LATE_HINT if self.lines_read else UNFLUSHED_HINT

    def _log_result(self, result: match_pb2.MatchResult) -> None:
        for seat in result.seats:
            if seat.seat == self.seat:
                how = match_pb2.Termination.Name(seat.termination).removeprefix("TERMINATION_")
                log.info(
                    "match over: seat %d scored %d, rank %d, %s%s",
                    seat.seat,
                    seat.total,
                    seat.rank,
                    how,
                    f" ({seat.detail})" if seat.detail else "",
                )

    # -- the program side --------------------------------------------------------------------

    async def _read_bot(self, bot: BotProcess) -> None:
        """Pair the program's lines with the lines awaiting an answer and send the replies.

        Returns when the program's output ends after the match did; raises BotFailed when
        it ends before.
        """
        number = 0
        while True:
            try:
                line = await bot.readline()
            except ValueError:
                number += 1
                self.lines_read = number
                self._answer(number, None)
                continue
            if not line:
                if self.ended:
                    return
                raise await self._output_ended(bot)
            number += 1
            self.lines_read = number
            if line.strip():  # blank lines are tolerated and answer nothing
                self._answer(number, line)

    def _answer(self, number: int, line: bytes | None) -> None:
        """Line ``number`` from the program (None: too long to read) answers the oldest line
        awaiting an answer."""
        if self.ended:
            log.debug("line %d from the bot came after the end of the match; ignored", number)
            return
        text = "" if line is None else line.decode("utf-8", "replace").strip()
        if not self.pending:
            log.warning(
                "line %d from the bot answers nothing (%s); ignored: %s",
                number,
                STDOUT_IS_FOR_ANSWERS,
                excerpt(text),
            )
            return
        try:
            if line is None:
                raise LineError("longer than the bridge reads (1 MiB)")
            answer = decode_answer(line)
        except LineError as exc:
            fix = STDOUT_IS_FOR_ANSWERS if isinstance(exc, NotJsonError) else ""
            self._unreadable(number, self.pending.popleft(), str(exc), fix)
            return
        if answer.ignored:
            log.warning(
                "line %d from the bot: ignored the field(s) this bridge does not know: %s",
                number,
                ", ".join(answer.ignored),
            )
        rid = self._pair(number, answer.request_id)
        action = answer.action
        conn = self.conn
        if conn is None:
            log.info(
                "no stream to the server: the answer to request %d is dropped (the server "
                "sends the open request again after the reconnect)",
                rid,
            )
            return
        conn.send(messages.reply(rid, action))

    def _pair(self, number: int, named: int | None) -> int:
        """The request line ``number`` answers: the one it names (the lines owed before it
        were skipped: the server's timeout policy decides those), else the oldest owed."""
        if named is None:
            return self.pending.popleft()
        if named not in self.pending:
            log.warning(
                "line %d from the bot names request %d, which is not awaiting an answer (owed: "
                "%s); sent as it is, the server judges it",
                number,
                named,
                ", ".join(str(r) for r in self.pending),
            )
            return named
        skipped = []
        while (rid := self.pending.popleft()) != named:
            skipped.append(rid)
        if skipped:
            log.warning(
                "line %d from the bot answers request %d; the line(s) owed before it (requests "
                "%s) are skipped",
                number,
                named,
                ", ".join(str(r) for r in skipped),
            )
        return named

    def _unreadable(self, number: int, rid: int, reason: str, fix: str = "") -> None:
        """Say so (and ``fix``, what to do about it) on the log and to the program; the
        request stays open for the server."""
        text = (
            f"line {number} from the bot is {reason}; nothing was sent for request {rid}: "
            "it stays open until the server's timeout policy decides it"
            + (f"; {fix}" if fix else "")
        )
        log.warning("%s", text)
        if self.bot is not None:
            self.bot.send(encode_line(program_notice(rid, f"stdio bridge: {text}")))

    async def _output_ended(self, bot: BotProcess) -> BotFailed:
        """The program's stdout ended before the match: say whether it exited, what it last
        wrote to its stderr and where that is kept."""
        status = await bot.wait_exit(self.config.exit_wait_s)
        if status is None:
            problem = "closed its stdout before the match ended (it is still running; stopping it)"
        else:
            problem = f"exited with {describe_status(status)} before the match ended"
            if status in (126, 127) and not self.lines_read:
                problem += f" ({not_started(status, self.config.command)})"
        # INFO: the log file keeps it; the error itself reaches stderr through main
        log.info("the bot %s; closing the stream (the server's policies take the seat)", problem)
        where = kept_log_path(self.config.log_path)
        return BotFailed(failure_text(problem, self._program_tail(), where))

    def _program_tail(self) -> str:
        """The last line the program wrote to its stderr in this run ('' when none)."""
        try:
            with self.config.log_path.open("rb") as f:
                f.seek(self._log_start)
                text = f.read().decode("utf-8", "replace")
        except OSError:
            return ""
        said = [line.strip() for line in program_lines(text) if line.strip()]
        tail = said[-1] if said else ""
        return tail if len(tail) <= 300 else tail[:297] + "..."


# -- command line ---------------------------------------------------------------------------

_EPILOG = """\
The bot program gets one JSON line per server message on its stdin (a medina.v1.PlayResponse
in the protobuf JSON mapping) and writes one line to its stdout for each "request" and
"rejected" line: the JSON mapping of a medina.v1.Action, e.g.
{"kind":"ACTION_KIND_WALL","square":17}. See docs/protocol.md, section "stdio bots".

The bot's stderr, and the bridge's own messages, go to the log file: --log FILE, or else
bot-<name>-<pid>.log (pid: the bridge's) in --log-dir, by default $MEDINA_LOG_DIR (set by
medina-arena match, check-bot and tournaments to a directory of the seat's own, whose files
are then moved beside the seat's log as MATCH.seatN.bot-<name>-<pid>.log) or the current
directory.
The bot gets neither MEDINA_TOKEN nor MEDINA_BOT_KEY in its environment, and on Linux it is
killed if the bridge dies.

exit status: 0 the match ended and the bot exited (or had ended before: MATCH_OVER); 1 the
server refused the seat (its reason is printed) or could not be reached, or a file could not
be read or written; 2 bad usage; 3 the bot failed: it
could not start, exited or closed its stdout before the match ended (the stream is closed
at once), or did not exit within --exit-wait seconds after the end (it is terminated).
With medina-arena match (and check-bot, tournaments), give the bridge as the bot's command:
the arena passes --server and the seat token (in MEDINA_TOKEN, out of ps's sight) itself:
  --bot "python -m medina_client stdio -- node bot.js"
"""


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m medina_client stdio",
        usage="%(prog)s [OPTIONS] -- COMMAND [ARGS...]",
        description="Play one seat with a program that reads one JSON line per server message "
        "on stdin and writes one action per line on stdout.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--server", default=os.environ.get("MEDINA_SERVER"), help="HOST:PORT")
    p.add_argument("--token", default=os.environ.get("MEDINA_TOKEN"), help="seat token")
    p.add_argument(
        "--bot-key",
        default=os.environ.get("MEDINA_BOT_KEY"),
        help="instead of --token: play on the ladder at --server with this bot key, the "
        "program started afresh for each match, until Ctrl-C (env MEDINA_BOT_KEY)",
    )
    p.add_argument(
        "--rulesets", help="ladder: comma-separated rulesets the program plays (default: all)"
    )
    p.add_argument(
        "--players", help="ladder: comma-separated player counts the program plays (default: all)"
    )
    p.add_argument("--max-matches", type=int, help="ladder: matches at once (default 1)")
    p.add_argument(
        "--name", help="bot name shown in results (default: the program's or script's name)"
    )
    p.add_argument(
        "--bot-version",
        default="",
        help="bot version sent in the handshake; on a ladder, the version to rate (a new one "
        "starts a new rating line; default: none, as the SDK's and the Node bot's)",
    )
    p.add_argument("--no-legal-actions", action="store_true", help="ask the server to omit them")
    p.add_argument(
        "--updates",
        action="store_true",
        help="also send the program 'update' lines (other seats' moves as they happen); "
        "without, each 'request' line carries the events since the previous one",
    )
    p.add_argument(
        "--feature",
        action="append",
        default=[],
        metavar="NAME",
        help="ask for an opt-in protocol feature, e.g. forfeit-notices (its lines then reach "
        "the program); repeatable",
    )
    add_tls_options(p)
    logs = p.add_mutually_exclusive_group()
    logs.add_argument("--log", type=Path, help="file for the bot's stderr (appended to)")
    logs.add_argument(
        "--log-dir",
        type=Path,
        help="directory for bot-<name>-<pid>.log (default: $MEDINA_LOG_DIR, else .)",
    )
    p.add_argument(
        "--exit-wait",
        type=float,
        default=2.0,
        metavar="SECONDS",
        help="time the bot has to exit once its stdin is closed (default: 2)",
    )
    p.add_argument("--quiet", action="store_true", help="no result line")
    return p


def kept_log_path(path: Path) -> str:
    """Where the log file ``path`` is to be found once the match is over: when the arena
    started the bridge and the file is in its ``MEDINA_LOG_DIR``, the name the arena keeps it
    under (beside the seat's log, outside any sandbox); else ``path``."""
    prefix = os.environ.get(KEPT_PREFIX_ENV)
    log_dir = os.environ.get("MEDINA_LOG_DIR")
    if prefix and log_dir and path.parent.resolve() == Path(log_dir).resolve():
        return prefix + (path.name if path.name.endswith(".log") else f"{path.name}.log")
    return str(path)


def default_name(command: Sequence[str]) -> str:
    """The program's name, or for an interpreter (node, python, ...) its script's or
    module's: ``node bots/random_bot.js`` -> ``random_bot``."""
    program = Path(command[0]).name
    if re.sub(r"[\d.]+$", "", program) in _INTERPRETERS:
        for arg in command[1:]:
            if not arg.startswith("-"):
                return Path(arg).stem or program
    return Path(program).stem or program


def log_file_name(name: str, pid: int) -> str:
    """``bot-<name>-<pid>.log`` with the name made safe for a file name."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "bot"
    return f"bot-{safe}-{pid}.log"


def glue_values(argv: Sequence[str], options: frozenset[str]) -> list[str]:
    """``--token X`` as ``--token=X`` for the given options, so that a value starting with
    "-" (a random seat token may) is not taken for an option by argparse."""
    out: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg in options and i + 1 < len(argv) and argv[i + 1] != "--":
            out.append(f"{arg}={argv[i + 1]}")
            i += 2
        else:
            out.append(arg)
            i += 1
    return out


#: Options whose values may start with "-".
FREE_VALUES = frozenset({"--server", "--token", "--bot-key", "--name", "--bot-version"})


def main(argv: Sequence[str] | None = None) -> int:
    """Run one bot program for one seat; see ``_EPILOG`` for the exit statuses."""
    argv = list(sys.argv[1:] if argv is None else argv)
    split = argv.index("--") if "--" in argv else len(argv)
    argv = [*glue_values(argv[:split], FREE_VALUES), *argv[split:]]  # the command as given
    parser = _parser()
    if "--" not in argv:
        _, extra = parser.parse_known_args(argv)  # options are checked (and --help shown) first
        got = f" (not {' '.join(extra)!r})" if extra else ""
        parser.error(f"put the bot command after --, e.g. -- node random_bot.js{got}")
    split = argv.index("--")
    args = parser.parse_args(argv[:split])
    command = argv[split + 1 :]
    if not command:
        parser.error("no bot command after --")
    if args.bot_key and args.token:
        parser.error("--token plays one seat, --bot-key plays on a ladder: give one")
    if not args.server or not (args.token or args.bot_key):
        parser.error(
            "--server and --token (or --bot-key) are required "
            "(or MEDINA_SERVER / MEDINA_TOKEN / MEDINA_BOT_KEY)"
        )
    try:
        check_address(args.server)
    except AddressError as exc:
        parser.error(str(exc))
    if args.max_matches is not None and args.max_matches < 1:
        parser.error("--max-matches must be at least 1")
    if not args.exit_wait > 0:
        parser.error(f"--exit-wait must be positive, not {args.exit_wait}")
    name = args.name or default_name(command)
    stderr = logging.StreamHandler(sys.stderr)
    stderr.setLevel(logging.WARNING)
    stderr.setFormatter(logging.Formatter("medina_client stdio: %(message)s"))
    sdk = logging.getLogger("medina_client")
    sdk.addHandler(stderr)
    try:
        if args.log is not None:
            log_path = args.log
        else:
            log_dir = args.log_dir or Path(os.environ.get("MEDINA_LOG_DIR") or ".")
            log_dir.mkdir(parents=True, exist_ok=True)
            log_path = log_dir / log_file_name(name, os.getpid())
        config = BridgeConfig(
            server=args.server,
            token=args.token or "",
            command=tuple(command),
            log_path=log_path,
            name=name,
            version=args.bot_version,
            omit_legal_actions=args.no_legal_actions,
            features=tuple(args.feature),
            updates=args.updates,
            credentials=credentials_from_files(args.tls_ca, args.tls_cert, args.tls_key),
            exit_wait_s=args.exit_wait,
        )
        if args.bot_key:
            return _ladder(args, config)
        outcome = asyncio.run(run_bridge(config))
    except KeyboardInterrupt:  # the program got the signal too; it has been stopped
        return 130
    except (BotStartError, BotFailed) as exc:
        print(f"medina_client stdio: {exc}", file=sys.stderr)
        return EXIT_BOT
    except SessionOver as exc:  # nothing left to play on this seat: said, with the reason
        print(f"medina_client stdio: {exc}", file=sys.stderr)
        return EXIT_ENDED if exc.reason == "MATCH_OVER" else EXIT_ARENA
    except (MedinaClientError, OSError, ValueError) as exc:
        print(f"medina_client stdio: {exc}", file=sys.stderr)
        return EXIT_ARENA
    finally:
        sdk.removeHandler(stderr)
    if not args.quiet:
        mine = [s for s in outcome.result.seats if s.seat == outcome.seat]
        line = ", ".join(f"seat {s.seat} {s.name}: {s.total} (rank {s.rank})" for s in mine)
        print(f"match over: {line}")
    if not outcome.bot_exited:
        print(
            f"medina_client stdio: the bot did not exit within {args.exit_wait:g} s after the "
            f"match ended; terminated it (its stderr is in {kept_log_path(config.log_path)})",
            file=sys.stderr,
        )
        return EXIT_BOT
    return EXIT_ENDED


def _ladder(args: argparse.Namespace, config: BridgeConfig) -> int:
    """Play on a ladder: the program is started afresh for each match it is given."""
    try:
        players = tuple(int(x) for x in args.players.split(",")) if args.players else ()
    except ValueError:
        print(f"medina_client stdio: --players {args.players!r}: integers", file=sys.stderr)
        return 2
    options = LadderOptions(
        version=args.bot_version,
        rulesets=tuple(r for r in (args.rulesets or "").split(",") if r),
        players=players,
        max_matches=args.max_matches,
        client="medina_client stdio",
    )

    async def play_match(assigned: ladder_pb2.MatchAssigned) -> None:
        try:
            await run_bridge(
                replace(config, server=assigned.address, token=assigned.token, own_session=True)
            )
        except (BotStartError, BotFailed, SessionOver, MedinaClientError, OSError) as exc:
            # Charged by the referee (a crash, a forfeit); the next match starts afresh.
            print(f"medina_client stdio: match {assigned.match_id}: {exc}", file=sys.stderr)

    return run_ladder(
        play_match,
        args.server,
        args.bot_key,
        options,
        credentials=config.credentials,
        quiet=args.quiet,
        prog="medina_client stdio",
    )
