"""Palace tiles and tower tiles (docs/rules.md 7.1, 7.2, 12): holders, ties, contacts, merchants."""

from __future__ import annotations

from medina.engine import NOBODY, EventKind, GameState, result

from .support import act, position

T1_TOP = {"B1": "##", "C1": "##", "D1": "##"}


def tile_events(s: GameState, since: int, kind: EventKind) -> list[tuple[int, int, int]]:
    """(colour or tower, source, target) of the tile events after ``since``."""
    return [
        (e.colour if kind is EventKind.PALACE_TILE else e.tower, e.source, e.target)
        for e in s.events_since(since)
        if e.kind is kind
    ]


# --- palace tiles (7.1) ---------------------------------------------------------------------


def test_first_claim_takes_the_palace_tile() -> None:
    s = position("medina-v2", 4, {"F6": "g.", "F7": "g."})
    s = act(s, "roof F6")
    assert s.palace_tiles == [0, NOBODY, NOBODY, NOBODY]
    assert tile_events(s, 0, EventKind.PALACE_TILE) == [(0, NOBODY, 0)]


def test_palace_tile_example_of_section_11() -> None:
    # Blue holds orange with 3 buildings + 2 stables; green's orange palace has 4 buildings.
    marks = {
        "F4": "OB", "G4": "oB", "H4": "oB", "F5": "sB", "G5": "sB",
        "L8": "o.", "M8": "o.", "N8": "o.", "L9": "o.",
    }  # fmt: skip
    s = position("medina-v2", 4, marks, to_move=3)
    assert s.palace_tiles[3] == 2
    s = act(s, "roof L8")  # size 4 < 5: blue keeps the tile
    assert s.palace_tiles[3] == 2
    s = act(s, "stable L10")  # size 5 = 5: the tie goes to the earlier palace (D11)
    assert s.palace_tiles[3] == 2
    assert s.to_move == 0
    mark = s.n_events
    s = act(s, "stable M9")  # red adds green's second stable: size 6 > 5
    assert s.palace_tiles[3] == 3  # the tile goes to the palace's owner
    assert tile_events(s, mark, EventKind.PALACE_TILE) == [(3, 2, 3)]


def test_tie_time_is_the_later_of_claim_and_last_stable_d11() -> None:
    # Red's grey palace (size 3) holds; yellow's grey palace of size 2 is unclaimed.
    marks = {"C3": "GR", "C4": "gR", "C5": "gR", "K3": "g.", "K4": "g."}
    s = position("medina-v2", 4, marks, to_move=1)
    s = act(s, "stable K5", "roof K3")  # a stable before the claim: time = claim; 3 = 3
    assert s.palace_tiles[0] == 0
    s = act(s, "stable D3")  # blue enlarges red's palace to 4
    assert s.palace_tiles[0] == 0
    s = act(s, "stable L4")  # ... and yellow's palace to 4: red reached 4 first
    assert s.palace_tiles[0] == 0
    s = act(s, "stable J3", "stable J4")  # green: yellow's palace grows to 6
    assert s.palace_tiles[0] == 1


def test_unclaimed_palaces_never_compete() -> None:
    marks = {"C3": "GR", "K3": "g.", "K4": "g.", "K5": "g.", "K6": "g."}
    s = position("medina-v2", 4, marks)
    assert s.palace_tiles[0] == 0
    s = act(s, "grey K7")
    assert s.palace_tiles[0] == 0


def test_neutral_holder_puts_the_tile_at_the_board_edge() -> None:
    # medina-v2 with 3 players: green is neutral.
    s = position("medina-v2", 3, {"C3": "GR", "K3": "g.", "K4": "g."})
    assert s.palace_tiles[0] == 0
    s = act(s, "neutral K3")
    assert s.palace_tiles[0] == NOBODY
    assert tile_events(s, 0, EventKind.PALACE_TILE) == [(0, 0, NOBODY)]


def test_blocked_palaces_never_compete_d17() -> None:
    marks = {"C3": "GY", "K3": "g.", "K4": "g.", "K5": "g.", "H9": "MM"}
    s = position("medina-v1-2p", 2, marks, to_move=1)
    s = act(s, "block K3")  # green blocks a larger grey palace
    assert s.palace_tiles[0] == 0
    assert s.tower_tiles == [NOBODY] * 4


