"""Turns (docs/rules.md 5 and 12): quotas, early ends, passes, the end, forced rooftops, limits."""

from __future__ import annotations

from dataclasses import replace

import pytest
from medina.engine import (
    Action,
    ActionKind,
    EventKind,
    GameState,
    IllegalActionError,
    Phase,
    Supply,
    apply_action,
    is_legal,
    legal_actions,
    legal_moves,
    new_game,
    observe,
    squares,
)

from .support import act, illegal, legal, position, sq, squares_named

NOTHING = Supply((0, 0, 0, 0), 0, 0, 0, 0, 0, 0)


def only(walls: int = 0, stables: int = 0, merchants: int = 0, rooftops: int = 0) -> Supply:
    return Supply((0, 0, 0, 0), rooftops, 0, 0, stables, merchants, walls)


def turns(s: GameState, count: int) -> list[tuple[int, int]]:
    """(seat, quota) of the first ``count`` turns, placing walls (or any legal piece)."""
    while sum(e.kind is EventKind.TURN_STARTED for e in s.events) < count:
        moves = legal_moves(s)
        s = act(s, "start H7") if moves.start_merchant else _a_wall(s)
    return [(e.seat, e.count) for e in s.events if e.kind is EventKind.TURN_STARTED][:count]


def _a_wall(s: GameState) -> GameState:
    return apply_action(s, Action(ActionKind.WALL, squares(legal_moves(s).wall)[0]))


@pytest.mark.parametrize(
    ("ruleset", "players", "start", "expected"),
    [
        ("medina-v2", 2, 0, [(0, 1), (1, 2), (0, 2), (1, 2)]),
        ("medina-v2", 2, 1, [(1, 1), (0, 2), (1, 2), (0, 2)]),
        ("medina-v2", 3, 2, [(2, 1), (0, 1), (1, 2), (2, 2)]),
        ("medina-v2", 3, 0, [(0, 1), (1, 1), (2, 2), (0, 2)]),
        ("medina-v2", 4, 0, [(0, 1), (1, 1), (2, 2), (3, 2), (0, 2)]),
        ("medina-v2", 4, 2, [(2, 1), (3, 1), (0, 2), (1, 2), (2, 2)]),
        ("medina-v1", 3, 0, [(0, 2), (1, 2), (2, 2), (0, 2)]),  # after the start merchant
        ("medina-v1", 4, 1, [(1, 2), (2, 2), (3, 2), (0, 2)]),
        # D16: the start merchant is P1's opening turn, then P2 1, P1 2, then 3 each.
        ("medina-v1-2p", 2, 0, [(0, 1), (1, 1), (0, 2), (1, 3), (0, 3)]),
        ("medina-v1-2p", 2, 1, [(1, 1), (0, 1), (1, 2), (0, 3), (1, 3)]),
    ],
)
def test_quotas_and_seat_order(
    ruleset: str, players: int, start: int, expected: list[tuple[int, int]]
) -> None:
    s = new_game(ruleset, players, seed=2, start_seat=start)
    assert turns(s, len(expected)) == expected


def test_v1_start_merchant_then_the_normal_first_turn_d19() -> None:
    s = new_game("medina-v1", 4, seed=2)
    assert s.phase is Phase.START_MERCHANT and s.to_move == 0
    s = act(s, "start F6")
    assert s.phase is Phase.PLACING and s.to_move == 0 and s.quota == 2
    assert s.supply_of(0).merchants == 6  # not from his supply
    assert s.merchants == s.street == 1 << s.rules.geometry.square(5, 5)


def test_v1_2p_start_merchant_is_the_whole_opening_turn() -> None:
    s = act(new_game("medina-v1-2p", 2, seed=2), "start F6")
    assert s.to_move == 1 and s.quota == 1
    assert s.supply_of(0).merchants == 12


@pytest.mark.parametrize(
    ("ruleset", "players", "text", "rule", "named"),
    [
        ("medina-v1", 3, "grey F6", "start-merchant", ()),
        ("medina-v1", 3, "start B5", "start-merchant", ("B5",)),
        ("medina-v1-2p", 2, "start Q12", "start-merchant", ("Q12",)),
    ],
)
def test_start_merchant_errors(
    ruleset: str, players: int, text: str, rule: str, named: tuple[str, ...]
) -> None:
    illegal(new_game(ruleset, players, seed=1), text, rule, *named)


