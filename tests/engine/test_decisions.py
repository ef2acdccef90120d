"""One test (or more) per decision D1-D20 of docs/rules.md section 10, named by its number."""

from __future__ import annotations

from medina.engine import (
    NOBODY,
    EventKind,
    Phase,
    Supply,
    legal_moves,
    new_game,
    result,
    square_name,
)
from medina.engine.geometry import TOWER_NUMBERS

from .support import act, illegal, legal, position, squares_named

NOTHING = Supply((0, 0, 0, 0), 0, 0, 0, 0, 0, 0)


def test_d1_well_bonus_squares_are_two_steps_straight_out() -> None:
    s = position("medina-v2", 4, well="H7")
    assert squares_named(s, s.well_bonus) == {"H5", "H9", "F7", "J7"}
    assert squares_named(s, s.well_ring) == {
        f"{c}{r}" for c in "GHI" for r in (6, 7, 8)
    }  # one step (diagonals too) is the well ring, where nothing may be built
    diagonal = position("medina-v2", 4, {"F5": "GR"}, well="H7")
    assert result(diagonal).breakdowns[0].well_bonus == 0


def test_d2_well_bonus_is_per_building_or_stable() -> None:
    marks = {"F7": "PR", "F6": "pR", "F5": "pR", "G5": "pR", "H5": "pR"}
    s = position("medina-v2", 4, marks, well="H7")
    palace = result(s).breakdowns[0].palaces[0]
    assert palace.well_bonus == 8 and palace.total == 5 + 8
    s = position("medina-v2", 4, {"H4": "GR", "H5": "sR"}, well="H7")
    assert result(s).breakdowns[0].well_bonus == 4


def test_d3_well_and_start_merchant_are_inner_city_and_apart() -> None:
    inner = new_game("medina-v2", 4, 0).rules.geometry.inner
    seen = set()
    for seed in range(300):
        s = new_game("medina-v2", 4, seed)
        assert inner >> s.well & 1 and s.merchants & inner
        assert not s.merchants & (1 << s.well)
        seen.add(square_name(s.rules.geometry, s.well))
    assert {"C3", "P11"} & seen  # squares one step from the edge ring are drawn too


def test_d4_pass_when_nothing_is_legal_and_end_when_nobody_can_place() -> None:
    s = position("medina-v2", 3, supplies={1: NOTHING, 2: Supply((0, 0, 0, 0), 0, 0, 0, 0, 0, 1)})
    s = act(s, "wall B1", "wall C1")
    assert s.to_move == 2 and [e.seat for e in s.events if e.kind is EventKind.PASSED] == [1]
    s = act(s, "wall D1")
    assert s.to_move == 0 and not s.over
    s = position(
        "medina-v2",
        3,
        supplies=dict.fromkeys(range(3), NOTHING) | {0: Supply((0, 0, 0, 0), 0, 0, 0, 0, 0, 1)},
    )
    assert act(s, "wall B1").over


def test_d5_a_palace_does_not_grow_through_its_stable() -> None:
    s = position("medina-v2", 4, {"F6": "g.", "F7": "s."})
    illegal(s, "grey F8", "must-expand", "F8")
    assert squares_named(s, legal_moves(s).buildings[0]) == {"F5", "E6", "G6"}


def test_d6_new_street_may_touch_a_dead_street() -> None:
    marks = {
        "Q12": "MM", "P11": "o.", "P12": "o.", "Q11": "o.",  # the current street is shut in
        "E5": "mm", "E6": "mm", "E7": "mm",  # a dead street
    }  # fmt: skip
    s = position("medina-v2", 4, marks, well="K10")
    assert legal(s, "merchant F6")  # beside the middle of the dead street: one merchant
    illegal(act(s, "merchant F6"), "merchant D6", "street-end", "D6")
    s = position("medina-v2", 4, marks | {"F5": "mm"}, well="K10")
    illegal(s, "merchant F6", "merchant-crowded", "F6")  # beside E6 and F5: two