# --- tower tiles (7.2) ----------------------------------------------------------------------


def test_claim_next_to_an_arm_takes_the_tower_tile_and_its_merchants() -> None:
    s = position("medina-v2", 4, T1_TOP | {"C2": "g.", "C3": "g."})
    s = act(s, "roof C3")
    assert s.tower_tiles == [0, NOBODY, NOBODY, NOBODY]
    assert s.tower_merchants == [0, 2, 1, 0]
    assert s.supply_of(0).merchants == 6 + 3
    merchants = [
        (e.tower, e.target, e.count) for e in s.events if e.kind is EventKind.TOWER_MERCHANTS
    ]
    assert merchants == [(0, 0, 3)]
    assert s.palaces[0].towers == 0b0001


def test_a_new_wall_gives_the_tile_to_the_palace_owner_not_the_builder_d14() -> None:
    # Blue's claimed palace borders the empty wall space D1; red builds the wall there.
    s = position("medina-v2", 4, {"B1": "##", "C1": "##", "D2": "GB", "E2": "gB"})
    assert s.tower_tiles[0] == NOBODY
    s = act(s, "wall D1")
    assert s.tower_tiles[0] == 2
    assert s.supply_of(2).merchants == 6 + 3 and s.supply_of(0).merchants == 6


def test_a_new_stable_makes_contact() -> None:
    s = position("medina-v2", 4, T1_TOP | {"D3": "GY", "E3": "gY"})
    assert s.tower_tiles[0] == NOBODY
    s = act(s, "stable D2")
    assert s.tower_tiles[0] == 1
    assert tile_events(s, 0, EventKind.TOWER_TILE) == [(0, NOBODY, 1)]


def test_contact_is_once_per_palace_per_tower_d7() -> None:
    marks = T1_TOP | {"C2": "GR", "C3": "gR", "G2": "g.", "G3": "g."}
    s = position("medina-v2", 4, marks)
    assert s.tower_tiles[0] == 0
    s = act(s, "wall E1", "wall F1")  # still red's own arm: nothing new
    assert s.tower_tiles[0] == 0
    s = act(s, "wall G1")  # yellow's wall touches the unclaimed palace at G2: nothing
    assert s.tower_tiles[0] == 0
    s = act(s, "roof G2")  # yellow claims it next to G1: yellow becomes the watcher
    assert s.tower_tiles[0] == 1
    assert s.supply_of(1).merchants == 6  # the merchants went with the first contact
    mark = s.n_events
    s = act(s, "stable B2", "stable D2")  # blue: red's palace touches the arm again
    assert s.tower_tiles[0] == 1  # no new contact: yellow keeps the tile
    assert tile_events(s, mark, EventKind.TOWER_TILE) == []


def test_palace_touching_two_towers_takes_both_tiles_and_merchants_section_12() -> None:
    walls = {f"{c}1": "##" for c in "BCDEFGHI"} | {f"{c}1": "##" for c in "KLMNOPQ"}
    s = position("medina-v2", 4, walls | {"I2": "g.", "J2": "g.", "K2": "g."})
    s = act(s, "roof J2")
    assert s.tower_tiles == [0, NOBODY, 0, NOBODY]
    assert s.supply_of(0).merchants == 6 + 3 + 1
    assert s.palaces[0].towers == 0b0101


def test_contact_through_the_corner_is_one_tower_section_12() -> None:
    s = position("medina-v2", 4, {"B1": "##", "A2": "##", "B2": "g.", "C2": "g."})
    s = act(s, "roof B2")
    assert s.tower_tiles[0] == 0 and s.supply_of(0).merchants == 9
    events = [e for e in s.events if e.kind in (EventKind.TOWER_TILE, EventKind.TOWER_MERCHANTS)]
    assert len(events) == 2


def test_neutral_contact_sends_the_tile_to_the_edge_and_removes_the_merchants() -> None:
    s = position("medina-v2", 3, T1_TOP | {"C2": "g."})
    s = act(s, "neutral C2")
    assert s.tower_tiles[0] == NOBODY and s.tower_merchants[0] == 0
    assert [e.target for e in s.events if e.kind is EventKind.TOWER_MERCHANTS] == [NOBODY]
    assert all(s.supply_of(seat).merchants == 8 for seat in range(3))


