"""The ladder end to end, as its users run it: ``ladder serve`` and ``bots`` commands, bots
of every kind the project ships (the SDK, the Node bot, a stdio program) connected with
their keys, playing continuously; a revoked key, a killed bot, a no-show, a killed server;
the stored ratings against a recomputation. One server on SQLite; two servers on one
PostgreSQL."""

from __future__ import annotations

import json
import os
import re
import signal
import sys
import time
from pathlib import Path

import pytest
from e2e.test_node_bot import node  # noqa: F401 (the fixture: node with the bot's packages)
from medina.ladder.recompute import compare
from medina.storage.ladder import LadderStore
from processes import stop_when

from .harness import Bots, LadderServer, add_bot, arena_cli, finished, running_with, wait_until
from .noshowbot import EXITED_WHEN_ASSIGNED

pytestmark = pytest.mark.timeout(420)

HANGBOT = Path(__file__).with_name("hangbot.py")
NOSHOWBOT = Path(__file__).with_name("noshowbot.py")

#: Fast matches: a short clock (the bots answer at once) and 2- and 4-player games.
OFFERS = ("--offer", "medina-v2:2:300", "--offer", "medina-v2:4:300")


def test_one_server_plays_continuously_and_charges_faults(
    tmp_path: Path,
    node: str,  # noqa: F811
) -> None:
    db = str(tmp_path / "ladder.db")
    keys = {name: add_bot(db, name) for name in ("py-1", "py-2", "node-1", "awk-1")}
    server = LadderServer.start(db, tmp_path, "solo", *OFFERS, "--seed", "3")
    bots = Bots(tmp_path)
    store = LadderStore(db)
    try:
        py1 = bots.start(
            "py-1",
            [sys.executable, str(HANGBOT), "--server", server.address, "--bot-key",
             keys["py-1"], "--name", "py-1", "--hang-when", str(tmp_path / "hang")],
        )  # fmt: skip
        py2 = bots.sdk("py-2", server.address, keys["py-2"], "--bot-version", "v2")
        nodebot = bots.node(node, "node-1", server.address, keys["node-1"])
        bots.stdio("awk-1", server.address, keys["awk-1"])
        wait_until(lambda: finished(store) >= 12, 150, "12 finished ladder matches")
        # A bot that names no version is rated on the version-less line, as the SDK's and
        # the Node bot's are (the stdio bridge sent "0").
        versions = {x.bot: x.version for x in store.lines()}
        assert versions == {"py-1": "", "py-2": "v2", "node-1": "node-1", "awk-1": ""}
        kinds = {m.players for m in store.matches() if m.status == "finished"}
        assert kinds == {2, 4}, "the offer mix is kept"
        # Both clients print a line per match with the bot's rating after it.
        for bot in (nodebot, py2):
            assert re.search(r"^ladder match \S+: .+; rating -?\d+\.\d\d$", bot.output(), re.M), (
                bot.output()
            )

        # A bot killed mid-match (mid-turn) is charged for it. (Before the revocation below:
        # a match formed as node-1 left would wait for it, 30 s, before py-1 could hang.)
        (tmp_path / "hang").touch()
        wait_until(lambda: "hanging in a match" in py1.output(), 60, "py-1 mid-match")
        killed_in = running_with(store, "py-1")
        assert killed_in is not None
        py1.proc.kill()
        py1.proc.wait(10)

        def charged() -> bool:
            m = {x.id: x for x in store.matches()}[killed_in]
            return m.status == "finished" and any(
                s[1] == "py-1" and s[5] in ("crashed", "disconnected", "timeout") for s in m.seats
            )

        wait_until(charged, 90, "py-1's match to end with py-1 charged")
        py1_line = next(x for x in store.lines() if x.bot == "py-1")
        assert sum(py1_line.faults.values()) >= 1

        # A revoked key: the live lobby stream ends, and the key opens nothing again.
        done = arena_cli("bots", "revoke", "node-1", "--db", db)
        assert done.returncode == 0, done.stderr
        assert nodebot.proc.wait(60) == 1
        assert "BOT_REVOKED" in nodebot.output()
        t0 = time.monotonic()  # the key is checked on every connect: refused at once
        retry = bots.sdk("node-1-again", server.address, keys["node-1"])
        assert retry.proc.wait(30) == 1
        assert time.monotonic() - t0 < 30 and "revoked" in retry.output()

        for bot in bots.procs:
            if bot.proc.poll() is None:
                assert bot.stop() == 0, bot.output()
                assert "left the ladder after" in bot.output()
    finally:
        bots.kill_all()
        server.stop()
    assert compare(store) == (len(store.rated_results()), [])
    standings = arena_cli("ladder", "standings", "--db", db, "--all", "--format", "json")
    rows = {(r["bot"], r["version"]): r for r in json.loads(standings.stdout)}
    assert rows[("node-1", "node-1")]["inactive"] == "revoked"
    assert rows[("py-2", "v2")]["games"] > 0
    assert "Traceback" not in server.log.read_text()
    check = arena_cli("ladder", "recompute", "--db", db)
    assert check.returncode == 0 and "equal a recomputation" in check.stdout