def test_d7_tower_contact_once_per_palace_per_tower() -> None:
    marks = {"B1": "##", "C1": "##", "D1": "##", "C2": "GR", "F2": "g."}
    s = position("medina-v2", 4, marks, to_move=1)
    assert s.tower_tiles[0] == 0
    s = act(s, "wall E1", "wall F1")  # yellow extends the arm past the unclaimed palace
    assert s.tower_tiles[0] == 0
    s = act(s, "roof F2")  # blue claims it next to F1: the tile moves to blue
    assert s.tower_tiles[0] == 2
    s = act(s, "stable B2")  # green: red's palace borders tower 1's arm again at B1
    assert s.tower_tiles[0] == 2  # red made this contact before: nothing happens


def test_d8_forced_rooftop_only_in_first_edition_rulesets() -> None:
    no_roofs = Supply((5, 5, 5, 5), 0, 0, 0, 3, 6, 8)
    supplies = dict.fromkeys((1, 2, 3), no_roofs)
    v1 = act(position("medina-v1", 4, {"H7": "MM", "C3": "g."}, supplies=supplies), "wall B1")
    illegal(v1, "wall C1", "forced-rooftop", "C1")
    v2 = act(position("medina-v2", 4, {"C3": "g."}, supplies=supplies), "wall B1")
    assert legal(v2, "wall C1")


def test_d9_tea_only_after_a_placement_and_once_per_turn() -> None:
    s = position("medina-v2", 4, {"C3": "PR"}, tea=[3, 0, 0, 0])
    illegal(s, "tea", "tea-timing")
    s = act(s, "wall B1", "tea")
    assert s.to_move == 1 and s.tea[0] == 2


def test_d10_equal_totals_share_the_rank() -> None:
    s = position("medina-v2", 4, {"C3": "GR", "K3": "GY"})  # 1 point each + grey tile to one
    r = result(s)
    assert r.totals == (2, 1, 0, 0) and r.ranks == (1, 2, 3, 3)


def test_d11_palace_tile_tie_goes_to_the_first_to_reach_the_size() -> None:
    marks = {"C3": "GR", "C4": "gR", "K3": "g.", "K4": "g."}
    s = act(position("medina-v2", 4, marks, to_move=1), "roof K3")
    assert s.palace_tiles[0] == 0  # 2 = 2: red keeps it
    s = act(s, "stable L3")
    assert s.palace_tiles[0] == 1  # 3 > 2


def test_d12_tile_values() -> None:
    marks = {"C3": "GR", "G3": "PR", "K3": "BR", "C8": "OR"}
    s = position("medina-v2", 4, marks)
    assert result(s).breakdowns[0].palace_tiles == 1 + 2 + 3 + 4
    s = position("medina-v2", 4, {"B1": "##", "Q13": "##", "Q1": "##", "B13": "##",
                                  "B2": "GR", "Q12": "PR", "Q2": "BR", "B12": "OR"})  # fmt: skip
    assert s.tower_tiles == [0, 0, 0, 0]
    assert result(s).breakdowns[0].tower_tiles == 1 + 2 + 3 + 4


def test_d13_tower_numbers_per_corner() -> None:
    g = new_game("medina-v2", 4, 0).rules.geometry
    corners = [square_name(g, t) for t in g.towers]
    assert dict(zip(corners, TOWER_NUMBERS, strict=True)) == {
        "A1": 1, "R13": 2, "R1": 3, "A13": 4,
    }  # fmt: skip
    s = position("medina-v2", 4, {"R12": "##", "Q12": "GR"})
    assert s.tower_tiles == [NOBODY, 0, NOBODY, NOBODY]  # bottom right is tower 2


def test_d14_a_wall_built_later_beside_a_claimed_palace_gives_the_tile() -> None:
    s = position("medina-v2", 4, {"A2": "##", "A3": "##", "B4": "GY", "C4": "gY"})
    assert s.tower_tiles[0] == NOBODY
    s = act(s, "wall A4")
    assert s.tower_tiles[0] == 1 and s.supply_of(1).merchants == 9