def test_neutral_contact_takes_the_tile_from_its_holder() -> None:
    s = position("medina-v2", 3, T1_TOP | {"C2": "GY", "F2": "g.", "E1": "##", "F1": "##"})
    assert s.tower_tiles[0] == 1 and s.tower_merchants[0] == 0
    s = act(s, "neutral F2")
    assert s.tower_tiles[0] == NOBODY
    assert tile_events(s, 0, EventKind.TOWER_TILE) == [(0, 1, NOBODY)]


def test_tower_contact_gives_no_palace_tile_d15() -> None:
    marks = T1_TOP | {"H6": "GR", "H7": "gR", "H8": "gR", "C2": "g."}
    s = position("medina-v2", 4, marks, to_move=1)
    s = act(s, "roof C2")  # yellow: the first contact with tower 1
    assert s.tower_tiles[0] == 1
    assert s.palace_tiles[0] == 0  # red's larger grey palace keeps the grey tile


def test_tower_4_carries_no_merchants() -> None:
    s = position("medina-v2", 4, {"B13": "##", "C13": "##", "C12": "p."})
    s = act(s, "roof C12")
    assert s.tower_tiles[3] == 0 and s.supply_of(0).merchants == 6
    assert not [e for e in s.events if e.kind is EventKind.TOWER_MERCHANTS]


def test_blocked_palaces_make_no_contact_v1_2p() -> None:
    s = position("medina-v1-2p", 2, T1_TOP | {"C2": "g.", "H9": "MM"})
    s = act(s, "block C2")
    assert s.tower_tiles[0] == NOBODY
    assert s.palaces[0].towers == 0


# --- rare tile situations (rules audit) -----------------------------------------------------


def test_a_neutral_palace_grown_past_the_holder_sends_the_tile_to_the_edge() -> None:
    # 7.1 [v2]: red's grey palace of 2 holds the tile over the neutral (green) one of 2; a
    # stable makes the neutral one larger, so the tile goes to the board edge.
    marks = {"C3": "GR", "C4": "gR", "K3": "GG", "K4": "gG"}
    s = position("medina-v2", 3, marks, to_move=1)
    assert s.palace_tiles[0] == 0
    s = act(s, "stable L3")
    assert s.palace_tiles[0] == NOBODY
    assert tile_events(s, 0, EventKind.PALACE_TILE) == [(0, 0, NOBODY)]
    assert result(s).breakdowns[0].palace_tiles == 0


def test_a_stable_joining_a_neutral_palace_to_an_arm_removes_the_tower_merchants() -> None:
    # 7.2 [v2]: the first contact of a neutral palace, made later by a stable.
    s = position("medina-v2", 3, T1_TOP | {"D3": "GG", "E3": "gG"})
    assert s.tower_merchants[0] == 3
    s = act(s, "stable D2")
    assert s.tower_tiles[0] == NOBODY and s.tower_merchants[0] == 0
    assert [(e.target, e.count) for e in s.events if e.kind is EventKind.TOWER_MERCHANTS] == [
        (NOBODY, 3)
    ]
    assert [s.supply_of(seat).merchants for seat in range(3)] == [8, 8, 8]


def test_blocked_palaces_make_no_contact_through_a_later_wall_or_stable_v1_2p() -> None:
    s = position("medina-v1-2p", 2, {"B1": "##", "C1": "##", "D2": "GR", "H9": "MM"})
    s = act(s, "wall D1", "stable E2")
    assert s.tower_tiles[0] == NOBODY and s.palaces[0].towers == 0


def test_first_edition_tower_tiles_carry_no_merchants() -> None:
    s = position("medina-v1", 4, T1_TOP | {"C2": "g.", "H9": "MM"})
    s = act(s, "roof C2")
    assert s.tower_tiles[0] == 0 and s.tower_merchants == [0, 0, 0, 0]
    assert s.supply_of(0).merchants == 6
    assert not [e for e in s.events if e.kind is EventKind.TOWER_MERCHANTS]
