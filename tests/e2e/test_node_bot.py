"""The Node.js bot (clients/node) end to end over real gRPC on 127.0.0.1: full matches
against the Python SDK's bots, refusals and retries, reconnects after a dropped stream,
handshake refusals and the ErrorInfo reason that decides retry or exit (protocol 1.1),
forfeit notices, redirects (a `serve --workers 2` front, the fallback, the limit), Update
messages asked for only when the strategy uses them, seeded play, mutual TLS, and how it
leaves after MatchEnded (half-closed, waiting for the status)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import bounded
import grpc
import pytest
from medina.engine import Action, new_game, observe
from medina.records.reader import Record, read_record
from medina.records.verify import verify_record
from medina.referee.config import MatchSettings
from medina.referee.outcome import MatchOutcome, Termination
from medina.rpc.common.config import ServerConfig
from medina.rpc.common.status import Reason, trailers
from medina.rpc.single.host import HostedMatch
from medina.rpc.single.server import RunningServer, start_server
from medina.v1 import (
    admin_pb2,
    admin_pb2_grpc,
    arena_pb2,
    arena_pb2_grpc,
    common_pb2,
    game_pb2,
    match_pb2,
    record_pb2,
)
from medina.wire.convert import observation_to_proto
from medina_client import Turn, play
from medina_client.bots import GreedyBot, RandomBot
from medina_client.connection import channel_credentials

from .lobby_standin import DROPPED, HINT, ScriptedLobby
from .lobby_standin import serving as serving_lobby
from .pki import make_pki
from .rawbot import RawBot
from .test_workers import AUTH, front_process
from .test_workers import config as workers_config

T = TypeVar("T")
NODE_DIR = Path(__file__).resolve().parents[2] / "clients" / "node"
BOT_JS = NODE_DIR / "bot.js"
#: Bounds every wait of one test; a match here takes well under a second.
TEST_TIMEOUT_S = 60
#: The same for a test that starts `serve --workers 2` (three Python processes).
FRONT_TIMEOUT_S = 150
#: Fixture setup (a first `npm ci`) counts against the first test's pytest timeout.
pytestmark = pytest.mark.timeout(300)


def _installed_matches_lock() -> bool:
    """True when node_modules holds exactly the versions package-lock.json pins."""
    hidden = NODE_DIR / "node_modules" / ".package-lock.json"  # written by npm on install
    if not hidden.is_file():
        return False
    wanted = json.loads((NODE_DIR / "package-lock.json").read_text())["packages"]
    have = json.loads(hidden.read_text()).get("packages", {})
    return all(
        have.get(name, {}).get("version") == entry.get("version")
        for name, entry in wanted.items()
        if name  # "" is the project itself
    )


@pytest.fixture(scope="session")
def node() -> str:
    """The node executable, with the bot's dependencies installed (`npm ci` when missing or
    stale). Fails, never skips: the Node bot is part of the project."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.fail("the Node bot tests need node and npm (Node.js 18.3 or later) on PATH")
    version = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30)
    major, minor = (int(n) for n in version.stdout.strip().lstrip("v").split(".")[:2])
    if (major, minor) < (18, 3):
        pytest.fail(f"the Node bot needs Node.js 18.3 or later, found {version.stdout.strip()}")
    if not _installed_matches_lock():
        done = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund"],
            cwd=NODE_DIR, capture_output=True, text=True, timeout=240,
        )  # fmt: skip
        if done.returncode != 0:
            pytest.fail(f"npm ci in {NODE_DIR} failed:\n{done.stdout}\n{done.stderr}")
    return node


def run(coro: Awaitable[T], timeout_s: float = TEST_TIMEOUT_S) -> T:
    return bounded.run(coro, timeout_s)


@dataclass
class Finished:
    """How a bot process ended."""

    code: int
    stdout: str
    stderr: str