def test_no_start_merchant_in_v2_or_after_it_is_placed() -> None:
    illegal(new_game("medina-v2", 3, seed=1), "start F6", "start-merchant")
    illegal(act(new_game("medina-v1", 3, seed=1), "start F6"), "start H6", "start-merchant")


def test_a_turn_continues_until_the_quota_is_met() -> None:
    s = act(position("medina-v2", 4), "wall B1")
    assert s.to_move == 0 and s.placed == 1
    s = act(s, "wall C1")
    assert s.to_move == 1 and s.placed == 0 and s.quota == 2


def test_a_turn_ends_early_without_a_legal_placement() -> None:
    s = position("medina-v2", 4, supplies={0: only(walls=1)})
    s = act(s, "wall B1")
    assert s.to_move == 1


def test_a_placement_may_leave_no_legal_second_one() -> None:
    merchant_and_stable = Supply((0, 0, 0, 0), 0, 0, 0, 1, 1, 0)
    marks = {"B2": "GR", "B3": "MM", "C3": "MM"}
    s = position("medina-v2", 4, marks, supplies={0: merchant_and_stable})
    assert squares_named(s, legal_moves(s).stable) == {"C2"}
    s = act(s, "merchant C2")  # the only stable site is taken: the turn ends early
    assert s.to_move == 1 and s.supply_of(0).stables == 1


def test_a_seat_with_nothing_legal_passes_and_plays_again_later() -> None:
    s = position("medina-v2", 4, supplies={1: only(stables=1)})  # no building to stand by
    s = act(s, "wall B1", "wall C1")
    assert s.to_move == 2
    assert [e.seat for e in s.events if e.kind is EventKind.PASSED] == [1]
    s = act(s, "grey F6", "wall A2", "wall Q1", "wall R2", "wall B13", "wall A12")
    assert s.to_move == 1  # a stable is legal again next to F6
    assert squares_named(s, legal_moves(s).stable) == {"F5", "F7", "E6", "G6"}


def test_the_last_seat_with_pieces_plays_on_alone() -> None:
    s = position("medina-v2", 4, supplies={0: only(walls=4), 1: NOTHING, 2: NOTHING, 3: NOTHING})
    s = act(s, "wall B1", "wall C1")
    assert s.to_move == 0 and s.phase is Phase.PLACING
    assert [e.seat for e in s.events if e.kind is EventKind.PASSED] == [1, 2, 3]
    s = act(s, "wall D1", "wall E1")
    assert s.over
    assert s.events[-1].kind is EventKind.GAME_OVER


def test_game_ends_when_nobody_has_a_legal_placement_section_12() -> None:
    stuck = only(stables=2)  # no building on the board: stables cannot go anywhere
    supplies = {0: only(walls=1), 1: stuck, 2: stuck, 3: stuck}
    s = act(position("medina-v2", 4, supplies=supplies), "wall B1")
    assert s.over and s.phase is Phase.OVER
    assert len(legal_moves(s)) == 0
    illegal(s, "wall C1", "game-over")


def test_picture_with_nobody_able_to_move_is_over() -> None:
    s = position("medina-v2", 4, supplies=dict.fromkeys(range(4), NOTHING))
    assert s.over


@pytest.mark.parametrize(
    ("action", "rule"),
    [
        (Action(ActionKind.WALL, 10_000), "bad-square"),
        (Action(ActionKind.WALL, -5), "bad-square"),
        (Action(ActionKind.BUILDING, 100, 7), "bad-colour"),
    ],
)
def test_malformed_actions(action: Action, rule: str) -> None:
    with pytest.raises(IllegalActionError) as info:
        apply_action(position("medina-v2", 4), action)
    assert info.value.rule == rule


