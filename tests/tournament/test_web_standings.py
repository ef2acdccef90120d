"""The viewer's standings of a tournament database: mean rank, win share, the head-to-head
table, and each bot's rating over its games, as the CLI and the export give them."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from medina.cli.web_cmd import tournament_standings
from medina.storage.tournaments import NewGame, SeatRow, TournamentStore
from medina.tournament.config import BotSpec, TournamentConfig, Variant
from medina.web.pages import bot_page, standings_page

BOTS: list[tuple[str, list[str], str | None, list[tuple[str, str]]]] = [
    ("good", ["g"], None, []),
    ("bad", ["b"], None, []),
    ("crashy", ["c"], None, []),
]


def played_store(tmp_path: Path, config: str = "{}") -> str:
    """Six 2-player games, stored as a runner stores them: good beats bad, crashy forfeits.
    ``config``: the tournament's stored configuration (one this version cannot read by
    default: the standings come from the results)."""
    db = str(tmp_path / "t.db")
    store = TournamentStore(db)
    pairs = [("good", "bad"), ("bad", "good"), ("good", "crashy")] * 2
    schedule = [NewGame(i, i, "medina-v2", 2, 1, 0, seats) for i, seats in enumerate(pairs)]
    store.ensure_tournament("cup", "d", config, BOTS, schedule)
    while (claim := store.claim("w", 60)) is not None:
        winner = "crashy" if "crashy" in claim.seats else "good"  # crashy's play-out "won"
        rows = [
            SeatRow(
                seat,
                bot,
                30 if bot == winner else 20,
                1 if bot == winner else 2,
                "crashed" if bot == "crashy" else "normal",
                0,
                "",
            )
            for seat, bot in enumerate(claim.seats)
        ]
        if "crashy" in claim.seats:  # the referee ranks a forfeit after the seat that played on
            rows = [
                SeatRow(r.seat, r.bot, r.total, 2 if r.bot == "crashy" else 1, r.termination, 0, "")
                for r in rows
            ]
        assert store.finish(claim, match_id=f"m{claim.number}", record_path="", ending="complete",
                            seats=rows)  # fmt: skip
    return db


def test_the_standings_page_shows_mean_rank_win_share_and_head_to_head(tmp_path: Path) -> None:
    st = tournament_standings(played_store(tmp_path), "cup")()
    rows = {r.bot: r for r in st.rows}
    assert rows["good"].mean_rank == 1.0 and rows["good"].win_share == 1.0
    assert rows["crashy"].win_share == 0.0 and rows["crashy"].mean_rank == 2.0
    assert st.head_to_head["good"]["bad"] == (1.0, 4)
    html = standings_page(st)
    assert "<th>mean rank</th>" in html and "<th>win share [95%]</th>" in html
    assert '<td class="mean-rank">1.00</td>' in html
    assert '<td class="win-share">100.0% [' in html
    assert 'id="head-to-head"' in html
    assert '<td data-opponent="bad">100% (4)</td>' in html


def test_a_bot_page_plots_its_rating_over_its_games(tmp_path: Path) -> None:
    st = tournament_standings(played_store(tmp_path), "cup")()
    steps = st.history["good"]
    assert [s.game for s in steps] == [1, 2, 3, 4, 5, 6]  # numbered as everywhere, from 1
    assert all(s.low < s.rating < s.high for s in steps)
    assert steps[-1].rating == next(r.rating for r in st.rows if r.bot == "good")
    html = bot_page("good", st.title, st.games["good"], set(), steps)
    assert '<svg class="rating-plot" id="rating-plot"' in html
    assert html.count("<polyline") == 1 and "Rating over 6 games" in html
    assert "game 1</text>" in html and "game 6</text>" in html
    crashy = bot_page("crashy", st.title, st.games["crashy"], set(), st.history["crashy"])
    assert "Rating over 2 games" in crashy


def test_the_standings_title_names_the_bots_left_out_at_entry_as_the_cli_does(
    tmp_path: Path,
) -> None:
    cfg = TournamentConfig(
        name="cup",
        bots=tuple(BotSpec(name, (name,)) for name, *_ in BOTS),
        variants=(Variant("medina-v2", 2),),
        validation="drop",
        dropped=(("late", "it did not connect"), ("typo", "it exited with code 2")),
    )
    st = tournament_standings(played_store(tmp_path, cfg.to_json()), "cup")()
    assert st.title == "Tournament cup (left out at entry: late, typo)"
    assert "<h2>Tournament cup (left out at entry: late, typo)</h2>" in standings_page(st)
    # none left out: the title as it was
    (tmp_path / "none").mkdir()
    none = played_store(tmp_path / "none", replace(cfg, dropped=()).to_json())
    assert tournament_standings(none, "cup")().title == "Tournament cup"
