"""The tournament store on SQLite and on a real PostgreSQL: schedule, leases, results stored
exactly once, migrations."""

from __future__ import annotations

import threading

import pytest
from medina.storage import schema
from medina.storage.tournaments import (
    Claim,
    NewGame,
    SeatRow,
    StoreError,
    TournamentStore,
    database_url,
    owner_is_dead_here,
    worker_id,
)
from sqlalchemy import insert

BOTS = [("a", ["python", "a.py"], None, []), ("b", ["b"], "dir", [("K", "V")])]


def schedule(n: int) -> list[NewGame]:
    return [NewGame(i, i // 2, "medina-v2", 2, 100 + i // 2, i % 2, ("a", "b")) for i in range(n)]


def seats(claim: Claim) -> list[SeatRow]:
    return [
        SeatRow(seat, bot, 10 - seat, seat + 1, "normal", 0, "")
        for seat, bot in enumerate(claim.seats)
    ]


def make(db_url: str, n: int = 4) -> tuple[TournamentStore, int]:
    store = TournamentStore(db_url)
    row, created = store.ensure_tournament("cup", "d1", "{}", BOTS, schedule(n))
    assert created
    return store, row.id


def test_the_schedule_is_stored_once_and_found_again(db_url: str) -> None:
    store, tid = make(db_url)
    again, created = TournamentStore(db_url).ensure_tournament("cup", "d1", "{}", BOTS, [])
    assert not created and again.id == tid
    assert store.counts(tid) == {"pending": 4}
    assert store.bot_names(tid) == ["a", "b"]
    with pytest.raises(StoreError, match="was started from a different file"):
        store.ensure_tournament("cup", "d2", "{}", BOTS, schedule(4))


def test_games_are_claimed_in_order_and_stored_once(db_url: str) -> None:
    store, tid = make(db_url)
    first = store.claim("w1", 60, tid)
    second = store.claim("w2", 60, tid)
    assert first is not None and second is not None
    assert (first.number, second.number) == (0, 1)
    assert first.seats == ("a", "b") and first.seed == 100
    assert store.finish(
        first, match_id="m0", record_path="r0", ending="complete", seats=seats(first)
    )
    # the same claim cannot store twice
    assert not store.finish(
        first, match_id="m0", record_path="r0", ending="complete", seats=seats(first)
    )
    assert store.counts(tid) == {"done": 1, "running": 1, "pending": 2}
    results = store.results(tid)
    assert [g.number for g in results] == [0]
    assert [s.bot for s in results[0].seats] == ["a", "b"]


def test_an_expired_lease_passes_the_game_on_and_the_old_holder_cannot_store(db_url: str) -> None:
    store, tid = make(db_url, 2)
    stale = store.claim("w1", 0, tid)  # a lease of 0 s has run out at once
    assert stale is not None
    taken = store.claim("w2", 60, tid)
    assert taken is not None and taken.number == stale.number and taken.attempt == 2
    assert not store.renew(stale, 60)
    assert not store.finish(
        stale, match_id="x", record_path="x", ending="complete", seats=seats(stale)
    )
    assert store.finish(taken, match_id="y", record_path="y", ending="complete", seats=seats(taken))
    assert [g.match_id for g in store.results(tid)] == ["y"]
    # the takeover is on record, naming the worker whose lease ran out
    assert [(i.number, i.worker) for i in store.incidents(tid)] == [(stale.number, "w1")]
    assert "lease ran out" in store.incidents(tid)[0].what


def test_only_one_of_two_claimers_takes_an_expired_game_back(db_url: str) -> None:
    store, tid = make(db_url, 1)
    assert store.claim("gone", 0, tid) is not None
    other = TournamentStore(db_url)
    assert store.reclaim_expired(tid) + other.reclaim_expired(tid) == 1
    assert len(store.incidents(tid)) == 1
    other.close()


def test_a_released_game_is_replayed(db_url: str) -> None:
    store, tid = make(db_url, 2)
    claim = store.claim("w1", 60, tid)
    assert claim is not None
    assert store.release(claim, "interrupted: test")
    again = store.claim("w1", 60, tid)
    assert again is not None and again.number == claim.number and again.attempt == 2
    assert [i.what for i in store.incidents(tid)] == ["interrupted: test"]


def test_concurrent_claimers_never_share_a_game(db_url: str) -> None:
    store, tid = make(db_url, 40)
    got: list[int] = []
    lock = threading.Lock()

    def work(name: str) -> None:
        own = TournamentStore(db_url)
        while (claim := own.claim(name, 60, tid)) is not None:
            assert own.finish(
                claim, match_id=name, record_path="", ending="complete", seats=seats(claim)
            )
            with lock:
                got.append(claim.number)
        own.close()

    threads = [threading.Thread(target=work, args=(f"w{i}",)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert sorted(got) == list(range(40))
    assert store.counts(tid) == {"done": 40}


def test_games_of_a_dead_local_runner_are_reclaimed_at_once(db_url: str) -> None:
    store, tid = make(db_url, 2)
    host = worker_id().split(":")[0]
    dead = f"{host}:999999999:1"  # no such pid
    assert owner_is_dead_here(dead) and not owner_is_dead_here(worker_id())
    assert not owner_is_dead_here("elsewhere:1:1")
    assert store.claim(dead, 600, tid) is not None
    assert store.claim(worker_id(), 600, tid) is not None
    assert store.reclaim_dead_local(tid) == 1
    assert store.counts(tid) == {"pending": 1, "running": 1}


def test_early_stop_cancels_later_games(db_url: str) -> None:
    store, tid = make(db_url, 6)
    assert store.stop_early(tid, 0)
    assert not store.stop_early(tid, 1)  # only the first stop counts
    assert store.counts(tid) == {"pending": 2, "cancelled": 4}
    assert store.tournament("cup").status == "separated"
    assert store.claim("w", 60, tid) is None  # a stopped tournament gives no more games


def test_a_newer_schema_is_refused(db_url: str) -> None:
    store, _ = make(db_url, 1)
    with store.engine.begin() as conn:
        conn.execute(insert(schema.schema_version).values(version=schema.LATEST + 1, applied_at=0))
    with pytest.raises(StoreError, match="newer than this medina-arena knows"):
        TournamentStore(db_url)


def test_urls() -> None:
    assert database_url("postgresql://u@h/db") == "postgresql+psycopg://u@h/db"
    assert database_url("x.db").startswith("sqlite:////")
    with pytest.raises(StoreError, match="only SQLite and PostgreSQL"):
        TournamentStore("mysql://u@h/db")


def test_an_unreachable_database_is_named() -> None:
    with pytest.raises(StoreError, match="cannot open the database"):
        TournamentStore("postgresql://nobody@/x?host=/nonexistent-dir&port=1")


def test_a_database_that_cannot_be_reached_is_one_line() -> None:
    # libpq goes on with a tab-indented hint on a second line; a CLI error is one line
    with pytest.raises(StoreError) as caught:
        TournamentStore("postgresql://nobody@127.0.0.1:1/none?connect_timeout=5")
    message = str(caught.value)
    assert message.startswith("cannot open the database postgresql+psycopg://nobody@127.0.0.1:1")
    assert "\n" not in message and "Connection refused" in message