class NodeBot:
    """One `node clients/node/bot.js` process."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        #: stderr read before the exit (``stderr_until``); ``finished`` puts it first.
        self.early_stderr = ""

    @classmethod
    async def start(cls, node: str, address: str, token: str, *args: str) -> NodeBot:
        proc = await asyncio.create_subprocess_exec(
            node, str(BOT_JS), "--server", address, "--token", token, *args,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        return cls(proc)

    async def finished(self) -> Finished:
        """Waits for the exit (bounded by the test's timeout)."""
        out, err = await self.proc.communicate()
        assert self.proc.returncode is not None
        return Finished(self.proc.returncode, out.decode(), self.early_stderr + err.decode())

    async def stderr_until(self, fragment: str) -> str:
        """Reads stderr up to the first line holding ``fragment`` and returns that line."""
        assert self.proc.stderr is not None
        while line := (await self.proc.stderr.readline()).decode():
            self.early_stderr += line
            if fragment in line:
                return line
        raise AssertionError(f"the bot's stderr ended without {fragment!r}:\n{self.early_stderr}")

    async def kill(self) -> None:
        """Stops the process if it is still running (cleanup after a failure)."""
        if self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()
            await self.proc.wait()


@contextlib.asynccontextmanager
async def serving(
    tmp: Path, tls: tuple[bytes, bytes, bytes] | None = None
) -> AsyncIterator[RunningServer]:
    """A server on 127.0.0.1 (port 0); ``tls`` = (certificate, key, client CA) for mutual TLS."""
    cert, key, client_ca = tls or (None, None, None)
    config = ServerConfig(
        host="127.0.0.1",
        port=0,
        records_dir=tmp,
        tls_cert=cert,
        tls_key=key,
        tls_client_ca=client_ca,
    )
    running = await start_server(config)
    try:
        yield running
    finally:
        await running.stop(1)


async def outcome_of(hosted: HostedMatch) -> MatchOutcome:
    assert hosted.task is not None
    return await hosted.task


def verified(path: Path) -> Record:
    record = read_record(path)
    report = verify_record(record)
    assert report.ok, report.summary()
    return record


def bot_decisions(record: Record, seat: int) -> list[record_pb2.RecordDecision]:
    return [d for _n, d in record.decisions if d.seat == seat]


def incidents(record: Record, seat: int, kind: int) -> list[record_pb2.RecordIncident]:
    return [
        e.incident
        for _n, e in record.entries
        if e.HasField("incident") and e.incident.seat == seat and e.incident.kind == kind
    ]


def assert_played_every_decision(record: Record, outcome: MatchOutcome, seat: int) -> None:
    """The seat played to the end and chose every one of its actions itself."""
    assert outcome.seats[seat].termination is Termination.NORMAL, outcome.seats[seat].detail
    assert outcome.seats[seat].strikes == 0
    mine = bot_decisions(record, seat)
    assert mine, f"seat {seat} made no decision"
    assert {d.source for d in mine} == {record_pb2.DECISION_SOURCE_BOT}
    assert not incidents(record, seat, record_pb2.INCIDENT_KIND_TIMEOUT)


def result_line(outcome: MatchOutcome, seat: int) -> str:
    s = outcome.seats[seat]
    return f"match over: seat {seat} {s.name}: {s.total} (rank {s.rank} of {len(outcome.seats)})"


def test_two_node_bots_and_two_python_bots_play_a_full_match(node: str, tmp_path: Path) -> None:
    async def main() -> None:
        async with serving(tmp_path) as running:
            hosted = running.arena.create(MatchSettings("medina-v2", 4, 11))
            address, tokens = running.address, hosted.tokens
            nodes = [
                await NodeBot.start(node, address, tokens[0], "--seed", "1", "--name", "node-a"),
                await NodeBot.start(node, address, tokens[2], "--seed", "2", "--name", "node-b"),
            ]
            try:
                python = [play(RandomBot(seat), address, tokens[seat]) for seat in (1, 3)]
                results = await asyncio.gather(*python)
                ended = [await bot.finished() for bot in nodes]
                outcome = await outcome_of(hosted)
            finally:
                for bot in nodes:
                    await bot.kill()
        assert outcome.complete and all(
            r.ending == match_pb2.MATCH_ENDING_COMPLETE for r in results
        )
        record = verified(hosted.record_path)
        for seat, name, done in ((0, "node-a", ended[0]), (2, "node-b", ended[1])):
            assert done.code == 0, done.stderr
            assert done.stdout.strip() == result_line(outcome, seat)
            assert record.header.seats[seat].bot_name == name
            assert record.header.seats[seat].bot_version == "1"
            assert_played_every_decision(record, outcome, seat)
            assert not any(d.rejections for d in bot_decisions(record, seat))
        assert all(s.termination is Termination.NORMAL for s in outcome.seats)

    run(main())


@pytest.mark.parametrize(
    ("ruleset", "players", "seed"),
    [("medina-v1-2p", 2, 4), ("medina-v1", 3, 5), ("medina-v2", 2, 6)],
)
def test_node_greedy_plays_only_legal_actions_against_python_greedy(
    node: str, tmp_path: Path, ruleset: str, players: int, seed: int
) -> None:
    """The default Node strategy (greedy) in a real match against the Python greedy bot:
    every decision its own, none refused, the record verifies."""

    async def main() -> tuple[MatchOutcome, Record, Finished]:
        async with serving(tmp_path) as running:
            hosted = running.arena.create(MatchSettings(ruleset, players, seed))
            bot = await NodeBot.start(node, running.address, hosted.tokens[0], "--seed", "3")
            try:
                others = [
                    play(GreedyBot(s), running.address, hosted.tokens[s]) for s in range(1, players)
                ]
                await asyncio.gather(*others)
                done = await bot.finished()
                outcome = await outcome_of(hosted)
            finally:
                await bot.kill()
        return outcome, verified(hosted.record_path), done

    outcome, record, done = run(main())
    assert done.code == 0, done.stderr
    assert record.header.seats[0].bot_name == "node-greedy"
    assert_played_every_decision(record, outcome, 0)
    assert not any(d.rejections for d in bot_decisions(record, 0))


def test_the_same_seed_plays_the_same_game(node: str, tmp_path: Path) -> None:
    """Match seed, opponent and bot seed fixed: the Node bot's actions repeat exactly; a
    different --seed changes them."""

    async def actions(seed: str, directory: Path) -> list[str]:
        async with serving(directory) as running:
            hosted = running.arena.create(MatchSettings("medina-v2", 2, 3))
            bot = await NodeBot.start(node, running.address, hosted.tokens[1], "--seed", seed)
            try:
                await play(RandomBot(5), running.address, hosted.tokens[0])
                done = await bot.finished()
                outcome = await outcome_of(hosted)
            finally:
                await bot.kill()
        assert done.code == 0, done.stderr
        record = verified(hosted.record_path)
        assert_played_every_decision(record, outcome, 1)
        return [str(d.action) for d in bot_decisions(record, 1)]

    async def main() -> None:
        first = await actions("7", tmp_path / "a")
        assert await actions("7", tmp_path / "b") == first
        assert await actions("8", tmp_path / "c") != first

    run(main())


CLUMSY_STRATEGY = """
'use strict';
// Answers the first ask of each of its first three requests with a wall in the middle of
// the city (F6 on the 2-player board, never a wall space), then plays the random strategy.
const random = require(%(strategy)s);
const asked = new Set();
exports.createStrategy = (options) => {
  const inner = random.createStrategy(options);
  return {
    name: 'node-clumsy',
    version: '2',
    choose(turn) {
      if (asked.has(turn.requestId)) {
        const refused = turn.excluded.map((a) => `${a.kind}@${a.square}`).join(',');
        if (refused !== 'ACTION_KIND_WALL@85') {
          throw new Error(`the retry of ${turn.requestId} lists refused actions ${refused}`);
        }
        return inner.choose(turn);
      }
      asked.add(turn.requestId);
      const wall = { kind: 'ACTION_KIND_WALL', square: 5 * 16 + 5 };
      return asked.size <= 3 ? wall : inner.choose(turn);
    },
  };
};
"""


def test_a_refused_action_is_followed_by_another_choice(node: str, tmp_path: Path) -> None:
    strategy = tmp_path / "clumsy.js"
    strategy.write_text(CLUMSY_STRATEGY % {"strategy": json.dumps(str(NODE_DIR / "strategy.js"))})

    async def main() -> None:
        async with serving(tmp_path) as running:
            hosted = running.arena.create(MatchSettings("medina-v2", 2, 6))
            bot = await NodeBot.start(
                node, running.address, hosted.tokens[0], "--strategy", str(strategy)
            )
            try:
                await play(RandomBot(2), running.address, hosted.tokens[1])
                done = await bot.finished()
                outcome = await outcome_of(hosted)
            finally:
                await bot.kill()
        assert done.code == 0, done.stderr
        assert done.stderr.count("refused (wall-space") == 3, done.stderr
        record = verified(hosted.record_path)
        assert record.header.seats[0].bot_name == "node-clumsy"
        assert_played_every_decision(record, outcome, 0)
        first = bot_decisions(record, 0)[:4]
        assert [len(d.rejections) for d in first] == [1, 1, 1, 0]
        for decision in first[:3]:
            refusal = decision.rejections[0]
            assert refusal.rule == "wall-space" and refusal.action.square == 85
            assert decision.action.kind != refusal.action.kind or decision.action.square != 85

    run(main())


class CuttingProxy:
    """A TCP relay to the server whose open connections a test can cut, as a network
    failure would: both sides see their socket reset."""

    def __init__(self, target: str) -> None:
        self.host, port = target.rsplit(":", 1)
        self.port = int(port)
        self.writers: list[asyncio.StreamWriter] = []
        self.server: asyncio.Server | None = None
        self.connections = 0

    async def start(self) -> str:
        self.server = await asyncio.start_server(self._relay, "127.0.0.1", 0)
        return f"127.0.0.1:{self.server.sockets[0].getsockname()[1]}"

    async def _relay(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        self.connections += 1
        server_r, server_w = await asyncio.open_connection(self.host, self.port)
        self.writers += [client_w, server_w]

        async def pipe(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
            with contextlib.suppress(ConnectionError):
                while data := await r.read(65536):
                    w.write(data)
                    await w.drain()
            w.close()

        await asyncio.gather(pipe(client_r, server_w), pipe(server_r, client_w))

    def cut(self) -> None:
        """Resets every open connection; new ones are still relayed."""
        for writer in self.writers:
            writer.transport.abort()
        self.writers.clear()

    async def close(self) -> None:
        self.cut()
        if self.server is not None:
            self.server.close()
            await self.server.wait_closed()


class CuttingBot(RandomBot):
    """A Python bot that cuts the proxy's connections at its n-th decision."""

    def __init__(self, seed: int, proxy: CuttingProxy, at_decision: int) -> None:
        super().__init__(seed)
        self.proxy = proxy
        self.at_decision = at_decision
        self.decisions = 0

    def choose(self, turn: Turn) -> Action:
        self.decisions += 1
        if self.decisions == self.at_decision:
            self.proxy.cut()
        return super().choose(turn)


def test_the_node_bot_reconnects_after_its_stream_drops(node: str, tmp_path: Path) -> None:
    async def main() -> None:
        async with serving(tmp_path) as running:
            hosted = running.arena.create(MatchSettings("medina-v2", 2, 8))
            proxy = CuttingProxy(running.address)
            via_proxy = await proxy.start()
            bot = await NodeBot.start(node, via_proxy, hosted.tokens[0])
            try:
                cutter = CuttingBot(4, proxy, at_decision=3)
                await play(cutter, running.address, hosted.tokens[1])
                done = await bot.finished()
                outcome = await outcome_of(hosted)
            finally:
                await bot.kill()
                await proxy.close()
        assert done.code == 0, done.stderr
        assert "reconnecting in" in done.stderr
        assert proxy.connections >= 2
        assert done.stdout.strip() == result_line(outcome, 0)
        record = verified(hosted.record_path)
        assert_played_every_decision(record, outcome, 0)
        assert incidents(record, 0, record_pb2.INCIDENT_KIND_DISCONNECTED)
        assert incidents(record, 0, record_pb2.INCIDENT_KIND_RECONNECTED)

    run(main())


def test_an_unknown_token_exits_1_naming_seat_token_unknown(node: str, tmp_path: Path) -> None:
    async def main() -> None:
        async with serving(tmp_path) as running:
            hosted = running.arena.create(MatchSettings("medina-v2", 2, 1))
            bot = await NodeBot.start(node, running.address, "not-a-seat-token")
            try:
                done = await bot.finished()
            finally:
                await bot.kill()
                hosted.match.abort("test over")
        assert done.code == 1, done.stderr
        refused = "handshake refused (UNAUTHENTICATED, SEAT_TOKEN_UNKNOWN): unknown seat token"
        assert refused in done.stderr
        assert "reconnecting" not in done.stderr  # a refusal is not retried
        assert done.stdout == ""

    run(main())


#: A refusal for a FINAL reason is not retried: the bot exits within this (node's start included).
PROMPT_EXIT_S = 15


def test_the_token_of_a_match_that_is_over_exits_0_naming_match_over(
    node: str, tmp_path: Path
) -> None:
    """A bot started (or restarted) after its match ended: nothing is left to play, which is
    not the bot's failure; it says MATCH_OVER and exits 0 at once, without retrying."""

    async def main() -> tuple[Finished, float]:
        async with serving(tmp_path) as running:
            hosted = running.arena.create(MatchSettings("medina-v1-2p", 2, 3))
            address, tokens = running.address, hosted.tokens
            await asyncio.gather(*(play(RandomBot(s), address, tokens[s]) for s in (0, 1)))
            assert (await outcome_of(hosted)).complete
            started = time.monotonic()
            bot = await NodeBot.start(node, address, tokens[0])
            try:
                done = await bot.finished()
            finally:
                await bot.kill()
            return done, time.monotonic() - started

    done, took = run(main())
    assert done.code == 0, done.stderr
    assert "handshake refused (FAILED_PRECONDITION, MATCH_OVER): the match is over" in done.stderr
    assert "reconnecting" not in done.stderr
    assert done.stdout == ""
    assert took < PROMPT_EXIT_S


async def until(condition: Callable[[], bool]) -> None:
    """Waits (polling, bounded by the test's timeout) until ``condition()`` holds."""
    while not condition():
        await asyncio.sleep(0.01)


def test_the_token_of_a_forfeited_seat_exits_1_naming_seat_forfeited(
    node: str, tmp_path: Path
) -> None:
    """Seat 2 forfeited (its program exited) while the match waits for the others: its token
    opens nothing more; the bot says SEAT_FORFEITED and exits 1 at once, without retrying."""

    async def main() -> tuple[Finished, float]:
        async with serving(tmp_path) as running:
            hosted = running.arena.create(MatchSettings("medina-v2", 3, 4))
            hosted.match.process_exited(2, "its program exited (test)")
            await until(lambda: hosted.match.is_forfeited(2))
            started = time.monotonic()
            bot = await NodeBot.start(node, running.address, hosted.tokens[2])
            try:
                done = await bot.finished()
            finally:
                await bot.kill()
                assert hosted.match.outcome is None  # the match was still waiting
                hosted.match.abort("test over")
            return done, time.monotonic() - started

    done, took = run(main())
    assert done.code == 1, done.stderr
    refused = "handshake refused (FAILED_PRECONDITION, SEAT_FORFEITED): seat 2 has forfeited"
    assert refused in done.stderr
    assert "reconnecting" not in done.stderr
    assert done.stdout == ""
    assert took < PROMPT_EXIT_S


def test_a_seat_held_by_another_stream_is_retried_until_free(node: str, tmp_path: Path) -> None:
    """SEAT_TAKEN is a reason to retry (the holder may be a stream of ours that broke
    unnoticed): the bot backs off and tries again, takes the seat once it is free, and plays."""

    async def main() -> tuple[Finished, MatchOutcome, Record]:
        async with serving(tmp_path) as running:
            hosted = running.arena.create(MatchSettings("medina-v2", 2, 5))
            address, tokens = running.address, hosted.tokens
            holder = RawBot(address, tokens[0], name="holder")
            holding = asyncio.create_task(holder.play())
            bot: NodeBot | None = None
            try:
                await holder.welcomed.wait()
                bot = await NodeBot.start(node, address, tokens[0], "--name", "node-retry")
                line = await bot.stderr_until("reconnecting in")
                assert "refused (ALREADY_EXISTS, SEAT_TAKEN)" in line, line
                holding.cancel()  # the holder goes away: the seat is free again
                with contextlib.suppress(asyncio.CancelledError):
                    await holding
                await play(RandomBot(6), address, tokens[1])
                done = await bot.finished()
                outcome = await outcome_of(hosted)
            finally:
                holding.cancel()
                if bot is not None:
                    await bot.kill()
        return done, outcome, verified(hosted.record_path)

    done, outcome, record = run(main())
    assert done.code == 0, done.stderr
    assert done.stdout.strip() == result_line(outcome, 0)
    assert record.header.seats[0].bot_name == "node-retry"
    assert_played_every_decision(record, outcome, 0)


def test_a_forfeit_notice_is_logged_and_play_goes_on(node: str, tmp_path: Path) -> None:
    """The bot asks for forfeit notices in Hello; when another seat forfeits it logs one line
    naming the seat and the termination, and plays on to the end."""

    async def main() -> tuple[Finished, MatchOutcome]:
        async with serving(tmp_path) as running:
            hosted = running.arena.create(MatchSettings("medina-v2", 3, 6))
            address, tokens = running.address, hosted.tokens
            bot = await NodeBot.start(node, address, tokens[0])
            try:
                await until(lambda: hosted.match.view().seats[0].connected)
                hosted.match.process_exited(2, "its program exited (test)")
                await play(RandomBot(7), address, tokens[1])
                done = await bot.finished()
                outcome = await outcome_of(hosted)
            finally:
                await bot.kill()
        return done, outcome

    done, outcome = run(main())
    assert done.code == 0, done.stderr
    assert outcome.complete and outcome.seats[2].termination is Termination.CRASHED
    notices = [line for line in done.stderr.splitlines() if "forfeited" in line]
    assert notices == [
        "medina-node-bot: seat 2 forfeited (TERMINATION_CRASHED): its program exited (test)"
    ], done.stderr
    assert "ignoring" not in done.stderr
    assert done.stdout.strip() == result_line(outcome, 0)


# -- a scripted server: what the bot sends, and how it takes statuses and unknown kinds -----

#: One scripted stream: messages to send (serialized PlayResponses), then an optional error
#: status (code, ErrorInfo reason or None for a 1.0 server's bare status, message).
Script = tuple[Sequence[bytes], tuple[grpc.StatusCode, Reason | None, str] | None]


def welcome_bytes() -> bytes:
    welcome = arena_pb2.Welcome(protocol_version=1, match_id="scripted", seat=0, resume_token="r")
    return arena_pb2.PlayResponse(welcome=welcome).SerializeToString()


def ended_bytes() -> bytes:
    seat = match_pb2.SeatResult(
        seat=0, name="scripted", total=7, rank=1, termination=match_pb2.TERMINATION_NORMAL
    )
    result = match_pb2.MatchResult(seats=[seat], ending=match_pb2.MATCH_ENDING_COMPLETE)
    return arena_pb2.PlayResponse(ended=arena_pb2.MatchEnded(result=result)).SerializeToString()


def unknown_kind_bytes() -> bytes:
    """A PlayResponse whose only field (number 99, a message) this schema does not have."""
    tag, payload = (99 << 3) | 2, b"\x08\x01"
    varint = bytes([0x80 | (tag & 0x7F), tag >> 7])
    return varint + bytes([len(payload)]) + payload


@contextlib.asynccontextmanager
async def scripted_server(
    scripts: list[Script], hellos: list[arena_pb2.Hello]
) -> AsyncIterator[str]:
    """An ArenaService on 127.0.0.1 that plays one script per Play stream (in order) and
    keeps every Hello it receives; a stream beyond the scripts is refused (PERMISSION_DENIED)."""

    async def play_stream(
        requests: AsyncIterator[arena_pb2.PlayRequest],
        context: grpc.aio.ServicerContext[arena_pb2.PlayRequest, bytes],
    ) -> AsyncIterator[bytes]:
        hellos.append((await anext(requests)).hello)
        if not scripts:  # a stream the test did not expect: refused, so that the bot stops
            await context.abort(grpc.StatusCode.PERMISSION_DENIED, "no script left for a stream")
        messages, error = scripts.pop(0)
        for message in messages:
            yield message
        if error is not None:
            code, reason, text = error
            metadata = () if reason is None else trailers(code, text, reason, {})
            await context.abort(code, text, metadata)

    handler = grpc.method_handlers_generic_handler(
        "medina.v1.ArenaService",
        {
            "Play": grpc.stream_stream_rpc_method_handler(
                play_stream, request_deserializer=arena_pb2.PlayRequest.FromString
            )
        },
    )
    server = grpc.aio.server()
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        await server.stop(0)


def run_scripted(node: str, scripts: list[Script]) -> tuple[Finished, list[arena_pb2.Hello]]:
    hellos: list[arena_pb2.Hello] = []

    async def main() -> Finished:
        async with scripted_server(scripts, hellos) as address:
            bot = await NodeBot.start(node, address, "seat-token")
            try:
                return await bot.finished()
            finally:
                await bot.kill()

    return run(main()), hellos


def test_hello_speaks_1_1_retry_reasons_back_off_and_unknown_kinds_are_skipped(
    node: str,
) -> None:
    """Hello carries protocol_minor 1 and asks for forfeit notices and redirects; NO_WORKER
    and SERVER_FULL refusals are retried; a message of a kind the bot does not know is skipped
    with a warning."""
    busy = (grpc.StatusCode.UNAVAILABLE, Reason.NO_WORKER, "no worker is running")
    full = (grpc.StatusCode.RESOURCE_EXHAUSTED, Reason.SERVER_FULL, "the server is full")
    messages = [welcome_bytes(), unknown_kind_bytes(), ended_bytes()]
    done, hellos = run_scripted(node, [([], busy), ([], full), (messages, None)])
    assert done.code == 0, done.stderr
    assert "refused (UNAVAILABLE, NO_WORKER): no worker is running; reconnecting" in done.stderr
    assert "refused (RESOURCE_EXHAUSTED, SERVER_FULL)" in done.stderr
    assert "ignoring a server message of a kind this bot does not know" in done.stderr
    assert done.stdout.strip() == "match over: seat 0 scripted: 7 (rank 1 of 1)"
    assert len(hellos) == 3
    for hello in hellos:
        assert hello.protocol_version == 1 and hello.protocol_minor == 1
        assert list(hello.features) == ["forfeit-notices", "redirect"]
        assert hello.token == "seat-token"
    assert [h.resume_token for h in hellos] == ["", "", ""]


@pytest.mark.parametrize(
    ("scripts", "code", "said"),
    [
        pytest.param(
            [([welcome_bytes()], (grpc.StatusCode.UNAVAILABLE, Reason.WORKER_LOST, "it died"))],
            1,
            "ended (WORKER_LOST): it died",
            id="final-after-welcome",
        ),
        pytest.param(
            [([welcome_bytes()], (grpc.StatusCode.ABORTED, Reason.SEAT_TAKEN_OVER, "newer"))],
            1,
            "ended (SEAT_TAKEN_OVER): newer",
            id="seat-taken-over",
        ),
        pytest.param(
            [([welcome_bytes()], (grpc.StatusCode.FAILED_PRECONDITION, Reason.MATCH_OVER, "over"))],
            0,
            "ended (MATCH_OVER): over",
            id="match-over-after-welcome",
        ),
        pytest.param(
            [([], (grpc.StatusCode.UNAVAILABLE, Reason.SHUTTING_DOWN, "bye"))],
            1,
            "handshake refused (UNAVAILABLE, SHUTTING_DOWN): bye",
            id="final-reason-over-a-retryable-code",
        ),
        pytest.param(
            [([], (grpc.StatusCode.ALREADY_EXISTS, None, "seat 0 is held"))],
            1,
            "handshake refused (ALREADY_EXISTS): seat 0 is held",
            id="no-reason-judged-by-code",
        ),
    ],
)
def test_a_final_reason_or_a_refusing_code_is_not_retried(
    node: str, scripts: list[Script], code: int, said: str
) -> None:
    """A FINAL reason ends the bot before or after Welcome (0 for MATCH_OVER, else 1), even
    with a status code that would be retried without it; a status without ErrorInfo (a 1.0
    server) is judged by its code as before."""
    done, hellos = run_scripted(node, scripts)
    assert done.code == code, done.stderr
    assert said in done.stderr
    assert "reconnecting" not in done.stderr
    assert len(hellos) == 1


# -- redirects (protocol 1.1, feature "redirect") -------------------------------------------


def redirect_bytes(port: int, host: str = "") -> bytes:
    redirect = arena_pb2.Redirect(host=host, port=port)
    return arena_pb2.PlayResponse(redirect=redirect).SerializeToString()


def update_bytes() -> bytes:
    events = [
        game_pb2.Event(index=5, passed=game_pb2.Passed(seat=1)),
        game_pb2.Event(index=6, turn_started=game_pb2.TurnStarted(seat=0, pieces=2)),
    ]
    return arena_pb2.PlayResponse(update=game_pb2.Update(events=events)).SerializeToString()


def run_scripted_at(
    node: str, address: str, *args: str, token: str = "seat-token"
) -> Coroutine[None, None, Finished]:
    """The Node bot given ``address``, to its exit (killed if the test fails first)."""

    async def main() -> Finished:
        bot = await NodeBot.start(node, address, token, *args)
        try:
            return await bot.finished()
        finally:
            await bot.kill()

    return main()


MATCH_OVER_LINE = "match over: seat 0 scripted: 7 (rank 1 of 1)"
WITH_REDIRECTS = ["forfeit-notices", "redirect"]


def test_a_redirect_is_followed_and_a_break_reconnects_where_it_led(node: str) -> None:
    """The front's Redirect (empty host: the same host) is followed at once with the same
    Hello; after a break the bot reconnects to the redirected address with its resume token,
    not to the front."""
    front_hellos: list[arena_pb2.Hello] = []
    worker_hellos: list[arena_pb2.Hello] = []
    broke = (grpc.StatusCode.UNAVAILABLE, None, "connection reset")
    worker: list[Script] = [([welcome_bytes()], broke), ([welcome_bytes(), ended_bytes()], None)]

    async def main() -> tuple[Finished, int]:
        async with scripted_server(worker, worker_hellos) as there:
            port = int(there.rpartition(":")[2])
            front: list[Script] = [([redirect_bytes(port)], None)]
            async with scripted_server(front, front_hellos) as address:
                return await run_scripted_at(node, address), port

    done, port = run(main())
    assert done.code == 0, done.stderr
    assert done.stdout.strip() == MATCH_OVER_LINE
    assert f"redirected to the same host:{port}; connecting to 127.0.0.1:{port}" in done.stderr
    assert "reconnecting in" in done.stderr and "back to" not in done.stderr
    assert len(front_hellos) == 1 and len(worker_hellos) == 2
    hellos = [*front_hellos, *worker_hellos]
    assert [list(h.features) for h in hellos] == [WITH_REDIRECTS] * 3
    assert [h.token for h in hellos] == ["seat-token"] * 3
    assert [h.resume_token for h in hellos] == ["", "", "r"]


def test_a_redirect_that_leads_nowhere_falls_back_to_the_given_address(node: str) -> None:
    """A redirect to a port nobody listens on: the bot goes back to the address it was given,
    without asking for redirects, and plays there."""
    hellos: list[arena_pb2.Hello] = []
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))  # bound but never listening: connections are refused
        dead = unused.getsockname()[1]
        scripts: list[Script] = [
            ([redirect_bytes(dead)], None),
            ([welcome_bytes(), ended_bytes()], None),
        ]

        async def main() -> Finished:
            async with scripted_server(scripts, hellos) as address:
                return await run_scripted_at(node, address)

        done = run(main())
    assert done.code == 0, done.stderr
    assert done.stdout.strip() == MATCH_OVER_LINE
    assert f"connecting to 127.0.0.1:{dead}" in done.stderr
    assert "; back to 127.0.0.1:" in done.stderr
    assert [list(h.features) for h in hellos] == [WITH_REDIRECTS, ["forfeit-notices"]]
    assert scripts == []


def test_at_most_three_redirects_are_followed_in_a_row(node: str) -> None:
    """A server that keeps redirecting (here to itself): after three redirects the bot
    stops asking for them and plays at the address it was given."""
    hellos: list[arena_pb2.Hello] = []
    scripts: list[Script] = []

    async def main() -> Finished:
        async with scripted_server(scripts, hellos) as address:
            again = ([redirect_bytes(int(address.rpartition(":")[2]), "127.0.0.1")], None)
            scripts.extend([again] * 4 + [([welcome_bytes(), ended_bytes()], None)])
            return await run_scripted_at(node, address)

    done = run(main())
    assert done.code == 0, done.stderr
    assert done.stdout.strip() == MATCH_OVER_LINE
    assert done.stderr.count("redirected to 127.0.0.1:") == 4
    assert [list(h.features) for h in hellos] == [WITH_REDIRECTS] * 4 + [["forfeit-notices"]]


def test_a_redirect_the_bot_did_not_ask_for_is_a_protocol_error(node: str) -> None:
    """Back at the given address without asking for redirects, a Redirect there is not
    followed (it could send the bot round in circles): the bot says so and exits 1."""
    hellos: list[arena_pb2.Hello] = []
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))  # bound but never listening: connections are refused
        dead = unused.getsockname()[1]
        scripts: list[Script] = [([redirect_bytes(dead)], None)] * 2

        async def main() -> tuple[Finished, str]:
            async with scripted_server(scripts, hellos) as address:
                return await run_scripted_at(node, address), address

        done, address = run(main())
    assert done.code == 1, done.stderr
    assert f"{address} sent a Redirect this bot did not ask for" in done.stderr
    assert [list(h.features) for h in hellos] == [WITH_REDIRECTS, ["forfeit-notices"]]


