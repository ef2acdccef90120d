"""Tea tiles [v2] (docs/rules.md 5, 7.3, 12): purple claims give them; a tea break ends a turn."""

from __future__ import annotations

from medina.engine import NOBODY, EventKind, GameState, Supply, legal_moves, result

from .support import act, illegal, legal, position

FOUR_PURPLE = {"C3": "p.", "G3": "p.", "K3": "p.", "C8": "p."}


def tea_events(s: GameState) -> list[tuple[int, int]]:
    return [(e.seat, e.count) for e in s.events if e.kind is EventKind.TEA_RECEIVED]


def test_first_three_purple_claims_take_three_two_one() -> None:
    s = position("medina-v2", 4, FOUR_PURPLE)
    s = act(s, "roof C3", "wall B1", "roof G3", "wall A2", "roof K3", "wall Q1", "roof C8")
    assert s.tea == [3, 2, 1, 0]  # the fourth claim gets none
    assert s.tea_pool == 0 and s.purple_claims == 4
    assert tea_events(s) == [(0, 3), (1, 2), (2, 1)]


def test_tea_example_of_section_11_three_players() -> None:
    s = position("medina-v2", 3, {"C3": "p.", "G3": "p.", "K3": "p."})
    s = act(s, "roof C3", "wall B1")  # A (seat 0) claims the first purple palace: 3 tiles
    assert s.tea == [3, 0, 0]
    s = act(s, "neutral G3", "wall A2")  # a neutral rooftop on the second: 2 leave the game
    assert s.tea == [3, 0, 0] and s.tea_pool == 1
    s = act(s, "roof K3")  # B (seat 2) claims the third: 1 tile
    assert s.tea == [3, 0, 1] and s.tea_pool == 0
    assert tea_events(s) == [(0, 3), (NOBODY, 2), (2, 1)]


def test_tea_break_ends_the_turn_after_one_placement() -> None:
    s = position("medina-v2", 4, {"C3": "PR", "H7": "MM"}, tea=[2, 0, 0, 0])
    assert not legal_moves(s).tea
    illegal(s, "tea", "tea-timing")  # D9: at least one placement first
    s = act(s, "merchant H8")
    assert legal_moves(s).tea and legal(s, "tea")
    s = act(s, "tea")
    assert s.to_move == 1 and s.tea == [1, 0, 0, 0]
    assert s.tea_pool == 6 - 3  # spent tiles go back to the box, not to the pool
    assert [e.seat for e in s.events if e.kind is EventKind.TEA_SPENT] == [0]


def test_tea_received_this_turn_may_be_spent_this_turn() -> None:
    s = position("medina-v2", 4, {"C3": "p."})
    s = act(s, "roof C3")
    assert s.tea[0] == 3 and legal(s, "tea")
    s = act(s, "tea")
    assert s.tea[0] == 2 and s.to_move == 1


def test_no_tea_without_a_tile() -> None:
    s = act(position("medina-v2", 4, {"H7": "MM"}), "merchant H8")
    illegal(s, "tea", "no-tea")


def test_no_tea_break_when_nothing_is_left_to_place() -> None:
    one_wall = Supply((0, 0, 0, 0), 0, 0, 0, 0, 0, 1)
    s = position("medina-v2", 4, {"C3": "PR"}, tea=[3, 0, 0, 0], supplies={0: one_wall})
    s = act(s, "wall B1")
    assert s.to_move == 1 and s.tea[0] == 3  # the turn ended: no tea spent


def test_first_turn_of_one_piece_offers_no_tea() -> None:
    s = position("medina-v2", 2, {"C3": "PR"}, tea=[3, 0], turn=0)
    assert s.quota == 1
    s = act(s, "wall B1")
    assert s.to_move == 1


def test_first_edition_has_no_tea() -> None:
    s = act(position("medina-v1", 4, {"H7": "MM"}), "merchant H8")
    err = illegal(s, "tea", "no-tea")
    assert "medina-v1" in err.message


def test_tea_is_worth_nothing_d20() -> None:
    a = position("medina-v2", 4, {"C3": "PR"}, tea=[0, 0, 0, 0])
    b = position("medina-v2", 4, {"C3": "PR"}, tea=[3, 0, 0, 0])
    assert result(a) == result(b)
