"""``medina-arena ladder backup`` of a ladder in play, as an operator runs it: a copy taken
while matches are played and rated is consistent (its ratings equal a recomputation from its
results), and a copy taken mid-match, restored by pointing ``--db`` at it, is the ladder as
it was: the same accounts, keys, rating lines, matches and standings; the match in play is
aborted unrated, as after a SIGKILL; the bots connect with their keys and play on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from medina.storage.ladder import LadderStore
from processes import stop_when

from .harness import Bots, LadderServer, add_bot, arena_cli, finished, running_with, wait_until

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
