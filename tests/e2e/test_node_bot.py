"""The Node.js bot (clients/node) end to end over real gRPC on 127.0.0.1: full matches
against the Python SDK's bots, refusals and retries, reconnects after a dropped stream,
handshake refusals, seeded play and mutual TLS."""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import subprocess
from collections.abc import AsyncIterator, Awaitable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import pytest
from medina.engine import Action
from medina.records.reader import Record, read_record
from medina.records.verify import verify_record
from medina.referee.config import MatchSettings
from medina.referee.outcome import MatchOutcome, Termination
from medina.rpc.host import HostedMatch
from medina.rpc.server import RunningServer, ServerConfig, start_server
from medina.v1 import match_pb2, record_pb2
from medina_client import Turn, play
from medina_client.bots import GreedyBot, RandomBot
from medina_client.connection import channel_credentials

from .pki import make_pki

T = TypeVar("T")
NODE_DIR = Path(__file__).resolve().parents[2] / "clients" / "node"
BOT_JS = NODE_DIR / "bot.js"
#: Bounds every wait of one test; a match here takes well under a second.
TEST_TIMEOUT_S = 60
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


def run(coro: Awaitable[T]) -> T:
    async def bounded() -> T:
        async with asyncio.timeout(TEST_TIMEOUT_S):
            return await coro

    return asyncio.run(bounded())


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
        return Finished(self.proc.returncode, out.decode(), err.decode())

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


def test_a_refused_handshake_exits_1_with_the_status(node: str, tmp_path: Path) -> None:
    async def main() -> None:
        async with serving(tmp_path) as running:
            hosted = running.arena.create(MatchSettings("medina-v2", 2, 1))
            bot = await NodeBot.start(node, running.address, "not-a-seat-token")
            try:
                done = await bot.finished()
            finally:
                await bot.kill()
                hosted.match.abort("test over")
        assert done.code == 1
        assert "UNAUTHENTICATED" in done.stderr and "unknown seat token" in done.stderr
        assert "reconnecting" not in done.stderr  # a refusal is not retried
        assert done.stdout == ""

    run(main())


def test_bad_options_exit_2_naming_the_problem(node: str, tmp_path: Path) -> None:
    cases = [
        ([], "--server and --token are required"),
        (["--server", "127.0.0.1:1", "--token", "t", "--seed", "x"], "--seed must be an integer"),
        (["--server", "a:1", "--token", "t", "--tls-cert", "c.pem"], "needs both --tls-cert"),
        (["--server", "a:1", "--token", "t", "--proto-dir", str(tmp_path)], "no medina/v1/arena"),
        (["--server", "a:1", "--token", "t", "--tls-ca", "missing.pem"], "cannot read --tls-ca"),
        (["--server", "a:1", "--token", "t", "--bot", "smart"], "--bot must be greedy or random"),
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