def test_the_node_bot_given_the_front_plays_at_its_worker(node: str, tmp_path: Path) -> None:
    """`serve --workers 2`: the Node bot, handed the front's address, is redirected to the
    worker holding its match and plays it there; the front forwards none of its messages."""

    async def main() -> tuple[Finished, match_pb2.MatchResult, str, str, tuple[str, ...]]:
        async with (
            front_process(tmp_path) as front,
            grpc.aio.insecure_channel(front.address) as channel,
        ):
            stub = admin_pb2_grpc.MatchServiceStub(channel)
            created = await stub.CreateMatch(workers_config(5), metadata=AUTH)
            tokens = [t.token for t in created.tokens]
            bot = await NodeBot.start(node, front.address, tokens[0], "--name", "node-front")
            try:
                # The other seat plays at the worker's endpoint: no redirect, no forwarding.
                result = await play(RandomBot(2), created.endpoint, tokens[1])
                done = await bot.finished()
            finally:
                await bot.kill()
            got = await stub.GetMatch(
                admin_pb2.GetMatchRequest(match_id=created.match_id), metadata=AUTH
            )
            front.proc.send_signal(signal.SIGTERM)
            assert await front.proc.wait() == 0
            said = await front.wait_for(
                r"forwarded (\d+) bot stream\(s\) and (\d+) spectator stream\(s\) to the "
                r"workers; redirected (\d+) bot stream\(s\)"
            )
        return done, result, created.endpoint, got.match.record_path, said.groups()

    done, result, endpoint, record_path, counts = run(main(), timeout_s=FRONT_TIMEOUT_S)
    assert done.code == 0, done.stderr
    assert counts == ("0", "0", "1")  # forwarded: bot streams, spectators; redirected
    port = endpoint.rpartition(":")[2]
    assert f"redirected to the same host:{port}; connecting to {endpoint}" in done.stderr
    assert "back to" not in done.stderr and "reconnecting" not in done.stderr
    assert result.ending == match_pb2.MATCH_ENDING_COMPLETE
    mine = next(s for s in result.seats if s.seat == 0)
    assert mine.name == "node-front" and mine.termination == match_pb2.TERMINATION_NORMAL
    assert done.stdout.strip().startswith("match over: seat 0 node-front: ")
    record = verified(Path(record_path))
    decisions = bot_decisions(record, 0)
    assert decisions and {d.source for d in decisions} == {record_pb2.DECISION_SOURCE_BOT}