@pytest.mark.parametrize(("kind", "square"), [(7, "B1"), (5, "F7"), (6, "K5"), (2, "F6")])
def test_a_kind_that_is_a_bare_int_is_refused_not_misplaced(kind: int, square: str) -> None:
    # A wall given as the int 7 once put a merchant on the wall space B1 (and took a wall
    # from the supply); a stable as 5 put a merchant beside the building. RULES 2 and 6.
    s = position("medina-v2", 4, {"F6": "g.", "K4": "MM"})
    action = Action(kind, sq(s, square))  # type: ignore[arg-type]
    assert not is_legal(s, action)
    with pytest.raises(IllegalActionError) as info:
        apply_action(s, action)
    assert info.value.rule == "bad-action"
    assert f"ActionKind.{ActionKind(kind).name}" in info.value.message


# --- forced rooftop [v1, v1-2p] -------------------------------------------------------------

V1_FORCED = {"H7": "MM", "C3": "g.", "K3": "b."}


def no_roofs(players: int, but: int = 0) -> dict[int, Supply]:
    full = Supply((5, 5, 5, 5), 0, 0, 0, 3, 6, 8)
    return {seat: full for seat in range(players) if seat != but}


def test_v1_forced_rooftop_on_the_last_placement_d8() -> None:
    s = position("medina-v1", 4, V1_FORCED, supplies=no_roofs(4))
    assert legal(s, "wall B1")  # the first placement is free
    s = act(s, "wall B1")
    moves = legal_moves(s)
    assert squares_named(s, moves.rooftop) == {"C3", "K3"} and len(moves) == 2
    err = illegal(s, "wall C1", "forced-rooftop", "C1")
    assert "rooftop" in err.message
    s = act(s, "roof K3")
    assert s.to_move == 1


def test_v1_rooftop_first_frees_the_second_placement() -> None:
    s = act(position("medina-v1", 4, V1_FORCED, supplies=no_roofs(4)), "roof C3")
    assert legal(s, "wall B1") and legal(s, "roof K3")


def test_v1_forced_rooftop_needs_every_other_seat_out_of_rooftops() -> None:
    supplies = no_roofs(4)
    supplies[2] = Supply((5, 5, 5, 5), 0b1000, 0, 0, 3, 6, 8)  # blue keeps one rooftop
    s = act(position("medina-v1", 4, V1_FORCED, supplies=supplies), "wall B1")
    assert legal(s, "wall C1")


def test_v1_forced_rooftop_only_while_one_is_legal() -> None:
    # Red holds only a purple rooftop and no purple palace stands; the others hold none, so
    # every other colour is exhausted.
    purple_only = Supply((0, 5, 0, 0), 0, 0, 0, 3, 6, 8)
    supplies = dict.fromkeys(range(4), purple_only) | {
        0: Supply((0, 5, 0, 0), 0b0010, 0, 0, 3, 6, 8)
    }
    s = position("medina-v1", 4, {"H7": "MM", "C3": "g."}, supplies=supplies)
    s = act(s, "wall B1")
    assert legal(s, "wall C1")


def test_v2_has_no_forced_rooftop_d8() -> None:
    s = position("medina-v2", 4, {"C3": "g."}, supplies=no_roofs(4))
    assert legal(act(s, "wall B1"), "wall C1")


def test_v1_2p_forced_rooftop_and_blocking_satisfies_it() -> None:
    none = Supply((9, 9, 9, 9), 0, 0, 0, 6, 12, 16)
    s = position("medina-v1-2p", 2, {"H7": "MM", "C3": "g.", "K3": "b."}, supplies={1: none})
    s = act(s, "wall B1", "wall C1")
    assert squares_named(s, legal_moves(s).blocking) == {"C3", "K3"}
    illegal(s, "wall D1", "forced-rooftop", "D1")
    s = act(s, "block C3")
    assert s.to_move == 1


def test_v1_2p_forced_rooftop_when_the_opponent_still_holds_blocking_rooftops() -> None:
    only_blocking = Supply((9, 9, 9, 9), 0, 0, 0b0001, 6, 12, 16)
    s = position(
        "medina-v1-2p", 2, {"H7": "MM", "C3": "g."}, supplies={1: only_blocking}
    )  # seat 1 has a rooftop left: no trigger
    assert legal(act(s, "wall B1", "wall C1"), "wall D1")


