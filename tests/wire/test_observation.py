"""wire.observation and wire.packed: the hand-encoded observation equals the plain one, and
every piece of the engine state is where the schema says."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from medina.engine import (
    CONFIGURATIONS,
    NEUTRAL,
    Breakdown,
    Event,
    EventKind,
    GameState,
    Observation,
    PalaceScore,
    PalaceView,
    Phase,
    PlayerView,
    Supply,
    apply_action,
    legal_moves,
    new_game,
    observe,
    squares,
)
from medina.engine.geometry import geometry
from medina.v1 import game_pb2
from medina.wire import convert
from medina.wire.shared import packed
from medina.wire.shared.enums import RULESET_IDS, colours
from medina.wire.shared.events import event_to_proto, supply_bytes
from medina.wire.shared.observation import seat_bytes, seat_to_proto
from medina.wire.shared.scores import breakdown_bytes


def states(ruleset: str, players: int, seed: int) -> list[GameState]:
    rng = random.Random(seed)
    s = new_game(ruleset, players, seed)
    out = [s]
    while not s.over:
        moves = legal_moves(s)
        s = apply_action(s, moves.nth(rng.randrange(len(moves))))
        out.append(s)
    return out


_ROOF_KINDS = {2: game_pb2.ROOFTOP_KIND_PLAYER, 3: game_pb2.ROOFTOP_KIND_NEUTRAL}
_ROOF_KINDS[4] = game_pb2.ROOFTOP_KIND_BLOCKING


def plain_palace(pid: int, p: PalaceView) -> game_pb2.Palace:
    msg = game_pb2.Palace(
        id=pid,
        colour=p.colour + 1,  # type: ignore[arg-type]
        buildings=squares(p.buildings),
        stables=squares(p.stables),
        towers=[t + 1 for t in range(4) if (p.towers >> t) & 1],
        tie_break_placement=p.time,
    )
    if p.roof:
        msg.rooftop.kind = _ROOF_KINDS[p.roof]
        msg.rooftop.square = p.roof_square
        if p.owner >= 0:
            msg.rooftop.owner = p.owner
    return msg


def plain_supply(x: Supply) -> game_pb2.Supply:
    g, p, b, o = x.buildings
    return game_pb2.Supply(
        buildings=game_pb2.Buildings(grey=g, purple=p, brown=b, orange=o),
        rooftops=colours(x.rooftops),  # type: ignore[arg-type]
        neutral_rooftops=x.neutral,
        blocking_rooftops=colours(x.blocking),  # type: ignore[arg-type]
        stables=x.stables,
        merchants=x.merchants,
        walls=x.walls,
    )


def plain_score(b: Breakdown) -> game_pb2.ScoreBreakdown:
    msg = game_pb2.ScoreBreakdown(
        buildings=b.buildings,
        stables=b.stables,
        walls=b.walls,
        merchants=b.merchants,
        well_bonus=b.well_bonus,
        palace_tiles=b.palace_tiles,
        tower_tiles=b.tower_tiles,
        total=b.total,
    )
    for p in b.palaces:
        msg.palaces.add(
            colour=p.colour + 1 if p.colour >= 0 else 0,
            rooftop_square=p.square,
            buildings=p.buildings,
            stables=p.stables,
            walls=p.walls,
            merchants=p.merchants,
            well_bonus=p.well_bonus,
            total=p.total,
        )
    return msg


def plain_seat(v: PlayerView) -> game_pb2.SeatView:
    msg = game_pb2.SeatView(
        seat=v.seat,
        rooftop_colour=v.rooftop_colour + 1 if v.rooftop_colour >= 0 else 0,  # type: ignore[arg-type]
        blocking_colour=v.blocking_colour + 1 if v.blocking_colour >= 0 else 0,  # type: ignore[arg-type]
        rooftops=colours(v.rooftops),  # type: ignore[arg-type]
        blocking_rooftops=colours(v.blocking),  # type: ignore[arg-type]
        neutral_rooftops=v.neutral,
        tea=v.tea,
        out_of_pieces=v.out_of_pieces,
        revealed=v.revealed,
    )
    if v.supply is not None:
        msg.supply.CopyFrom(plain_supply(v.supply))
    if v.score is not None:
        msg.score.CopyFrom(plain_score(v.score))
    return msg


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
    board = game_pb2.Board(
        cols=obs.cols,
        rows=obs.rows,
        cells=cells,  # type: ignore[arg-type]
        palaces=[plain_palace(pid, p) for pid, p in enumerate(obs.palaces)],
        street=squares(obs.street),
        well=obs.well if obs.well >= 0 else None,
    )
    msg = game_pb2.Observation(
        ruleset=RULESET_IDS[obs.ruleset],  # type: ignore[arg-type]
        players=obs.players,
        phase=int(obs.phase),  # type: ignore[arg-type]
        turn=obs.turn,
        quota=obs.quota,
        placed=obs.placed,
        board=board,
        tea_pool=obs.tea_pool,
        exhausted=colours(obs.exhausted),  # type: ignore[arg-type]
        seats=[plain_seat(v) for v in obs.seats],
        events=[event_to_proto(obs.first_event + i, e) for i, e in enumerate(obs.events)],
        first_event=obs.first_event,
    )
    if obs.viewer >= 0:
        msg.viewer = obs.viewer
    if obs.phase is not Phase.OVER:
        msg.to_move = obs.to_move
    for c, holder in enumerate(obs.palace_tiles):
        tile = msg.palace_tiles.add(colour=c + 1)
        if holder >= 0:
            tile.holder = holder
    for t, (holder, merchants) in enumerate(zip(obs.tower_tiles, obs.tower_merchants, strict=True)):
        tower = msg.tower_tiles.add(tower=t + 1, merchants=merchants)
        if holder >= 0:
            tower.holder = holder
    return msg


@pytest.mark.parametrize(("ruleset", "players"), CONFIGURATIONS)
def test_the_fast_encoding_equals_the_plain_one(ruleset: str, players: int) -> None:
    for s in states(ruleset, players, 11)[::3]:
        for seat in (None, s.to_move):
            obs = observe(s, seat, full=seat is None, since=max(0, s.n_events - 7))
            fast = convert.observation_to_proto(obs)
            assert fast == plain(obs)


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
    assert len(fast.board.palaces) == 150 and not fast.board.HasField("well")


def test_updates_carry_the_same_events() -> None:
    s = states("medina-v1-2p", 2, 3)[-1]
    update = convert.update_to_proto(5, s.events[5:40])
    assert list(update.events) == convert.events_to_proto(5, s.events[5:40])
    assert convert.update_to_proto(0, []) == game_pb2.Update()


@pytest.mark.parametrize(("ruleset", "players"), CONFIGURATIONS)
def test_the_board_names_every_piece_where_the_engine_has_it(ruleset: str, players: int) -> None:
    # Decoded with the plain protobuf API: a field the encoder dropped or misplaced shows here.
    s = states(ruleset, players, 4)[-1]
    msg = convert.observation_to_proto(observe(s, None, full=True))
    board = msg.board
    assert len(board.palaces) == len(s.palaces)
    for p, wire in zip(s.palaces, board.palaces, strict=True):
        assert (wire.colour - 1, set(wire.buildings), set(wire.stables)) == (
            p.colour,
            set(squares(p.buildings)),
            set(squares(p.stables)),
        )
        if p.roof:
            assert wire.rooftop.square == p.roof_square
            assert wire.HasField("rooftop") and (
                wire.rooftop.owner == p.owner
                if p.owner >= 0
                else not wire.rooftop.HasField("owner")
            )
        else:
            assert not wire.HasField("rooftop")
    assert [t.holder if t.HasField("holder") else -1 for t in msg.palace_tiles] == s.palace_tiles
    assert [t.holder if t.HasField("holder") else -1 for t in msg.tower_tiles] == s.tower_tiles
    assert board.HasField("well") == (s.well >= 0)
    assert not msg.HasField("to_move") and not msg.HasField("viewer")  # over; full view
    cells = list(board.cells)
    for c in range(4):
        assert {sq for sq, v in enumerate(cells) if v == game_pb2.CELL_BUILDING_GREY + c} == set(
            squares(s.buildings[c])
        )


@pytest.mark.parametrize(("ruleset", "players"), CONFIGURATIONS)
def test_events_survive_the_wire(ruleset: str, players: int) -> None:
    s = states(ruleset, players, 6)[-1]
    for i, e in enumerate(s.events):
        wire = game_pb2.Event.FromString(convert.event_to_proto(i, e).SerializeToString())
        assert wire.index == i and wire.WhichOneof("event") is not None
        assert convert.event_from_proto(wire) == e


def test_an_event_without_a_kind_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="event 3: no event is set"):
        convert.event_from_proto(game_pb2.Event(index=3))


@pytest.mark.parametrize("n", [0, 1, 127, 128, 300, 2**31 - 1, -1, -2, -(2**31)])
def test_varints_match_protobuf(n: int) -> None:
    msg = game_pb2.Event(index=n)
    assert msg.SerializeToString() == packed.scalar(packed.key(game_pb2.Event, "index")[1], n)
    assert (
        game_pb2.Event.FromString(packed.key(game_pb2.Event, "index")[1] + packed.varint(n)) == msg
    )


@pytest.mark.parametrize(("ruleset", "players"), CONFIGURATIONS)
def test_seat_views_are_the_bytes_the_protobuf_api_writes(ruleset: str, players: int) -> None:
    """Seat views, supplies and scores are built as wire bytes: each is exactly what
    SerializeToString gives for the message built field by field with the protobuf API."""
    for s in states(ruleset, players, 5)[::2]:
        for seat in range(players):
            for v in observe(s, seat).seats:
                assert seat_bytes(v) == plain_seat(v).SerializeToString()
                assert seat_to_proto(v) == plain_seat(v)
                if v.supply is not None:
                    assert supply_bytes(v.supply) == plain_supply(v.supply).SerializeToString()
                if v.score is not None:
                    assert breakdown_bytes(v.score) == plain_score(v.score).SerializeToString()


def test_empty_supplies_and_scores_stay_present_and_odd_values_encode_alike() -> None:
    view = observe(states("medina-v2", 3, 2)[0], 0).seats[0]
    assert view.supply is not None and view.score is not None
    empty = Supply((0, 0, 0, 0), 0, 0, 0, 0, 0, 0)
    nothing = Breakdown(0, 0, 0, 0, 0, 0, 0, ())
    odd_palace = PalaceScore(colour=-1, square=300, buildings=-3, stables=2**20, walls=0,
                             merchants=1, well_bonus=-1)  # fmt: skip
    odd = Breakdown(-5, 0, 2**31 - 1, 0, 0, -(2**31), 7, (odd_palace, odd_palace))
    for v in (
        replace(view, supply=empty, score=nothing),
        replace(view, supply=None, score=odd, seat=3, tea=-1, revealed=True, out_of_pieces=True),
        replace(view, supply=Supply((9, 0, 1, 0), 0b1111, 2, 0b0101, 4, 300, 15), score=None),
    ):
        msg = plain_seat(v)
        assert seat_bytes(v) == msg.SerializeToString()
        assert msg.HasField("supply") is (v.supply is not None)
        assert msg.HasField("score") is (v.score is not None)
    parsed = game_pb2.SeatView.FromString(seat_bytes(replace(view, supply=empty, score=nothing)))
    assert parsed.HasField("supply") and parsed.supply.HasField("buildings")
    assert parsed.HasField("score")