# -- Update messages: asked for only when the strategy uses them ----------------------------

LISTENER_STRATEGY = """
'use strict';
// The default strategy with an onUpdate hook: a strategy that uses Update messages.
const base = require(%(strategy)s);
exports.createStrategy = (options) => ({
  ...base.createStrategy(options),
  name: 'node-listener',
  onUpdate(events) {
    const kinds = events.map((e) => e.event).join(',');
    process.stderr.write(`listener: ${events.length} event(s): ${kinds}\\n`);
  },
});
"""


@pytest.mark.parametrize(
    ("listener", "args", "omitted"),
    [
        (False, (), True),  # the default: updates only for a strategy that uses them
        (False, ("--updates",), False),
        (False, ("--no-updates",), True),
        (True, (), False),
        (True, ("--no-updates",), True),
    ],
)
def test_updates_are_asked_for_only_when_the_strategy_uses_them(
    node: str, tmp_path: Path, listener: bool, args: tuple[str, ...], omitted: bool
) -> None:
    """Hello.omit_updates is true unless the strategy has onUpdate or --updates is given
    (--no-updates wins over onUpdate); a strategy's onUpdate gets each Update's events."""
    strategy = tmp_path / "listener.js"
    strategy.write_text(LISTENER_STRATEGY % {"strategy": json.dumps(str(NODE_DIR / "strategy.js"))})
    extra = ("--strategy", str(strategy)) if listener else ()
    hellos: list[arena_pb2.Hello] = []
    scripts: list[Script] = [([welcome_bytes(), update_bytes(), ended_bytes()], None)]

    async def main() -> Finished:
        async with scripted_server(scripts, hellos) as address:
            return await run_scripted_at(node, address, *extra, *args)

    done = run(main())
    assert done.code == 0, done.stderr
    assert [h.omit_updates for h in hellos] == [omitted]
    heard = "listener: 2 event(s): passed,turn_started" in done.stderr
    assert heard is listener, done.stderr