# --- v1-2p per-turn limits and running low --------------------------------------------------


def test_v1_2p_one_building_per_colour_per_turn() -> None:
    s = position("medina-v1-2p", 2, {"H7": "MM"})
    s = act(s, "grey C3")
    illegal(s, "grey C4", "turn-limit")
    assert legal_moves(s).buildings[0] == 0
    s = act(s, "brown K4", "purple C10")
    assert s.to_move == 1


def test_v1_2p_walls_stables_and_merchants_are_free() -> None:
    s = act(position("medina-v1-2p", 2, {"H7": "MM"}), "wall B1", "wall C1", "wall D1")
    assert s.to_move == 1


def test_v1_2p_running_low_reveals_the_supply() -> None:
    low = Supply((2, 0, 0, 0), 0, 0, 0, 0, 0, 0)  # one colour only: at most 1 a turn
    s = position("medina-v1-2p", 2, {"H7": "MM"}, supplies={1: low})
    assert not s.revealed
    s = act(s, "wall B1", "wall C1", "wall D1")
    assert s.to_move == 1 and s.revealed == 0b10
    revealed = [e for e in s.events if e.kind is EventKind.SUPPLY_REVEALED]
    assert [(e.seat, e.supply) for e in revealed] == [(1, low)]
    assert observe(s, 0).seats[1].supply == low
    s = act(s, "grey C3")  # he places as many as he legally can
    assert s.to_move == 0


def test_v1_2p_enough_pieces_stay_hidden() -> None:
    enough = Supply((1, 1, 0, 0), 0, 0, 0, 0, 1, 0)  # grey, purple, merchant: 3 a turn
    s = position("medina-v1-2p", 2, {"H7": "MM"}, supplies={1: enough})
    s = act(s, "wall B1", "wall C1", "wall D1")
    assert s.to_move == 1 and not s.revealed
    assert observe(s, 0).seats[1].supply is None


# --- rare turn situations (rules audit) -----------------------------------------------------


def test_a_seat_out_of_pieces_plays_again_after_receiving_tower_merchants() -> None:
    # Section 5 (a passing seat plays again once it can) with 7.2 [v2]: red has placed
    # everything; yellow's stable joins red's palace to tower 1's arm, so red takes the
    # tile and its 3 merchants, and red's turn comes round again.
    marks = {"B1": "##", "C1": "##", "D1": "##", "D3": "GR", "E3": "gR"}
    s = position("medina-v2", 4, marks, to_move=1, supplies={0: NOTHING})
    assert observe(s, 1).seats[0].out_of_pieces
    s = act(s, "stable D2")
    assert s.tower_tiles[0] == 0 and s.supply_of(0) == only(merchants=3)
    assert not observe(s, 1).seats[0].out_of_pieces
    s = act(s, "wall R2", "wall R3", "wall R4", "wall R5", "wall R6")
    assert (s.to_move, s.quota, s.placed) == (0, 2, 0)
    assert not [e for e in s.events if e.kind is EventKind.PASSED]
    assert legal_moves(s).merchant


def test_tower_merchants_received_mid_turn_keep_the_turn_going() -> None:
    # Section 5 "keep placing": red's only piece is a rooftop; the claim brings tower 1's
    # merchants, which are then a legal second placement of the same turn.
    marks = {"B1": "##", "C1": "##", "C2": "g."}
    s = position("medina-v2", 4, marks, supplies={0: only(rooftops=0b0001)})
    s = act(s, "roof C2")
    assert (s.to_move, s.placed) == (0, 1) and s.supply_of(0).merchants == 3
    s = act(s, "merchant H7")
    assert s.to_move == 1


def test_colour_exhaustion_mid_turn_can_end_the_turn_early() -> None:
    # 6.2: red's claim completes grey; his grey buildings leave the game and nothing is left.
    marks = {"G3": "GY", "K3": "GB", "C8": "GG", "M8": "g."}
    s = position("medina-v2", 4, marks, supplies={0: Supply((5, 0, 0, 0), 0b0001, 0, 0, 0, 0, 0)})
    s = act(s, "roof M8")
    assert s.exhausted == 0b0001 and s.supply_of(0) == NOTHING
    assert s.to_move == 1 and s.placed == 0