def test_d15_tower_contact_gives_no_palace_tile() -> None:
    marks = {"B1": "##", "C1": "##", "H6": "GR", "H7": "gR", "C2": "g."}
    s = act(position("medina-v2", 4, marks, to_move=2), "roof C2")
    assert s.tower_tiles[0] == 2 and s.palace_tiles[0] == 0


def test_d16_v1_2p_opening() -> None:
    s = new_game("medina-v1-2p", 2, 4)
    assert s.phase is Phase.START_MERCHANT and s.to_move == 0
    s = act(s, "start H7")
    assert (s.to_move, s.quota) == (1, 1)
    s = act(s, "wall B1")
    assert (s.to_move, s.quota) == (0, 2)
    s = act(s, "wall C1", "wall D1")
    assert (s.to_move, s.quota) == (1, 3)


def test_d17_v1_2p_blocked_palaces_never_compete_or_take() -> None:
    marks = {"B1": "##", "C1": "##", "C2": "g.", "C3": "g.", "K3": "GY", "H9": "MM"}
    s = act(position("medina-v1-2p", 2, marks, to_move=1), "block C2")
    assert s.palace_tiles[0] == 0  # yellow's smaller palace keeps the grey tile
    assert s.tower_tiles[0] == NOBODY
    assert result(s).totals[1] == 0


def test_d18_v1_2p_exhaustion_when_all_four_rooftops_are_placed_or_removed() -> None:
    marks = {"C3": "GB", "K3": "g.", "C8": "g.", "H9": "MM"}
    s = act(position("medina-v1-2p", 2, marks), "roof K3")  # yellow: 2 of 4
    assert not s.exhausted
    s = act(s, "block C8")  # red too: seat 0 used both colours, so green leaves the game
    assert [(e.seat, e.colour) for e in s.events if e.kind is EventKind.ROOFTOP_REMOVED] == [(1, 0)]
    assert s.exhausted == 0b0001  # blue, yellow, red placed and green removed


def test_d19_v1_start_merchant_is_a_decision_not_from_the_supply() -> None:
    s = new_game("medina-v1", 3, 4, start_seat=2)
    assert s.phase is Phase.START_MERCHANT and s.to_move == 2
    assert len(legal_moves(s)) == s.rules.geometry.inner.bit_count()
    s = act(s, "start K8")
    assert s.to_move == 2 and s.quota == 2 and s.supply_of(2).merchants == 8
    total = sum(s.supply_of(seat).merchants for seat in range(3)) + s.merchants.bit_count()
    assert total == 3 * 8 + 1 == 25


def test_d20_derived_manual_errors_are_ignored() -> None:
    # Tower 4 is worth 4 (no blank tile).
    s = position("medina-v2", 4, {"B13": "##", "B12": "GR"})
    assert s.tower_tiles[3] == 0 and result(s).breakdowns[0].tower_tiles == 4
    # Tea is worth nothing.
    a = position("medina-v2", 4, {"C3": "PR"}, tea=[3, 0, 0, 0])
    assert result(a).totals[0] == 1 + 2
    # The start merchant may stand next to the well.
    s = new_game("medina-v2", 4, 0, well=5 * 18 + 5, start_merchant=5 * 18 + 6)
    assert s.merchants
    # A street may branch (a new street merging into a dead one's middle).
    marks = {"Q12": "MM", "P11": "o.", "P12": "o.", "Q11": "o.",
             "E5": "mm", "E6": "mm", "E7": "mm"}  # fmt: skip
    s = act(position("medina-v2", 4, marks, well="K10"), "merchant F6")
    assert squares_named(s, s.street) == {"E5", "E6", "E7", "F6"}
    # Tower tiles are automatic and go to the palace owner, not the wall's builder.
    s = act(position("medina-v2", 4, {"B1": "##", "C2": "GB"}), "wall C1")
    assert s.tower_tiles[0] == 2