# -- the strategy's seed: from the match unless --seed fixes it ------------------------------


def test_without_a_seed_the_match_seeds_the_strategy(node: str, tmp_path: Path) -> None:
    """No --seed: the strategy is seeded from the match (its seed * 4 + the seat), so the same
    match seed plays the same game and another one another game, in a ruleset whose setup
    draws nothing from the seed, against an opponent with a fixed seed."""

    async def actions(match_seed: int, directory: Path) -> list[str]:
        async with serving(directory) as running:
            hosted = running.arena.create(MatchSettings("medina-v1-2p", 2, match_seed))
            bot = await NodeBot.start(node, running.address, hosted.tokens[1], "--bot", "random")
            try:
                await play(RandomBot(5), running.address, hosted.tokens[0])
                done = await bot.finished()
                outcome = await outcome_of(hosted)
            finally:
                await bot.kill()
        assert done.code == 0, done.stderr
        record = verified(hosted.record_path)
        assert_played_every_decision(record, outcome, 1)
        return [str(d.action) for d in bot_decisions(record, 1)]

    async def main() -> None:
        first = await actions(3, tmp_path / "a")
        assert await actions(3, tmp_path / "b") == first
        assert await actions(4, tmp_path / "c") != first

    run(main())


def test_bad_options_exit_2_naming_the_problem(node: str, tmp_path: Path) -> None:
    cases = [
        ([], "--server and --token (or --bot-key) are required"),
        (["--server", "127.0.0.1:1", "--token", "t", "--seed", "x"], "--seed must be an integer"),
        (["--server", "a:1", "--token", "t", "--tls-cert", "c.pem"], "needs both --tls-cert"),
        (["--server", "a:1", "--token", "t", "--proto-dir", str(tmp_path)], "no medina/v1/arena"),
        (["--server", "a:1", "--token", "t", "--tls-ca", "missing.pem"], "cannot read --tls-ca"),
        (["--server", "a:1", "--token", "t", "--bot", "smart"], "--bot must be greedy or random"),
        (["--server", "a:1", "--token", "t", "--updates", "--no-updates"], "exclude each other"),
        # gRPC would dial 70000 modulo 65536, or fail at every reconnect: refused at once
        (["--server", "a:70000", "--token", "t"], "a port is 1 to 65535, got 70000"),
        (["--server", "a:0", "--token", "t"], "a port is 1 to 65535, got 0"),
    ]
    for args, fragment in cases:
        done = subprocess.run(
            [node, str(BOT_JS), *args], capture_output=True, text=True, timeout=30,
            cwd=tmp_path, env={"PATH": ""},
        )  # fmt: skip
        assert done.returncode == 2, (args, done.stderr)
        assert fragment in done.stderr, (args, done.stderr)


