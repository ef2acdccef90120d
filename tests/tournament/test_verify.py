"""``medina-arena tournament verify`` on a real tournament store (SQLite) and real records:
the records that no stored result names, in the tournament's own records directory too."""

from __future__ import annotations

from pathlib import Path

import pytest
from bounded import run
from medina.cli import main
from medina.records.writer import RecordWriter
from medina.referee.local import local_match, random_policy
from medina.storage.tournaments import Claim, SeatRow, TournamentStore
from medina.tournament.config import TournamentConfig, Variant

from .cups import cup_file

pytestmark = pytest.mark.timeout(120)


def play(store: TournamentStore, claim: Claim, records: Path, *, cut: bool) -> Path:
    """Play ``claim``'s game in process (random moves) into ``records`` as the runner's
    server would record it; ``cut``: the record loses its outcome line, as a runner killed
    mid-game leaves it, and the game is given back, else its result is stored."""
    cfg = TournamentConfig.from_json(store.tournament(claim.tournament).config)
    settings = cfg.settings(Variant(claim.ruleset, claim.players), claim.seed, claim.seats)
    match_id = f"g{claim.number}-a{claim.attempt}"
    writer = RecordWriter(records, match_id)
    policies = [random_policy(claim.seed * 31 + s) for s in range(claim.players)]
    try:
        outcome = run(local_match(match_id, settings, policies, writer).run())
    finally:
        writer.close()
    if cut:
        lines = writer.path.read_text().splitlines(keepends=True)
        writer.path.write_text("".join(lines[:-1]))
        assert store.release(claim, "interrupted: its runner is gone; replayed from scratch")
        return writer.path
    seats = [
        SeatRow(s.seat, claim.seats[s.seat], s.total, s.rank, s.termination.name.lower(), 0, "")
        for s in outcome.seats
    ]
    ending = "complete" if outcome.complete else "aborted"
    assert store.finish(
        claim, match_id=match_id, record_path=str(writer.path), ending=ending, seats=seats
    )
    return writer.path


def test_records_no_result_names_are_found_before_the_first_result_and_listed_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    cup_file(tmp_path)
    assert main(["tournament", "create", "cup.toml"]) == 0
    records = Path("tournaments/cup/records")  # where `tournament run cup.toml` writes
    store = TournamentStore("tournaments/cup/tournament.db")
    tid = store.tournament("cup").id
    first = store.claim("w1", 60, tid)
    assert first is not None
    play(store, first, records, cut=True)
    capsys.readouterr()
    # Killed before its first result was stored: no result points at the directory.
    assert main(["tournament", "verify", "cup.toml"]) == 0
    out = capsys.readouterr().out
    note = "1 unfinished record(s) of attempts given back; their games are pending or were replayed"
    assert f"note: {records}: {note}\n" in out, out
    # A result stored with the absolute path (as the runner's server writes it): one
    # directory, looked into once, named as the result names it.
    again = store.claim("w2", 60, tid)
    assert again is not None and again.number == first.number
    kept = play(store, again, records.absolute(), cut=False)
    assert main(["tournament", "verify", "cup.toml"]) == 0
    out = capsys.readouterr().out
    assert out.count("note: ") == 1 and f"note: {kept.parent}: {note}\n" in out, out
    assert "OK: the schedule is the file's, and 1 results match their records" in out
