"""A tournament's game whose match waits in a busy server's start queue is reported while it
waits (not a silent runner), then plays and is stored as usual."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from bounded import run
from medina.cli.tournament_cmd import _Display
from medina.storage.tournaments import Claim, TournamentStore
from medina.tournament.config import BotSpec, TournamentConfig, Variant
from medina.tournament.runner import Runner, RunOptions, enter
from stall import stalled

pytestmark = pytest.mark.timeout(120)


def busy_tournament(tmp_path: Path) -> tuple[TournamentStore, int]:
    """A one-game tournament of two random bots, stored."""
    cfg = TournamentConfig(
        name="busy",
        bots=(
            BotSpec("a", ("python", "-m", "medina_client", "--bot", "random")),
            BotSpec("b", ("python", "-m", "medina_client", "--bot", "random")),
        ),
        variants=(Variant("medina-v1-2p", 2),),
        games=1,
        paired=False,
    )
    store = TournamentStore(str(tmp_path / "t.db"))
    row, _ = enter(store, cfg)
    return store, row.id


def test_a_game_held_by_a_busy_server_is_reported_then_played(tmp_path: Path) -> None:
    store, tid = busy_tournament(tmp_path)

    async def main() -> list[str]:
        notes: list[str] = []
        async with stalled(tmp_path / "server") as (running, _, room):

            def note(claim: Claim, text: str) -> None:
                assert claim.tournament == "busy" and claim.number == 0
                notes.append(text)
                room.release()  # the match starts

            runner = Runner(
                store,
                RunOptions(server=running.address, records=tmp_path / "logs", tournament_id=tid),
                on_note=note,
            )
            tally = await asyncio.wait_for(runner.run(), 90)
            assert tally.played == 1 and tally.given_back == 0
        return notes

    notes = run(main(), timeout=100)
    assert len(notes) == 1, notes
    assert notes[0].startswith("match ") and notes[0].endswith(
        " waits for the server: queued: its bots are here; it starts when the server has room "
        "(0 ahead)"
    ), notes
    assert store.counts(tid) == {"done": 1}


def test_the_console_shows_the_note_with_the_games_number_unless_quiet(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store, tid = busy_tournament(tmp_path)
    claim = store.claim("w", 60, tid)
    assert claim is not None
    _Display(store, tid, 96, 0, quiet=False).note(claim, "match m waits for the server: queued")
    _Display(store, tid, 96, 0, quiet=True).note(claim, "not shown")
    assert capsys.readouterr().out == "game 1/96: match m waits for the server: queued\n"
