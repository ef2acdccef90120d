"""records.catalog: what a server finds in its records directory at start."""

from __future__ import annotations

import logging
import os
import shutil
import tracemalloc
from pathlib import Path

import pytest
from medina.engine import apply_action, new_game, result
from medina.records.catalog import UNFINISHED, Catalog, StoredState, inspect, peek_state, scan
from medina.records.reader import read_record
from medina.records.verify import verify_record
from medina.records.writer import RecordWriter
from medina.rpc.single import host
from medina.rpc.single.host import Arena
from medina.v1 import match_pb2
from medina.wire.records import decision_from_proto

from .test_verify import engine_record


def _cut_outcome(path: Path) -> list[str]:
    """Remove the outcome line, as if the server died before writing it; returns the lines."""
    lines = path.read_text().splitlines(keepends=True)
    assert lines[-1].startswith('{"outcome"')
    path.write_text("".join(lines[:-1]))
    return lines[:-1]


def test_finished_and_aborted_records_are_judged_from_their_outcome(tmp_path: Path) -> None:
    done = engine_record(tmp_path, "medina-v2", 3, 1)
    aborted = engine_record(tmp_path, "medina-v1", 4, 2, stop_after=25)
    found = {m.match_id: m for m in scan(tmp_path)}
    m = found[done.stem]
    assert (
        m.state is StoredState.FINISHED
        and m.result is not None
        and m.result.ending == match_pb2.MATCH_ENDING_COMPLETE
    )
    decisions = sum(1 for line in done.read_text().splitlines() if line.startswith('{"decision"'))
    assert m.decisions == decisions
    assert m.config is not None and m.config.players == 3
    a = found[aborted.stem]
    assert a.state is StoredState.ABORTED and a.decisions == 25
    assert a.result is not None and a.result.ending != match_pb2.MATCH_ENDING_COMPLETE


def test_an_interrupted_record_is_scored_where_it_stopped(tmp_path: Path) -> None:
    path = engine_record(tmp_path, "medina-v2", 4, 3, stop_after=30)
    lines = _cut_outcome(path)
    # The ABORTED incident was the referee's; a crash leaves none: drop it too.
    assert '"incident"' in lines[-1]
    path.write_text("".join(lines[:-1]))
    m = inspect(path)
    assert m.state is StoredState.INTERRUPTED and m.decisions == 30
    assert m.note.startswith(UNFINISHED) and "30 decisions" in m.note
    assert m.result is not None and m.result.ending != match_pb2.MATCH_ENDING_COMPLETE
    assert all(s.termination == match_pb2.TERMINATION_ABORTED for s in m.result.seats)
    # The scores are the board's after the 30 recorded decisions.
    s = new_game("medina-v2", 4, 3, start_seat=3)
    record = read_record(path, allow_truncated=True)
    for _n, d in record.decisions:
        s = apply_action(s, decision_from_proto(d, s.rules.geometry).action)
    assert [x.total for x in m.result.seats] == list(result(s).totals)
    assert verify_record(record).ok


