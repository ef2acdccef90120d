"""The ladder's tables on SQLite and on a real PostgreSQL: accounts, presence, results
stored once and rated in order, orphans aborted, suspension per version (and the migration
that moved it there)."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Any

import pytest
from medina.ladder import accounts, ratings
from medina.ladder.recompute import compare
from medina.storage.ladder import BotRevokedError, LadderStore, RatedSeat, StoredSeat, StoreError
from medina.storage.schema import LATEST
from medina.tournament.standings import FAULTS
from sqlalchemy import event, text

FAULTSET = frozenset(FAULTS)


def rater(before: Sequence[tuple[float, float]], ranks: Sequence[int]) -> list[tuple[float, float]]:
    after = ratings.rate([ratings.Rating(m, s) for m, s in before], ranks)
    return [(r.mu, r.sigma) for r in after]


def add(store: LadderStore, name: str, owner: str = "") -> int:
    made = accounts.new_key()
    store.add_bot(name, owner or name, made.key_id, made.salt, made.digest)
    return store.account(name).id


def line(store: LadderStore, bot_id: int, version: str = "v1") -> int:
    return store.line(bot_id, version, ratings.INITIAL.mu, ratings.INITIAL.sigma).id


def seats(*results: tuple[int, int, str]) -> list[StoredSeat]:
    return [
        StoredSeat(i, total, rank, term, 0, "") for i, (total, rank, term) in enumerate(results)
    ]


def finish(
    store: LadderStore,
    mid: int,
    server: str,
    outcome: list[StoredSeat],
    *,
    ending: str = "complete",
    suspend_after: int = 3,
) -> list[RatedSeat] | None:
    return store.finish(
        mid,
        server,
        outcome,
        ending,
        "rec.jsonl",
        rater,
        suspend_after=suspend_after,
        window=10,
        faults=FAULTSET,
    )


def test_accounts(db_url: str) -> None:
    store = LadderStore(db_url)
    add(store, "alpha", "ann")
    with pytest.raises(StoreError, match="exists already"):
        add(store, "alpha")
    account = store.account("alpha")
    assert account.owner == "ann" and not account.revoked and account.inactive == ""
    made = accounts.new_key()
    store.set_key("alpha", made.key_id, made.salt, made.digest)
    found = store.key_row(made.key_id)
    assert found is not None and found[0].name == "alpha"
    store.revoke("alpha")
    assert store.account("alpha").inactive == "revoked"
    assert store.keys([account.id]) == {account.id: (made.key_id, True)}
    with pytest.raises(BotRevokedError, match="'alpha' is revoked, for good"):
        store.set_key("alpha", "k2", made.salt, made.digest)
    assert store.keys([account.id]) == {account.id: (made.key_id, True)}  # unchanged
    with pytest.raises(StoreError, match="no bot named"):
        store.set_key("nobody", "k3", made.salt, made.digest)
    with pytest.raises(StoreError, match="no bot named"):
        store.revoke("nobody")


def test_presence_is_one_place_at_a_time(db_url: str) -> None:
    store = LadderStore(db_url)
    bot = add(store, "alpha")
    assert store.claim_presence(bot, "s1", 30) is None
    assert store.claim_presence(bot, "s2", 30) == "s1"
    store.release_presence(bot, "s1")
    assert store.claim_presence(bot, "s2", 30) is None
    assert store.claim_presence(bot, "s1", -1) == "s2"
    store.register_server("s2", "x", -1)  # s2 stops renewing: its hold lapses
    store.renew("s2", [bot], -1)
    assert store.claim_presence(bot, "s1", 30) is None


def test_a_release_takes_away_only_its_own_claim(db_url: str) -> None:
    # A lobby stream that ends as the bot's next stream is welcomed on the same server: its
    # release, run after the next claim, deleted that claim (3 of 200 quick reconnections),
    # and another server could then welcome the connected bot too.
    store = LadderStore(db_url)
    bot = add(store, "alpha")
    assert store.claim_presence(bot, "s1", 30, connected_at=100.0) is None
    assert store.claim_presence(bot, "s1", 30, connected_at=101.0) is None  # the next stream
    store.release_presence(bot, "s1", connected_at=100.0)  # the first one's, late
    assert store.claim_presence(bot, "s2", 30) == "s1"
    store.release_presence(bot, "s1", connected_at=101.0)
    assert store.claim_presence(bot, "s2", 30) is None


def test_a_result_is_stored_and_rated_once_in_order(db_url: str) -> None:
    store = LadderStore(db_url)
    store.register_server("s1", "x", 30)
    a, b = add(store, "a"), add(store, "b")
    la, lb = line(store, a), line(store, b)
    mid = store.new_match("s1", "medina-v2", 2, 1000, 7, [la, lb])
    outcome = seats((40, 1, "normal"), (30, 2, "normal"))
    assert finish(store, mid, "s1", outcome) is None  # not started: not running
    assert store.started(mid, "s1", "arena-1")
    assert not store.started(mid, "s2", "arena-1")
    rated = finish(store, mid, "s1", outcome)
    assert rated is not None and [r.games for r in rated] == [1, 1]
    assert rated[0].mu > rated[1].mu
    assert finish(store, mid, "s1", outcome) is None  # stored once
    (m,) = store.matches()
    assert (m.status, m.ending, m.rated_seq) == ("finished", "complete", 1)
    assert compare(store) == (1, [])


def test_recompute_reads_one_snapshot_while_a_result_is_stored_between_its_reads(
    db_url: str,
) -> None:
    # `ladder recompute` against a playing ladder reported lines one game apart (stored
    # 264, recomputed 263): it read the results, a result was stored, then it read the
    # lines. Here the other server's result is stored right after the first read.
    store = LadderStore(db_url)
    writer = LadderStore(db_url)  # another server's connections: its own engine
    a, b = add(store, "a"), add(store, "b")
    la, lb = line(store, a), line(store, b)
    mids = [store.new_match("s1", "medina-v2", 2, 1000, n, [la, lb]) for n in (1, 2)]
    for mid in mids:
        assert store.started(mid, "s1", f"arena-{mid}")
    assert finish(store, mids[0], "s1", seats((40, 1, "normal"), (30, 2, "normal")))
    stored: list[int] = []

    def store_between(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        if not stored and statement.lstrip().upper().startswith("SELECT"):
            stored.append(mids[1])
            assert finish(writer, mids[1], "s1", seats((10, 2, "normal"), (50, 1, "normal")))

    event.listen(store.engine, "after_cursor_execute", store_between)
    try:
        assert compare(store) == (1, [])
    finally:
        event.remove(store.engine, "after_cursor_execute", store_between)
    assert stored == [mids[1]]
    assert compare(store) == (2, [])  # and the next check sees it
    writer.engine.dispose()


def test_an_export_reads_the_standings_and_the_matches_in_one_snapshot(db_url: str) -> None:
    # `ladder export` of a playing ladder read the lines, then the matches: a result stored
    # between them was counted in the standings and missing from the matches (or the other
    # way round).
    store = LadderStore(db_url)
    writer = LadderStore(db_url)
    a, b = add(store, "a"), add(store, "b")
    la, lb = line(store, a), line(store, b)
    mid = store.new_match("s1", "medina-v2", 2, 1000, 1, [la, lb])
    assert store.started(mid, "s1", "arena-1")
    stored: list[int] = []

    def store_between(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        if not stored and statement.lstrip().upper().startswith("SELECT"):
            stored.append(mid)
            assert finish(writer, mid, "s1", seats((40, 1, "normal"), (30, 2, "normal")))

    event.listen(store.engine, "after_cursor_execute", store_between)
    try:
        lines, matches = store.lines_and_matches()
    finally:
        event.remove(store.engine, "after_cursor_execute", store_between)
    assert stored == [mid]
    assert [x.games for x in lines] == [0, 0]  # as of one moment: before the result
    assert [m.status for m in matches] == ["running"]
    writer.engine.dispose()


def test_an_abandoned_result_is_stored_but_not_rated(db_url: str) -> None:
    store = LadderStore(db_url)
    a, b = add(store, "a"), add(store, "b")
    la, lb = line(store, a), line(store, b)
    mid = store.new_match("s1", "medina-v2", 2, 1000, 7, [la, lb])
    store.started(mid, "s1", "m")
    finish(store, mid, "s1", seats((0, 1, "no_show"), (0, 1, "no_show")), ending="abandoned")
    for x in store.lines():
        assert (x.games, x.aborted, x.faults) == (0, 1, {"no_show": 1})
    assert store.matches()[0].rated_seq is None


def test_a_dead_servers_matches_are_aborted_and_never_rated(db_url: str) -> None:
    store = LadderStore(db_url)
    store.register_server("dead", "x", -1)
    store.register_server("live", "y", 30)
    a, b, c = add(store, "a"), add(store, "b"), add(store, "c")
    la, lb, lc = line(store, a), line(store, b), line(store, c)
    m1 = store.new_match("dead", "medina-v2", 2, 1000, 1, [la, lb])
    store.started(m1, "dead", "x1")
    m2 = store.new_match("live", "medina-v2", 2, 1000, 2, [lb, lc])
    store.started(m2, "live", "x2")
    assert store.abort_orphans() == [m1]
    assert finish(store, m1, "dead", seats((1, 1, "normal"), (0, 2, "normal"))) is None
    assert finish(store, m2, "live", seats((1, 1, "normal"), (0, 2, "normal"))) is not None
    by_id = {m.id: m for m in store.matches()}
    assert by_id[m1].status == "aborted" and by_id[m1].rated_seq is None
    lines = {x.bot: x for x in store.lines()}
    assert (lines["a"].games, lines["a"].aborted) == (0, 1)
    assert (lines["b"].games, lines["b"].aborted) == (1, 1)
    assert compare(store) == (1, [])


def suspend_v1(store: LadderStore, a: int, b: int) -> int:
    """Three timeouts of ``a``'s v1 against ``b``: v1's line (suspended)."""
    la, lb = line(store, a), line(store, b)
    for n in range(3):
        mid = store.new_match("s", "medina-v2", 2, 1000, n, [la, lb])
        store.started(mid, "s", f"m{n}")
        finish(store, mid, "s", seats((10, 2, "timeout"), (20, 1, "normal")))
    return la


def test_faults_suspend_that_version_alone_until_the_organiser_lifts_it(db_url: str) -> None:
    store = LadderStore(db_url)
    a, b = add(store, "a"), add(store, "b")
    la = suspend_v1(store, a, b)
    account = store.account("a")
    assert list(account.suspended) == ["v1"] and "3 faults" in account.suspended["v1"]
    assert account.inactive.startswith("suspended: 3 faults")  # its newest version
    assert store.lines(line_ids=[la])[0].inactive.startswith("suspended")
    assert store.account("b").suspended == {} and store.account("b").inactive == ""
    # A new version plays; the suspended one stays suspended (before, connecting any other
    # version lifted it, so the faulty one could come straight back).
    line(store, a, "v2")
    line(store, a, "v1")
    account = store.account("a")
    assert list(account.suspended) == ["v1"] and account.inactive == ""  # v2 is newest
    assert {x.version: bool(x.inactive) for x in store.lines(bot_id=a)} == {
        "v1": True,
        "v2": False,
    }
    with pytest.raises(StoreError, match="no version 'v9'"):
        store.unsuspend("a", "v9")
    with pytest.raises(StoreError, match="no bot named"):
        store.unsuspend("nobody", "v1")
    assert store.unsuspend("a", "v1") is True
    assert store.unsuspend("a", "v1") is False  # nothing left to lift
    assert store.account("a").suspended == {}
    assert store.lines(line_ids=[la])[0].games == 3  # the line goes on


def test_a_lifted_suspension_counts_the_faults_afresh(db_url: str) -> None:
    # The faults before the lift still counted: the next fault suspended the version again
    # ("4 faults in the last 4 matches"), so lifting a suspension was worth one match.
    store = LadderStore(db_url)
    a, b = add(store, "a"), add(store, "b")
    la = suspend_v1(store, a, b)
    lb = line(store, b)
    assert store.unsuspend("a", "v1") is True
    for n in range(3):
        mid = store.new_match("s", "medina-v2", 2, 1000, 10 + n, [la, lb])
        store.started(mid, "s", f"again{n}")
        finish(store, mid, "s", seats((10, 2, "timeout"), (20, 1, "normal")))
        suspended = store.account("a").suspended
        if n < 2:
            assert suspended == {}, (n, suspended)
    assert "3 faults" in suspended["v1"] and "last 3 matches" in suspended["v1"], suspended


def test_a_suspension_names_its_faults(db_url: str) -> None:
    # It said "3 faults (timeouts, illegal actions, crashes, ...)": the owner had to look
    # up which.
    store = LadderStore(db_url)
    a, b = add(store, "a"), add(store, "b")
    la, lb = line(store, a), line(store, b)
    for n, term in enumerate(["crashed", "normal", "timeout", "crashed"]):
        mid = store.new_match("s", "medina-v2", 2, 1000, n, [la, lb])
        store.started(mid, "s", f"m{n}")
        finish(store, mid, "s", seats((10, 2, term), (20, 1, "normal")))
    assert store.account("a").suspended["v1"] == (
        "3 faults in the last 4 matches of version 'v1': 2 crashes, 1 timeout; "
        "connect a new version"
    )


def test_a_version_2_database_keeps_its_suspension_on_the_version(db_url: str) -> None:
    store = LadderStore(db_url)
    a, b = add(store, "a"), add(store, "b")
    line(store, a, "v1")
    line(store, a, "v2")
    line(store, b, "v1")
    # Back to the shape schema version 2 left: the suspension on the account.
    with store.engine.begin() as conn:
        conn.execute(text("ALTER TABLE ladder_lines DROP COLUMN suspended_reason"))
        conn.execute(text("DELETE FROM schema_version WHERE version > 2"))
        conn.execute(
            text(
                "UPDATE ladder_bots SET suspended_reason = 'too many faults', "
                "suspended_version = 'v1' WHERE name = 'a'"
            )
        )
    store.engine.dispose()
    store = LadderStore(db_url)
    assert store.account("a").suspended == {"v1": "too many faults"}
    assert store.account("b").suspended == {}
    with store.engine.connect() as conn:
        assert conn.execute(text("SELECT max(version) FROM schema_version")).scalar() == LATEST
        left = conn.execute(
            text("SELECT count(*) FROM ladder_bots WHERE suspended_reason IS NOT NULL")
        )
        assert left.scalar() == 0


def test_two_servers_storing_at_once_rate_in_one_order(db_url: str) -> None:
    store1, store2 = LadderStore(db_url), LadderStore(db_url)
    ids = [add(store1, f"b{i}") for i in range(6)]
    lines = [line(store1, i) for i in ids]
    jobs: list[tuple[LadderStore, str, int]] = []
    for n in range(24):
        server, store = ("s1", store1) if n % 2 else ("s2", store2)
        picked = [lines[(n + k) % 6] for k in range(3)]
        mid = store.new_match(server, "medina-v2", 3, 1000, n, picked)
        store.started(mid, server, f"m{n}")
        jobs.append((store, server, mid))
    errors: list[BaseException] = []

    def run(part: list[tuple[LadderStore, str, int]]) -> None:
        try:
            for store, server, mid in part:
                out = seats((mid % 7, 1, "normal"), (3, 2, "normal"), (1, 3, "crashed"))
                assert finish(store, mid, server, out, suspend_after=0) is not None
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(jobs[i::3],)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors
    assert sorted(m.rated_seq or 0 for m in store1.matches()) == list(range(1, 25))
    assert compare(store1) == (24, [])


def test_lines_without_a_rated_game_come_after_every_played_line(db_url: str) -> None:
    # A fresh line's ordinal (0) is above most played lines': an account saying hello with
    # new versions and leaving put 99 unplayed rows above every bot that had played.
    store = LadderStore(db_url)
    store.register_server("s1", "x", 30)
    a, b = add(store, "alpha"), add(store, "beta")
    played = [line(store, a), line(store, b)]
    unplayed = line(store, a, "fresh")
    mid = store.new_match("s1", "medina-v2", 2, 1000, 1, played)
    assert store.started(mid, "s1", "m1")
    finish(store, mid, "s1", seats((30, 1, "normal"), (20, 2, "normal")))
    rows = store.lines()
    assert [(x.bot, x.version, x.games) for x in rows] == [
        ("alpha", "v1", 1),
        ("beta", "v1", 1),
        ("alpha", "fresh", 0),
    ]
    # By ordinal alone the fresh line would be above the played loser's.
    loser, fresh = rows[1], rows[2]
    assert fresh.id == unplayed
    assert ratings.ordinal(fresh.mu, fresh.sigma) > ratings.ordinal(loser.mu, loser.sigma)


def test_a_match_only_stored_is_forgotten_and_one_started_is_not(db_url: str) -> None:
    store = LadderStore(db_url)
    store.register_server("s1", "x", 30)
    lines = [line(store, add(store, "alpha")), line(store, add(store, "beta"))]
    mid = store.new_match("s1", "medina-v2", 2, 1000, 1, lines)
    assert not store.discard(mid, "s2")  # another server's to forget, not this one's
    assert store.discard(mid, "s1")
    assert store.counts() == {} and store.matches() == []
    assert not store.discard(mid, "s1")  # gone already
    started = store.new_match("s1", "medina-v2", 2, 1000, 2, lines)
    assert store.started(started, "s1", "m2")
    assert not store.discard(started, "s1")  # it reached the arena: aborted, if anything
    assert store.counts() == {"running": 1}


def test_seat_counts_are_kept_per_size_of_match(db_url: str) -> None:
    # Summed over sizes, seats 0 and 1 filled in every size and the matchmaker's balance
    # (matchmaker._balanced) left a four-player-only bot's seat 3 nearly empty.
    store = LadderStore(db_url)
    a, b, c, d = (add(store, n) for n in "abcd")
    la, lb, lc, ld = (line(store, x) for x in (a, b, c, d))
    store.new_match("s1", "medina-v2", 2, 1000, 1, [la, lb])
    store.new_match("s1", "medina-v2", 2, 1000, 2, [lb, la])
    store.new_match("s1", "medina-v2", 4, 1000, 3, [lc, ld, lb, la])
    store.new_match("s1", "medina-v1", 3, 500, 4, [la, lc, lb])
    assert store.seat_counts([la, lb, ld]) == {
        la: {2: (1, 1), 3: (1, 0, 0), 4: (0, 0, 0, 1)},
        lb: {2: (1, 1), 3: (0, 0, 1), 4: (0, 0, 1, 0)},
        ld: {4: (0, 1, 0, 0)},
    }
    assert store.seat_counts([]) == {}


def test_last_seen_follows_a_version_connected_and_playing_not_its_hello(db_url: str) -> None:
    # A bot playing until 17:28 showed 17:22, its hello: only the hello wrote last_seen.
    store = LadderStore(db_url)
    a, b, c = add(store, "a"), add(store, "b"), add(store, "c")
    la, lb, lc = line(store, a), line(store, b), line(store, c)
    with store.engine.begin() as conn:
        conn.execute(text("UPDATE ladder_lines SET last_seen = 1000"))
    store.register_server("s", "x", 30)
    before = time.time()
    store.renew("s", [a], 30, [la])
    mid = store.new_match("s", "medina-v2", 2, 1000, 1, [lb, lc])
    store.started(mid, "s", "m")
    finish(store, mid, "s", seats((1, 1, "normal"), (0, 2, "normal")))
    seen = {x.bot: x.last_seen for x in store.lines()}
    assert seen["a"] >= before and seen["b"] >= before and seen["c"] >= before, seen
    store.renew("s", [a], 30)  # no line: none seen
    assert store.lines(line_ids=[la])[0].last_seen == seen["a"]