@pytest.mark.parametrize("exits", [False, True], ids=["holds-its-lobby", "exits-when-assigned"])
def test_a_no_show_is_settled_at_the_ladders_connect_deadline(tmp_path: Path, exits: bool) -> None:
    # A matched bot that never opens its seat's Play stream, holding its lobby stream or
    # gone from it right after being told of the match: its opponent's match is settled at
    # the ladder's connect deadline (--connect-timeout-s, 2 s here; 10 s by default), not
    # the arena's 30 s, and the no-show is charged to its version until it is suspended.
    db = str(tmp_path / "ladder.db")
    keys = {name: add_bot(db, name) for name in ("honest", "absent")}
    suspend_after = 1 if exits else 2
    server = LadderServer.start(
        db, tmp_path, "noshow", "--offer", "medina-v2:2:300", "--seed", "5",
        "--connect-timeout-s", "2", "--suspend-after", str(suspend_after),
    )  # fmt: skip
    bots = Bots(tmp_path)
    store = LadderStore(db)
    try:
        honest = bots.sdk("honest", server.address, keys["honest"])
        absent = bots.start(
            "absent",
            [sys.executable, str(NOSHOWBOT), "--server", server.address, "--bot-key",
             keys["absent"], *(["--exit-when-assigned"] if exits else [])],
        )  # fmt: skip
        # Suspended at its last fault, a bot still in the lobby is refused (BOT_SUSPENDED).
        assert absent.proc.wait(120) == (EXITED_WHEN_ASSIGNED if exits else 1), absent.output()
        wait_until(lambda: finished(store) >= suspend_after, 60, "the no-show's matches")
        assert honest.stop() == 0, honest.output()
    finally:
        bots.kill_all()
        server.stop()
    # The bot was told the deadline with its match (MatchAssigned.config).
    told = re.findall(r"^assigned match \S+, connect deadline (\d+) ms$", absent.output(), re.M)
    assert told == ["2000"] * suspend_after, absent.output()
    if not exits:
        assert "BOT_SUSPENDED" in absent.output(), absent.output()
    # Its bots are matched again only once a result is stored: the no-show is never matched
    # after the fault that suspends it (a match formed while that result was being stored
    # was aborted, or charged as a further no-show, its opponent waiting the deadline again).
    matches = store.matches()
    assert len(matches) == suspend_after, matches
    assert {m.status for m in matches} == {"finished"}, matches
    for m in matches:
        terminations = {bot: termination for _s, bot, _v, _t, _r, termination, _m in m.seats}
        assert terminations == {"absent": "no_show", "honest": "normal"}, m
        assert m.ending == "complete" and m.rated_seq is not None, m  # rated, as before
        assert m.record_path is not None and m.finished_at is not None
        record = Path(m.record_path).read_text(encoding="utf-8")
        assert "its bot never connected (2 s connect deadline)" in record
        # Formed, waited for the no-show, played out by the honest bot: within a few
        # seconds of the deadline, far from the arena's 30 s.
        assert 2 <= m.finished_at - m.created_at < 15, m.finished_at - m.created_at
    faults = {x.bot: x.faults for x in store.lines()}
    assert faults == {"absent": {"no_show": len(matches)}, "honest": {}}, faults
    standings = arena_cli("ladder", "standings", "--db", db, "--all", "--format", "json")
    rows = {r["bot"]: r for r in json.loads(standings.stdout)}
    assert rows["absent"]["inactive"].startswith(f"suspended: {len(matches)} faults")
    assert rows["honest"]["games"] == len(matches)
    assert "Traceback" not in server.log.read_text()


def test_two_servers_share_one_postgresql(
    tmp_path: Path,
    pg_url: str,
    node: str,  # noqa: F811
) -> None:
    names = ("a-py-1", "a-py-2", "a-node", "b-py-1", "b-py-2", "b-awk")
    keys = {name: add_bot(pg_url, name, owner=name) for name in names}
    lease = ("--lease-s", "3")
    first = LadderServer.start(pg_url, tmp_path, "first", *OFFERS, *lease, "--seed", "1")
    second = LadderServer.start(pg_url, tmp_path, "second", *OFFERS, *lease, "--seed", "2")
    bots = Bots(tmp_path)
    store = LadderStore(pg_url)
    try:
        bots.sdk("a-py-1", first.address, keys["a-py-1"])
        bots.sdk("a-py-2", first.address, keys["a-py-2"])
        bots.node(node, "a-node", first.address, keys["a-node"])
        bots.sdk("b-py-1", second.address, keys["b-py-1"])
        bots.sdk("b-py-2", second.address, keys["b-py-2"])
        bots.stdio("b-awk", second.address, keys["b-awk"])
        wait_until(lambda: finished(store) >= 30, 240, "30 finished ladder matches")

        # The same key from a second place is refused while the first holds it.
        twin = bots.sdk("twin", second.address, keys["a-py-1"])
        wait_until(lambda: "BOT_CONNECTED_ELSEWHERE" in twin.output(), 30, "the twin refused")
        twin.proc.kill()

        # The second server dies mid-match: its matches are aborted, never rated. Stopped
        # while a match runs on it, so that the match cannot end before the kill.
        def running_on_second() -> list[int]:
            return [m.id for m in store.matches() if m.server == "second" and m.status == "running"]

        cut = stop_when(second.proc.pid, running_on_second, 60, "a match running on the second")
        os.kill(second.proc.pid, signal.SIGKILL)
        second.proc.wait(10)
        assert cut

        def orphans_aborted() -> bool:
            by_id = {m.id: m for m in store.matches()}
            return all(by_id[i].status == "aborted" for i in cut)

        wait_until(orphans_aborted, 60, "the dead server's matches to be aborted")
        by_id = {m.id: m for m in store.matches()}
        assert all(by_id[i].rated_seq is None for i in cut)
        # The first server plays on.
        now = finished(store)
        wait_until(lambda: finished(store) >= now + 3, 60, "the first server to play on")
    finally:
        bots.kill_all()
        first.stop()
        second.stop()
    servers = {m.server for m in store.matches() if m.status == "finished"}
    assert servers == {"first", "second"}
    for m in store.matches():
        assert len({s[1] for s in m.seats}) == len(m.seats), "nobody plays itself"
    assert compare(store) == (len(store.rated_results()), [])
    assert "Traceback" not in first.log.read_text()