@pytest.mark.parametrize("players", [3, 4])
def test_v1_forced_rooftop_with_every_player_count(players: int) -> None:
    s = act(position("medina-v1", players, V1_FORCED, supplies=no_roofs(players)), "wall B1")
    assert squares_named(s, legal_moves(s).rooftop) == {"C3", "K3"} and len(legal_moves(s)) == 2


def test_v1_forced_rooftop_on_a_palace_started_this_turn() -> None:
    # Section 12: the trigger and "a rooftop is legal" are judged at every decision.
    s = position("medina-v1", 4, {"H7": "MM"}, supplies=no_roofs(4))
    assert not legal_moves(s).rooftop
    s = act(s, "grey C3")
    assert squares_named(s, legal_moves(s).rooftop) == {"C3"} and len(legal_moves(s)) == 1
    illegal(s, "wall B1", "forced-rooftop", "B1")


def test_v1_2p_forced_rooftop_after_the_opponents_last_rooftop_is_removed() -> None:
    # [v1-2p] "no rooftops left (placed or removed)": blue holds only his green rooftop for
    # grey; yellow's red rooftop on grey removes it, and from then on yellow is forced.
    only_green_grey = Supply((9, 9, 9, 9), 0, 0, 0b0001, 6, 12, 16)
    marks = {"H9": "MM", "C3": "GY", "K3": "g.", "K8": "b."}
    s = position("medina-v1-2p", 2, marks, supplies={1: only_green_grey})
    assert legal(act(s, "wall B1", "wall C1"), "wall D1")  # not forced yet
    s = act(s, "block K3")
    assert [(e.seat, e.colour) for e in s.events if e.kind is EventKind.ROOFTOP_REMOVED] == [(1, 0)]
    s = act(s, "wall B1", "wall C1")  # his rooftop this turn satisfied the rule
    s = act(s, "wall R2", "wall R3", "wall R4")
    assert s.to_move == 0
    s = act(s, "wall D1", "wall E1")
    assert squares_named(s, legal_moves(s).rooftop) == {"K8"}
    illegal(s, "wall F1", "forced-rooftop", "F1")


def test_v1_2p_limits_apply_to_the_two_piece_opening_turn() -> None:
    # [v1-2p] the per-turn limits hold on the 2-piece turn too (the variant: "also when
    # placing 2").
    s = act(new_game("medina-v1-2p", 2, seed=3), "start H7", "wall B1")
    assert (s.to_move, s.quota) == (0, 2)
    s = act(s, "grey C3")
    illegal(s, "grey C4", "turn-limit")
    s = act(s, "roof C3")
    assert s.to_move == 1


def test_v1_2p_a_passing_seat_is_revealed_only_when_its_turn_comes() -> None:
    # docs/rules.md "v1-2p running-low reveal": the check runs when a turn begins, so a
    # seat that passes shows nothing until it can place again.
    s = position("medina-v1-2p", 2, {"H9": "MM"}, supplies={1: only(stables=1, rooftops=0b1000)})
    s = act(s, "wall B1", "wall C1", "wall D1")
    assert s.to_move == 0 and [e.seat for e in s.events if e.kind is EventKind.PASSED] == [1]
    assert not s.revealed
    s = act(s, "grey F6", "wall E1", "wall F1")
    assert s.to_move == 1 and s.revealed == 0b10
    kinds = [e.kind for e in s.events[-2:]]
    assert kinds == [EventKind.TURN_STARTED, EventKind.SUPPLY_REVEALED]


def test_a_square_or_colour_that_is_a_bool_is_refused() -> None:
    # True is 1 to Python: a building of colour True was placed as colour 1.
    s = position("medina-v2", 4)
    building = next(a for a in legal_actions(s) if a.kind is ActionKind.BUILDING and a.colour == 1)
    for bad in (replace(building, colour=True), replace(building, square=bool(building.square))):
        assert not is_legal(s, bad)
        with pytest.raises(IllegalActionError) as info:
            apply_action(s, bad)
        assert info.value.rule == "bad-action" and "not an int" in info.value.message
