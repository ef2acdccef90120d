"""Report forms: games are numbered from 1 in every output, as the progress lines and
`tournament games` number them; each seat carries the rank the standings count."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from medina.boundary.files import write_atomically
from medina.storage.tournaments import GameRow, SeatRow
from medina.tournament.report import (
    game_number,
    games_json,
    games_rows,
    rating_history_rows,
    to_csv,
)
from medina.tournament.standings import GameResult, SeatResult, compute


def stored(number: int) -> GameRow:
    """A finished game as ``TournamentStore.results`` gives it: a double forfeit."""
    return GameRow(
        number=number,
        block=0,
        ruleset="medina-v2",
        players=2,
        seed=1,
        ending="complete",
        match_id=f"m{number}",
        record_path=f"r{number}.jsonl",
        played_by="w",
        attempts=1,
        seats=(
            SeatRow(seat=0, bot="a", total=30, rank=1, termination="crashed", strikes=0, detail=""),
            SeatRow(seat=1, bot="b", total=20, rank=2, termination="timeout", strikes=3, detail=""),
        ),
    )


def test_exports_number_games_from_one() -> None:
    results = [stored(0), stored(1)]
    assert game_number(0) == 1
    rows = games_rows(results)
    assert [r["game"] for r in rows] == [1, 1, 2, 2]
    assert to_csv(rows).splitlines()[1].startswith("1,0,medina-v2,2,")
    data = games_json(results)
    assert [g["game"] for g in data] == [1, 2] and "number" not in data[0]
    assert data[0]["match_id"] == "m0"


def test_games_carry_the_counted_rank_beside_the_match_rank() -> None:
    rows = games_rows([stored(0)])
    assert [(r["rank"], r["counted_rank"]) for r in rows] == [(1, 2), (2, 2)]
    seats = games_json([stored(0)])[0]["seats"]
    assert [(s["rank"], s["counted_rank"]) for s in seats] == [(1, 2), (2, 2)]


def test_rating_history_rows_number_games_from_one() -> None:
    st = compute(
        ["a", "b"],
        [
            GameResult(
                0, 0, "medina-v2", 2, "complete",
                (SeatResult("a", 0, 30, 1, "normal"), SeatResult("b", 1, 20, 2, "normal")),
            )
        ],
    )  # fmt: skip
    rows = rating_history_rows(st)
    assert [(r["game"], r["bot"], r["games"]) for r in rows] == [(1, "a", 1), (1, "b", 1)]
    assert rows[0]["mu"] > rows[1]["mu"]


def test_the_json_export_keeps_the_stored_fields_in_order() -> None:
    game = games_json([stored(3)])[0]
    assert list(game) == [
        "game", "block", "ruleset", "players", "seed", "ending", "match_id", "record_path",
        "played_by", "attempts", "seats",
    ]  # fmt: skip
    assert list(game["seats"][0]) == [
        "seat", "bot", "total", "rank", "termination", "strikes", "detail", "counted_rank",
    ]  # fmt: skip


def test_an_export_through_a_link_replaces_the_file_and_keeps_the_link(tmp_path: Path) -> None:
    (tmp_path / "site").mkdir()
    target = tmp_path / "site" / "standings.csv"
    target.write_text("old\n")
    link = tmp_path / "standings.csv"
    link.symlink_to(target)
    write_atomically(link, "new\n")
    assert link.is_symlink() and target.read_text() == "new\n"
    assert sorted(p.name for p in (tmp_path / "site").iterdir()) == ["standings.csv"]


def test_an_export_to_a_pipe_writes_into_it_rather_than_replacing_it(tmp_path: Path) -> None:
    # -o /dev/stdout, -o /dev/null: renaming a file over them put a regular file in the
    # device's place (as root, /dev/full became a copy of the standings)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        write_atomically(fifo, "place,bot\n")
        assert stat.S_ISFIFO(fifo.lstat().st_mode)
        assert os.read(reader, 100) == b"place,bot\n"
    finally:
        os.close(reader)
    assert [p.name for p in tmp_path.iterdir()] == ["pipe"]  # no temporary file left