TLS_FILES = (("ca", "ca.pem"), ("cert", "client.pem"), ("key", "client.key"))


def test_mutual_tls(node: str, tmp_path: Path) -> None:
    made = make_pki()
    pki = tmp_path / "pki"
    pki.mkdir()
    pem = {
        "ca.pem": made.ca,
        "server.pem": made.server_cert,
        "server.key": made.server_key,
        "client.pem": made.client_cert,
        "client.key": made.client_key,
    }
    for name, data in pem.items():
        (pki / name).write_bytes(data)
    tls = (pem["server.pem"], pem["server.key"], pem["ca.pem"])
    credentials = channel_credentials(pem["ca.pem"], pem["client.pem"], pem["client.key"])
    files = [(f"--tls-{kind}", str(pki / name)) for kind, name in TLS_FILES]

    async def main() -> tuple[Finished, match_pb2.MatchResult]:
        async with serving(tmp_path, tls) as running:
            hosted = running.arena.create(MatchSettings("medina-v1-2p", 2, 2))
            tokens = hosted.tokens
            bot = await NodeBot.start(node, running.address, tokens[0], *sum(files, ()))
            try:
                result = await play(
                    RandomBot(1), running.address, tokens[1], credentials=credentials
                )
                done = await bot.finished()
            finally:
                await bot.kill()
        return done, result

    done, result = run(main())
    assert done.code == 0, done.stderr
    assert result.ending == match_pb2.MATCH_ENDING_COMPLETE
    assert result.seats[0].termination == match_pb2.TERMINATION_NORMAL
    assert result.seats[0].name == "node-greedy"


