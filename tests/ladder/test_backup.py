"""``medina-arena ladder backup`` of a ladder in play, as an operator runs it: a copy taken
while matches are played and rated is consistent (its ratings equal a recomputation from its
results), and a copy taken mid-match, restored by pointing ``--db`` at it, is the ladder as
it was: the same accounts, keys, rating lines, matches and standings; the match in play is
aborted unrated, as after a SIGKILL; the bots connect with their keys and play on."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from medina.ladder import accounts
from medina.ladder.recompute import compare
from medina.storage.ladder import LadderStore
from processes import stop_when
from tournament.postgres import PostgresServer

from .harness import Bots, LadderServer, add_bot, arena_cli, finished, running_with, wait_until
from .test_store import add, finish, line, seats

pytestmark = pytest.mark.timeout(300)

#: Fast two-player matches (the bots answer at once).
OFFERS = ("--offer", "medina-v2:2:300", "--seed", "5")


def standings(db: str) -> list[dict[str, object]]:
    done = arena_cli("ladder", "standings", "--db", db, "--format", "json", "--all")
    assert done.returncode == 0, done.stderr
    rows: list[dict[str, object]] = json.loads(done.stdout)
    return rows


def test_a_backup_mid_play_restores_the_ladder_as_it_was(tmp_path: Path) -> None:
    db = str(tmp_path / "ladder.db")
    keys = {name: add_bot(db, name) for name in ("alpha", "beta")}
    server = LadderServer.start(db, tmp_path, "main", *OFFERS)
    bots = Bots(tmp_path)
    store = LadderStore(db)
    live, copy = tmp_path / "live.db", tmp_path / "backups" / "ladder-copy.db"
    copy.parent.mkdir()
    try:
        for name, key in keys.items():
            bots.sdk(name, server.address, key)
        wait_until(lambda: finished(store) >= 2, 120, "two finished ladder matches")

        # Taken while the ladder forms, plays and rates matches.
        done = arena_cli("ladder", "backup", str(live), "--db", db)
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith(f"backed up {db} to {live} (")
        assert "integrity ok): 2 bots, 2 rating lines" in done.stdout
        again = arena_cli("ladder", "recompute", "--db", str(live))
        assert again.returncode == 0 and "equal a recomputation" in again.stdout, again.stdout

        # Taken with a match in play (the server held still so that nothing moves meanwhile).
        in_play = stop_when(
            server.proc.pid,
            lambda: finished(store) >= 3 and running_with(store, "alpha"),
            120,
            "a third match in play",
        )
        expected = (store.accounts(), store.lines(), store.matches(), standings(db))
        done = arena_cli("ladder", "backup", str(copy), "--db", db)
        assert done.returncode == 0, done.stderr
        assert "(1 in play); in play: aborted, unrated, when a ladder starts on the copy" in (
            done.stdout
        )
    finally:
        server.proc.kill()  # lost, as a disk is
        server.proc.wait(10)
        bots.kill_all()

    assert sorted(p.name for p in copy.parent.iterdir()) == [copy.name]  # one file, whole
    restored = LadderStore(str(copy))
    assert (restored.accounts(), restored.lines(), restored.matches()) == expected[:3]
    assert standings(str(copy)) == expected[3]
    before = {(x.bot, x.version): x for x in restored.lines()}
    rated = finished(restored)

    # Restored: a ladder started on the copy (under the same server id, as after a restart).
    again_server = LadderServer.start(
        str(copy), tmp_path, "restored", *OFFERS, "--server-id", "main"
    )
    bots = Bots(tmp_path)
    try:
        aborted = next(m for m in restored.matches() if m.id == in_play)
        assert (aborted.status, aborted.ending) == ("aborted", "aborted")
        assert aborted.detail == "its ladder server stopped before the end"
        for line in restored.lines():  # not rated: one more abort each, the rating as it was
            was = before[line.bot, line.version]
            assert (line.mu, line.sigma, line.games) == (was.mu, was.sigma, was.games)
            assert line.aborted == was.aborted + 1
        for name, key in keys.items():  # the keys of the original
            bots.sdk(name, again_server.address, key)
        wait_until(lambda: finished(restored) >= rated + 2, 120, "two more matches rated")
    finally:
        again_server.stop()
        bots.kill_all()
    checked = arena_cli("ladder", "recompute", "--db", str(copy))
    assert checked.returncode == 0 and "equal a recomputation" in checked.stdout, checked.stdout


def test_a_postgresql_ladder_is_copied_with_the_documented_pg_dump_and_pg_restore(
    pg: PostgresServer, tmp_path: Path
) -> None:
    url = pg.create_database()
    store = LadderStore(url)
    key = accounts.new_key()
    store.add_bot("a", "ann", key.key_id, key.salt, key.digest)
    a, b = store.account("a").id, add(store, "b")
    la, lb = line(store, a), line(store, b)
    for n in range(3):
        mid = store.new_match("s", "medina-v2", 2, 1000, n, [la, lb])
        store.started(mid, "s", f"m{n}")
        finish(store, mid, "s", seats((20, 1, "normal"), (10, 2, "normal")))
    told = arena_cli("ladder", "backup", str(tmp_path / "b.db"), "--db", url)
    assert told.returncode == 2 and told.stdout == ""
    assert "is a PostgreSQL database: back it up with pg_dump, e.g. pg_dump" in told.stderr
    assert list(tmp_path.iterdir()) == []

    # docs/operations.md, "Backups"
    dump = tmp_path / "ladder.dump"
    pg_dump = [str(pg.bindir / "pg_dump"), "--format=custom", f"--file={dump}", url]
    subprocess.run(pg_dump, check=True, capture_output=True, timeout=60)
    copy = pg.create_database()
    pg_restore = [str(pg.bindir / "pg_restore"), "--no-owner", f"--dbname={copy}", str(dump)]
    subprocess.run(pg_restore, check=True, capture_output=True, timeout=60)
    restored = LadderStore(copy)
    assert restored.accounts() == store.accounts() and restored.lines() == store.lines()
    assert restored.matches() == store.matches() and compare(restored) == (3, [])
    key_id, secret = accounts.parse_key(key.key)  # the bot's key still opens its account
    found = restored.key_row(key_id)
    assert found is not None and found[0].name == "a" and accounts.verify(secret, *found[1:])
    add(restored, "c")  # the ids go on where they were (the sequences are copied)
    assert [x.name for x in restored.accounts()] == ["a", "b", "c"]
