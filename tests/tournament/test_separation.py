"""--until-separated on stored results: the stop comes after the first whole block at which the
standings separated, later games are cancelled and not counted."""

from __future__ import annotations

from medina.storage.tournaments import SeatRow, TournamentStore
from medina.tournament.config import BotSpec, TournamentConfig, Variant
from medina.tournament.runner import Runner, RunOptions, enter, separated_block, standings


def test_a_clear_order_stops_the_tournament_early(db_url: str) -> None:
    cfg = TournamentConfig(
        name="sep",
        bots=(BotSpec("a", ("x",)), BotSpec("b", ("x",))),
        variants=(Variant("medina-v1-2p", 2),),
        games=200,
        until_separated=True,
        min_games=10,
    )
    store = TournamentStore(db_url)
    row, _ = enter(store, cfg)
    runner = Runner(store, RunOptions(tournament_id=row.id))
    stopped_at = None
    while (claim := store.claim("w", 60, row.id)) is not None:
        seats = [
            SeatRow(s, bot, 30 if bot == "a" else 10, 1 if bot == "a" else 2, "normal", 0, "")
            for s, bot in enumerate(claim.seats)
        ]
        assert store.finish(
            claim, match_id=f"m{claim.number}", record_path="", ending="complete", seats=seats
        )
        if separated_block(store, row.id, cfg) is not None and stopped_at is None:
            stopped_at = claim.block
        runner._after_game(row.id)  # what the runner does after each stored game
    final = store.tournament("sep")
    assert final.status == "separated" and final.stop_block == stopped_at
    assert stopped_at is not None and 5 <= stopped_at < 99
    counts = store.counts(row.id)
    assert counts["done"] == 2 * (stopped_at + 1) and counts["cancelled"] == 200 - counts["done"]
    st = standings(store, row.id)
    assert [r.bot for r in st.rows] == ["a", "b"] and st.games == counts["done"]