@pytest.mark.parametrize(
    ("files", "hint"),
    [
        ((), "If it serves TLS, pass --tls-ca"),
        ((("ca", "ca.pem"),), "pass --tls-cert and --tls-key"),
    ],
)
def test_a_bot_that_cannot_get_in_over_tls_is_told_which_options_to_check(
    node: str, tmp_path: Path, files: tuple[tuple[str, str], ...], hint: str
) -> None:
    # grpc-js says only "No connection established" when a TLS handshake fails.
    made = make_pki()
    (tmp_path / "ca.pem").write_bytes(made.ca)
    tls = (made.server_cert, made.server_key, made.ca)  # mutual TLS
    options = sum(((f"--tls-{kind}", str(tmp_path / name)) for kind, name in files), ())

    async def main() -> Finished:
        async with serving(tmp_path, tls) as running:
            hosted = running.arena.create(MatchSettings("medina-v2", 2, 2))
            bot = await NodeBot.start(node, running.address, hosted.tokens[0], *options)
            try:
                return await bot.finished()
            finally:
                await bot.kill()

    done = run(main())
    assert done.code == 1, done.stderr
    assert hint in done.stderr, done.stderr


class _HoldAfterEnd(arena_pb2_grpc.ArenaServiceServicer):
    """A Play stream that sends Welcome and MatchEnded, then never ends: it notes whether the
    bot half-closed its side, and keeps the stream open until the test is over."""

    def __init__(self) -> None:
        self.half_closed = asyncio.Event()
        self.release = asyncio.Event()

    async def Play(
        self,
        request_iterator: AsyncIterator[arena_pb2.PlayRequest],
        context: grpc.aio.ServicerContext[arena_pb2.PlayRequest, arena_pb2.PlayResponse],
    ) -> AsyncIterator[arena_pb2.PlayResponse]:
        await anext(request_iterator)  # the Hello
        s = new_game("medina-v2", 2, 5)
        yield arena_pb2.PlayResponse(
            welcome=arena_pb2.Welcome(
                protocol_version=1,
                match_id="m1",
                seat=0,
                config=match_pb2.MatchConfig(
                    ruleset=common_pb2.RULESET_MEDINA_V2, players=2, seed=5
                ),
                resume_token="r",
                observation=observation_to_proto(observe(s, 0)),
            )
        )
        result = match_pb2.MatchResult(
            seats=[match_pb2.SeatResult(seat=i, total=10 - i, rank=i + 1) for i in (0, 1)],
            ending=match_pb2.MATCH_ENDING_COMPLETE,
        )
        yield arena_pb2.PlayResponse(ended=arena_pb2.MatchEnded(result=result))
        async for _ in request_iterator:
            pass  # nothing more is expected
        self.half_closed.set()
        await self.release.wait()


