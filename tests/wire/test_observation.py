"""wire.observation and wire.packed: the hand-encoded observation equals the plain one."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from medina.engine import (
    CONFIGURATIONS,
    NEUTRAL,
    Event,
    EventKind,
    GameState,
    Observation,
    PalaceView,
    apply_action,
    legal_moves,
    new_game,
    observe,
    render,
    squares,
)
from medina.engine.geometry import geometry
from medina.engine.view import state_from_observation
from medina.v1 import game_pb2
from medina.wire import convert, packed
from medina.wire.enums import RULESET_IDS
from medina.wire.events import colours, event_to_proto
from medina.wire.observation import seat_to_proto


def states(ruleset: str, players: int, seed: int) -> list[GameState]:
    rng = random.Random(seed)
    s = new_game(ruleset, players, seed)
    out = [s]
    while not s.over:
        moves = legal_moves(s)
        s = apply_action(s, moves.nth(rng.randrange(len(moves))))
        out.append(s)
    return out


def plain(obs: Observation) -> game_pb2.Observation:
    """The observation built field by field with the protobuf API (the reference)."""
    cells: list[int] = [game_pb2.CELL_EMPTY] * (obs.cols * obs.rows)
    g = geometry(obs.cols, obs.rows)
    for sq in squares(g.wall_spaces):
        cells[sq] = game_pb2.CELL_WALL_SPACE
    for sq in g.towers:
        cells[sq] = game_pb2.CELL_TOWER
    layers: list[tuple[int, int]] = [(obs.walls, game_pb2.CELL_WALL)]
    layers.append((obs.merchants, game_pb2.CELL_MERCHANT))
    layers += [(m, game_pb2.CELL_BUILDING_GREY + c) for c, m in enumerate(obs.buildings)]
    layers.append((obs.stables, game_pb2.CELL_STABLE))
    for mask, code in layers:
        for sq in squares(mask):
            cells[sq] = code
    if obs.well >= 0:
        cells[obs.well] = game_pb2.CELL_WELL
    owners = [0] * len(cells)
    for pid, p in enumerate(obs.palaces, start=1):
        for sq in squares(p.buildings | p.stables):
            owners[sq] = pid
    board = game_pb2.Board(
        cols=obs.cols,
        rows=obs.rows,
        cells=cells,  # type: ignore[arg-type]
        cell_palace=owners,
        palace_colour=[p.colour + 1 for p in obs.palaces],  # type: ignore[misc]
        current_street=squares(obs.street),
        well=obs.well,
        palace_owner=[p.owner for p in obs.palaces],
        palace_roof=[p.roof for p in obs.palaces],  # type: ignore[misc]
        palace_roof_square=[p.roof_square for p in obs.palaces],
        palace_towers=[p.towers for p in obs.palaces],
        palace_time=[p.time for p in obs.palaces],
    )
    return game_pb2.Observation(
        ruleset=RULESET_IDS[obs.ruleset],  # type: ignore[arg-type]
        players=obs.players,
        viewer=obs.viewer,
        phase=int(obs.phase),  # type: ignore[arg-type]
        to_move=obs.to_move,
        turn=obs.turn,
        quota=obs.quota,
        placed=obs.placed,
        board=board,
        palace_tiles=obs.palace_tiles,
        tower_tiles=obs.tower_tiles,
        tower_merchants=obs.tower_merchants,
        tea_pool=obs.tea_pool,
        exhausted=colours(obs.exhausted),  # type: ignore[arg-type]
        seats=[seat_to_proto(v) for v in obs.seats],
        events=[event_to_proto(obs.first_event + i, e) for i, e in enumerate(obs.events)],
        first_event=obs.first_event,
    )


@pytest.mark.parametrize(("ruleset", "players"), CONFIGURATIONS)
def test_the_fast_encoding_equals_the_plain_one(ruleset: str, players: int) -> None:
    for s in states(ruleset, players, 11)[::3]:
        for seat in (None, s.to_move):
            obs = observe(s, seat, full=seat is None, since=max(0, s.n_events - 7))
            fast = convert.observation_to_proto(obs)
            assert fast == plain(obs)
            assert convert.observation_from_proto(fast) == obs


def test_large_and_negative_values_encode_alike() -> None:
    obs = observe(states("medina-v2", 3, 2)[60], None, full=True)
    g = geometry(obs.cols, obs.rows)
    many = tuple(
        PalaceView(0, 1 << sq, 0, NEUTRAL, 3, sq, 15, 5000 + sq) for sq in squares(g.city)[:150]
    )
    odd = replace(
        obs,
        buildings=(sum(p.buildings for p in many), 0, 0, 0),
        stables=0,
        merchants=0,
        well=-1,
        street=0,
        palaces=many,
        first_event=300,
        events=(Event(EventKind.TEA_RECEIVED, seat=-1, count=2),),
    )
    fast = convert.observation_to_proto(odd)
    assert fast == plain(odd)
    assert max(fast.board.cell_palace) == 150
    assert convert.observation_from_proto(fast) == odd


def test_updates_carry_the_same_events() -> None:
    s = states("medina-v1-2p", 2, 3)[-1]
    update = convert.update_to_proto(5, s.events[5:40])
    assert list(update.events) == convert.events_to_proto(5, s.events[5:40])
    assert convert.update_to_proto(0, []) == game_pb2.Update()


@pytest.mark.parametrize(("ruleset", "players"), CONFIGURATIONS)
def test_a_state_rebuilt_through_the_wire_plays_alike(ruleset: str, players: int) -> None:
    for s in states(ruleset, players, 12)[::9]:
        seat = s.to_move
        obs = convert.observation_from_proto(convert.observation_to_proto(observe(s, seat)))
        r = state_from_observation(obs)
        assert legal_moves(r) == legal_moves(s) and render(r) == render(s)
        assert r.supply == s.supply  # deduced from the whole history


def broken(change: str) -> game_pb2.Observation:
    msg = convert.observation_to_proto(observe(states("medina-v2", 4, 1)[30], 0))
    if change == "cell":
        msg.board.cells[40] = 77  # type: ignore[call-overload]
    elif change == "palace id":
        msg.board.cell_palace[40] = 99
    elif change == "size":
        del msg.board.cells[-1]
    elif change == "arrays":
        del msg.board.palace_time[-1]
    elif change == "ruleset":
        msg.ruleset = 9  # type: ignore[assignment]
    elif change == "event":
        msg.events[0].kind = 77  # type: ignore[assignment]
    return msg


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        ("cell", "unknown cell value 77 at square 40"),
        ("palace id", "palace ids beyond"),
        ("size", "233 cells, expected 234"),
        ("arrays", "unequal length"),
        ("ruleset", "unknown ruleset 9"),
        ("event", "unknown event kind 77"),
    ],
)
def test_malformed_observations_are_value_errors(change: str, fragment: str) -> None:
    with pytest.raises(ValueError, match=fragment):
        convert.observation_from_proto(broken(change))


@pytest.mark.parametrize("n", [0, 1, 127, 128, 300, 2**31 - 1, -1, -2, -(2**31)])
def test_varints_match_protobuf(n: int) -> None:
    msg = game_pb2.Event(seat=n)
    assert msg.SerializeToString() == packed.scalar(packed.key(game_pb2.Event, "seat")[1], n)
    assert (
        game_pb2.Event.FromString(packed.key(game_pb2.Event, "seat")[1] + packed.varint(n)) == msg
    )


def test_board_bytes_and_masks_are_inverse() -> None:
    rng = random.Random(5)
    a, b = rng.getrandbits(234), rng.getrandbits(234)
    b &= ~a
    raw = packed.board_bytes(0, [(a, 4), (b, 9), (0, 3)], 234)
    assert len(raw) == 234
    assert packed.mask_of(raw, 4) == a and packed.mask_of(raw, 9) == b
    assert packed.mask_of(raw, 0) == ((1 << 234) - 1) & ~(a | b)
    assert packed.mask_of(b"", 3) == 0