def test_a_line_cut_mid_write_is_noted_and_the_rest_is_kept(tmp_path: Path) -> None:
    path = engine_record(tmp_path, "medina-v1-2p", 2, 4, stop_after=12)
    lines = _cut_outcome(path)
    # Drop the referee's ABORTED incident and cut the 12th decision in half.
    assert '"incident"' in lines[-1] and lines[-2].startswith('{"decision"')
    path.write_text("".join(lines[:-2]) + lines[-2][: len(lines[-2]) // 2])
    m = inspect(path)
    assert m.state is StoredState.INTERRUPTED
    assert "cut off mid-write" in m.note
    assert m.decisions == 11  # the half-written 12th decision is not counted
    report = verify_record(read_record(path, allow_truncated=True))
    assert report.ok and report.decisions == 11, report.summary()


def test_an_empty_record_is_a_match_that_has_not_started(tmp_path: Path) -> None:
    # A server writes the header when the match starts: the match may be waiting for its bots.
    (tmp_path / "abc.jsonl").write_bytes(b"")
    m = inspect(tmp_path / "abc.jsonl")
    assert m.state is StoredState.INTERRUPTED and m.header is None and m.result is None
    assert (
        m.note
        == f"{UNFINISHED}; the record is empty (no header: the match has not started, or never did)"
    )


def test_garbage_is_listed_as_unreadable_not_raised(tmp_path: Path) -> None:
    (tmp_path / "junk.jsonl").write_bytes(b"\x00\xff not a record\n")
    (tmp_path / "notes.txt").write_text("ignored: not a record name\n")
    found = scan(tmp_path)
    assert [m.match_id for m in found] == ["junk"]
    assert found[0].state is StoredState.UNREADABLE and "unreadable" in found[0].note


def test_scan_is_oldest_first_and_tolerates_a_missing_directory(tmp_path: Path) -> None:
    assert scan(tmp_path / "nowhere") == []
    old = engine_record(tmp_path, "medina-v2", 2, 5)
    new = engine_record(tmp_path, "medina-v2", 2, 6)
    os.utime(old, (1_000_000, 1_000_000))
    os.utime(new, (2_000_000, 2_000_000))
    assert [m.match_id for m in scan(tmp_path)] == [old.stem, new.stem]


def test_a_catalog_keeps_entries_and_reads_the_rest_back_from_the_records(
    tmp_path: Path,
) -> None:
    paths = [engine_record(tmp_path, "medina-v2", 2, seed, stop_after=8) for seed in (1, 2, 3)]
    shelf = Catalog(tmp_path, cache_size=1)
    assert shelf.load() == []  # each judged from its outcome line: none read in full
    assert len(shelf) == 3 and all(p.stem in shelf for p in paths)
    assert {e.match_id: e.state for e in shelf.entries()} == {
        p.stem: StoredState.ABORTED for p in paths
    }
    # Only cache_size full inspections stay in memory; the others are read back alike.
    for path in paths:
        again = shelf.get(path.stem)
        assert again is not None and again == inspect(path)
    assert shelf.get("no-such-match") is None
    # A record that went away is dropped, not raised.
    paths[0].unlink()
    assert shelf.get(paths[0].stem) is None and paths[0].stem not in shelf
    # A record added later (a match that left memory) is listed with its state.
    later = engine_record(tmp_path, "medina-v2", 2, 9)
    shelf.add(inspect(later))
    entry = shelf.entry(later.stem)
    assert entry is not None and entry.state is StoredState.FINISHED


def test_the_newest_records_come_in_listing_order_with_counts_per_state(
    tmp_path: Path,
) -> None:
    # Two finished and three aborted records with distinct file times, two of them equal
    # (the id orders those); pages are asked for as ListMatches does: up to a limit, before
    # the last key shown, in some states.
    finished = [engine_record(tmp_path, "medina-v2", 2, seed) for seed in (1, 2)]
    aborted = [engine_record(tmp_path, "medina-v2", 2, s, stop_after=6) for s in (3, 4, 5)]
    times = dict(zip([*finished, *aborted], (5, 1, 4, 2, 4), strict=True))
    for path, t in times.items():
        os.utime(path, (1_000_000 + t, 1_000_000 + t))
    shelf = Catalog(tmp_path, cache_size=1)
    shelf.load()
    expected = sorted(times, key=lambda p: (times[p], p.stem), reverse=True)
    assert [e.match_id for e in shelf.newest(10)] == [p.stem for p in expected]
    first = shelf.newest(2)
    after = shelf.newest(10, (first[-1].mtime, first[-1].match_id))
    assert [e.match_id for e in first + after] == [p.stem for p in expected]
    only = shelf.newest(10, states={StoredState.ABORTED})
    assert [e.match_id for e in only] == [p.stem for p in expected if p in aborted]
    assert shelf.count() == 5 and shelf.count({StoredState.ABORTED}) == 3
    assert shelf.count({StoredState.FINISHED, StoredState.ABANDONED}) == 2
    # A record noted later with an older time is placed by its time; one noted again moves.
    late = engine_record(tmp_path, "medina-v2", 2, 9)
    shelf.note(late.stem, StoredState.FINISHED, 1_000_000 + 3)
    assert [e.match_id for e in shelf.newest(10)].index(late.stem) == 3
    shelf.note(late.stem, StoredState.ABORTED, 1_000_000 + 9)
    assert shelf.newest(1)[0].match_id == late.stem and shelf.count() == 6
    assert shelf.count({StoredState.ABORTED}) == 4
    # One that went away leaves the order and the counts when it is next read.
    oldest = expected[-1]  # not the one record the cache holds: it is read again
    oldest.unlink()
    assert shelf.get(oldest.stem) is None
    assert oldest.stem not in [e.match_id for e in shelf.newest(10)]
    assert shelf.count() == 5 and shelf.count({StoredState.FINISHED}) == 1


V1 = sorted((Path(__file__).parent / "v1").glob("*.jsonl"))


def test_the_end_of_a_record_tells_its_state_as_reading_it_in_full_does(tmp_path: Path) -> None:
    done = engine_record(tmp_path, "medina-v2", 3, 1)
    aborted = engine_record(tmp_path, "medina-v1", 4, 2, stop_after=25)
    cut = engine_record(tmp_path, "medina-v2", 2, 4, stop_after=10)
    _cut_outcome(cut)
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_text('{"outcome": not json}\n{"outcome":\n')
    old = tmp_path / V1[0].name
    shutil.copyfile(V1[0], old)
    assert peek_state(done) is StoredState.FINISHED is inspect(done).state
    assert peek_state(aborted) is StoredState.ABORTED is inspect(aborted).state
    # Not told by the last line: read in full when the server starts.
    for path in (cut, garbage, old):
        assert peek_state(path) is None
    shelf = Catalog(tmp_path)
    inspected = shelf.load()
    assert {m.match_id for m in inspected} == {cut.stem, garbage.stem, old.stem}
    assert inspected == sorted(inspected, key=lambda m: (m.mtime, m.match_id))  # oldest first
    states = {e.match_id: e.state for e in shelf.entries()}
    assert states == {m.match_id: m.state for m in scan(tmp_path)}
    assert states[cut.stem] is StoredState.INTERRUPTED
    assert states[garbage.stem] is StoredState.UNREADABLE
    assert states[old.stem] is StoredState.FINISHED


@pytest.mark.parametrize("tail", [1, 64])
def test_a_last_line_longer_than_the_tail_read_is_left_to_the_full_read(
    tmp_path: Path, tail: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    import medina.records.catalog as catalog

    done = engine_record(tmp_path, "medina-v2", 4, 7)
    monkeypatch.setattr(catalog, "_TAIL_BYTES", tail)
    assert peek_state(done) is None
    shelf = Catalog(tmp_path)
    assert [m.match_id for m in shelf.load()] == [done.stem]
    entry = shelf.entry(done.stem)
    assert entry is not None and entry.state is StoredState.FINISHED


def test_records_are_read_without_changing_the_catalog_then_accepted(tmp_path: Path) -> None:
    # A server reads a page's records on a worker thread (read: nothing changes), then
    # takes them on its event loop (accept): cached, corrected, or dropped when gone.
    kept, replaced, gone = (
        engine_record(tmp_path, "medina-v2", 2, seed, stop_after=8) for seed in (1, 2, 3)
    )
    shelf = Catalog(tmp_path, cache_size=0)
    shelf.load()
    assert shelf.uncached([kept.stem, "no-such-match"]) == [kept.stem]
    # Finished now, behind the server's back: another finished record copied over it.
    finished = engine_record(tmp_path / "elsewhere", "medina-v2", 2, 2)
    shutil.copyfile(finished, replaced)
    gone.unlink()
    found = shelf.read([kept.stem, replaced.stem, gone.stem])
    assert found[gone.stem] is None and gone.stem in shelf  # read changed nothing
    entry = shelf.entry(replaced.stem)
    assert entry is not None and entry.state is StoredState.ABORTED
    shelf.accept(found)
    assert gone.stem not in shelf and shelf.count() == 2
    entry = shelf.entry(replaced.stem)
    assert entry is not None and entry.state is StoredState.FINISHED
    assert shelf.count({StoredState.FINISHED}) == 1
    # With no cache at all, get still answers (from the record, each time).
    again = shelf.get(kept.stem)
    assert again is not None and again.state is StoredState.ABORTED


def test_the_catalog_keeps_no_python_object_per_record(tmp_path: Path) -> None:
    # A standing server notes every match it finishes: 20,000 notes leave Python's heap as
    # it was (the entries are in the index, whose pages SQLite keeps in its own bounded
    # cache), where an object per record would hold megabytes (~250 bytes each).
    shelf = Catalog(tmp_path)
    shelf.load()
    states = list(StoredState)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for i in range(20_000):
            shelf.note(f"m{i:06d}", states[i % len(states)], 1_000_000.0 + i // 3)
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 200_000, f"{grown:,} bytes of Python objects for 20,000 records"
    assert shelf.count() == 20_000 and shelf.count({StoredState.FINISHED}) == 4_000
    # Paged through to the end, newest first, as ListMatches asks: every record once.
    seen: list[str] = []
    before_key: tuple[float, str] | None = None
    while page := shelf.newest(1_000, before_key, {StoredState.FINISHED}):
        seen += [e.match_id for e in page]
        before_key = (page[-1].mtime, page[-1].match_id)
    expected = [f"m{i:06d}" for i in range(20_000) if i % len(states) == 0]
    assert seen == sorted(expected, key=lambda m: (1_000_000 + int(m[1:]) // 3, m), reverse=True)


def test_a_server_start_warns_once_of_its_interrupted_records(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # Every start read the same old records again and warned once per interrupted one.
    for seed in (1, 2, 3):
        _cut_outcome(engine_record(tmp_path, "medina-v2", 2, seed, stop_after=10))
    engine_record(tmp_path, "medina-v2", 2, 4)  # finished
    caplog.set_level(logging.INFO, logger="medina.rpc")
    Arena(tmp_path).load_records()
    warned = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert warned == [
        f"3 match record(s) in {tmp_path} were interrupted (a server stopped during the "
        f"match): `medina-arena replay list {tmp_path}` lists them"
    ]
    each = [r for r in caplog.records if "was interrupted (record" in r.getMessage()]
    assert len(each) == 3 and all(r.levelno == logging.INFO for r in each)


def test_a_record_another_server_is_writing_is_not_called_interrupted(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # A second tournament runner sharing the records warned that the first one's matches in
    # play were interrupted.
    _cut_outcome(engine_record(tmp_path, "medina-v2", 2, 1, stop_after=10))
    played = engine_record(tmp_path, "medina-v2", 2, 2, stop_after=10)
    lines = _cut_outcome(played)
    played.unlink()
    caplog.set_level(logging.INFO, logger="medina.rpc")
    with RecordWriter(tmp_path, "live") as live:  # a match in play elsewhere
        for line in lines:  # what its server wrote so far
            live._write_line(line.encode())
        Arena(tmp_path).load_records()
    warned = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert [w.split(" were")[0] for w in warned] == [f"1 match record(s) in {tmp_path}"]
    assert any(
        "match live is being played by another server" in r.getMessage() for r in caplog.records
    )
    caplog.clear()
    Arena(tmp_path).load_records()  # its writer is gone: interrupted now
    warned = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert [w.split(" were")[0] for w in warned] == [f"2 match record(s) in {tmp_path}"]


def test_a_record_whose_match_ends_as_the_server_starts_is_not_called_interrupted(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A second server starting beside a live one read a record before its outcome line,
    # and looked at its lock after its writer had finished and let go: a match that ended
    # normally was warned of as interrupted.
    played = engine_record(tmp_path, "medina-v2", 2, 2)
    lines = played.read_text().splitlines(keepends=True)
    played.unlink()
    live = RecordWriter(tmp_path, "live")
    for line in lines[:-1]:  # what its server wrote before the scan
        live._write_line(line.encode())
    from medina.records.writer import being_written as real

    ended: list[Path] = []

    def ends_meanwhile(path: Path) -> bool:
        if path.stem == "live" and not ended:
            live._write_line(lines[-1].encode())  # the outcome, then the lock let go
            live.close()
            ended.append(path)
        return real(path)

    monkeypatch.setattr(host, "being_written", ends_meanwhile)
    caplog.set_level(logging.INFO, logger="medina.rpc")
    arena = Arena(tmp_path)
    arena.load_records()
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []
    assert arena.stored.count({StoredState.FINISHED}) == 1