def test_after_match_ended_the_node_bot_half_closes_and_waits_for_the_status(node: str) -> None:
    """The bot leaves as docs/protocol.md asks: it closes its side and waits for the server
    to end the stream (a stream cancelled first costs the server memory inside gRPC). This
    server never ends it, so the bot leaves after its wait, saying so, and exits 0."""

    async def main() -> Finished:
        servicer = _HoldAfterEnd()
        server = grpc.aio.server()
        arena_pb2_grpc.add_ArenaServiceServicer_to_server(servicer, server)
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        bot = await NodeBot.start(node, f"127.0.0.1:{port}", "tok")
        try:
            await bot.stderr_until("did not end the stream")
            await servicer.half_closed.wait()
            done = await bot.finished()
        finally:
            await bot.kill()
            servicer.release.set()
            await server.stop(0)
        return done

    done = run(main())
    assert done.code == 0, done.stderr
    assert "within 2000 ms of MatchEnded; leaving" in done.stderr


def test_the_tls_hint_is_given_only_where_tls_can_be_at_fault(node: str) -> None:
    # A lobby stream welcomed and then dropped, and the ladder's own SHUTTING_DOWN, were both
    # said to maybe need --tls-ca; a refused connection carried grpc-js's "Last error: null.
    # Resolution note: ".
    async def main() -> Finished:
        lobby = ScriptedLobby()
        async with serving_lobby(lobby) as address:
            proc = await asyncio.create_subprocess_exec(
                node, str(BOT_JS), "--server", address, "--bot-key", "key",
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )  # fmt: skip
            bot = NodeBot(proc)
            try:
                await lobby.last_open.wait()
                proc.send_signal(signal.SIGINT)  # leave: the stand-in then ends the stream
                return await bot.finished()
            finally:
                await bot.kill()

    done = run(main())
    assert done.code == 0, done.stderr
    said = [line.lower() for line in done.stderr.splitlines() if "connecting again" in line]
    assert len(said) == 4, done.stderr
    never, welcomed, again, shutting = said
    assert DROPPED.lower() in never and HINT in never, never
    assert f"lobby: {DROPPED.lower()}; connecting again" in welcomed, welcomed  # no hint
    # These options got in before: TLS is not at fault, the server may be gone.
    assert "server running there?);" in again and "--tls-ca" not in again, again
    assert "stream removed" in shutting and "--tls-ca" not in shutting, shutting
    assert "server running there" not in shutting, shutting


def test_a_refused_connection_is_said_without_grpc_js_noise_or_a_tls_hint(node: str) -> None:
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))  # bound but never listening: connections are refused
        dead = unused.getsockname()[1]

        async def main() -> Finished:
            bot = await NodeBot.start(node, f"127.0.0.1:{dead}", "seat-token")
            try:
                return await bot.finished()
            finally:
                await bot.kill()

        done = run(main())
    assert done.code == 1, done.stderr
    tries = [line for line in done.stderr.splitlines() if f"127.0.0.1:{dead} failed" in line]
    assert tries, done.stderr
    for line in tries:
        assert f"No connection established (connect ECONNREFUSED 127.0.0.1:{dead})" in line
        assert "Last error" not in line and "Resolution note" not in line, line
        assert "(is a Medina Arena server running there?)" in line and "TLS" not in line, line
