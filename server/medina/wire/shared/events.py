"""Engine supplies and history events <-> protobuf (events as a oneof of typed messages)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache

from medina.engine import Action, ActionKind, Event, EventKind, Supply
from medina.engine.memo import IdentityMemo
from medina.v1 import game_pb2

from .enums import (
    colour_from_proto,
    colour_mask,
    colour_to_proto,
    colours,
    seat_from_optional,
    tower_from_proto,
    tower_to_proto,
)
from .packed import field, key, packed, present, scalar

__all__ = [
    "action_of_event",
    "event_bytes",
    "event_from_proto",
    "event_to_proto",
    "events_to_proto",
    "supply_bytes",
    "supply_from_proto",
    "supply_to_proto",
    "update_bytes",
    "update_to_proto",
]


_SUPPLY_BUILDINGS = key(game_pb2.Supply, "buildings")[0]
_SUPPLY_ROOFTOPS = key(game_pb2.Supply, "rooftops")[0]
_SUPPLY_NEUTRAL = key(game_pb2.Supply, "neutral_rooftops")[1]
_SUPPLY_BLOCKING = key(game_pb2.Supply, "blocking_rooftops")[0]
_SUPPLY_STABLES = key(game_pb2.Supply, "stables")[1]
_SUPPLY_MERCHANTS = key(game_pb2.Supply, "merchants")[1]
_SUPPLY_WALLS = key(game_pb2.Supply, "walls")[1]
_BUILDING_COUNTS = tuple(
    key(game_pb2.Buildings, name)[1] for name in ("grey", "purple", "brown", "orange")
)


@lru_cache(maxsize=4096)
def supply_bytes(supply: Supply) -> bytes:
    """A serialized ``Supply``, built as wire bytes (tests check it against the message built
    field by field); kept by value (supplies only shrink, so the same ones recur from game
    to game)."""
    counts = b"".join(
        [scalar(tag, n) for tag, n in zip(_BUILDING_COUNTS, supply.buildings, strict=True)]
    )
    return b"".join(
        (
            present(_SUPPLY_BUILDINGS, counts),
            packed(_SUPPLY_ROOFTOPS, list(colours(supply.rooftops))),
            scalar(_SUPPLY_NEUTRAL, supply.neutral),
            packed(_SUPPLY_BLOCKING, list(colours(supply.blocking))),
            scalar(_SUPPLY_STABLES, supply.stables),
            scalar(_SUPPLY_MERCHANTS, supply.merchants),
            scalar(_SUPPLY_WALLS, supply.walls),
        )
    )


def supply_to_proto(supply: Supply) -> game_pb2.Supply:
    """Engine supply -> protobuf (parsed from ``supply_bytes``)."""
    return game_pb2.Supply.FromString(supply_bytes(supply))


def supply_from_proto(msg: game_pb2.Supply) -> Supply:
    """Protobuf supply -> engine (missing counts are 0)."""
    b = msg.buildings
    return Supply(
        buildings=(b.grey, b.purple, b.brown, b.orange),
        rooftops=colour_mask(msg.rooftops),
        neutral=msg.neutral_rooftops,
        blocking=colour_mask(msg.blocking_rooftops),
        stables=msg.stables,
        merchants=msg.merchants,
        walls=msg.walls,
    )


def _turn_started(e: Event, m: game_pb2.Event) -> None:
    m.turn_started.seat = e.seat
    m.turn_started.pieces = e.count


def _placed(e: Event, m: game_pb2.Event) -> None:
    m.placed.seat = e.seat
    m.placed.piece = e.piece  # type: ignore[assignment]
    m.placed.square = e.square
    m.placed.colour = colour_to_proto(e.colour)  # type: ignore[assignment]
    m.placed.by_referee = e.by_referee


def _passed(e: Event, m: game_pb2.Event) -> None:
    m.passed.seat = e.seat


def _tea_spent(e: Event, m: game_pb2.Event) -> None:
    m.tea_spent.seat = e.seat
    m.tea_spent.by_referee = e.by_referee


def _tea_received(e: Event, m: game_pb2.Event) -> None:
    m.tea_received.count = e.count
    if e.seat >= 0:
        m.tea_received.seat = e.seat


def _palace_tile(e: Event, m: game_pb2.Event) -> None:
    t = m.palace_tile_moved
    t.colour = colour_to_proto(e.colour)  # type: ignore[assignment]
    if e.source >= 0:
        t.from_seat = e.source
    if e.target >= 0:
        t.to_seat = e.target


def _tower_tile(e: Event, m: game_pb2.Event) -> None:
    t = m.tower_tile_moved
    t.tower = tower_to_proto(e.tower)
    if e.source >= 0:
        t.from_seat = e.source
    if e.target >= 0:
        t.to_seat = e.target


def _tower_merchants(e: Event, m: game_pb2.Event) -> None:
    t = m.tower_merchants_taken
    t.tower = tower_to_proto(e.tower)
    t.count = e.count
    if e.target >= 0:
        t.seat = e.target


def _colour_exhausted(e: Event, m: game_pb2.Event) -> None:
    m.colour_exhausted.colour = colour_to_proto(e.colour)  # type: ignore[assignment]


def _rooftop_removed(e: Event, m: game_pb2.Event) -> None:
    m.rooftop_removed.seat = e.seat
    m.rooftop_removed.colour = colour_to_proto(e.colour)  # type: ignore[assignment]


def _supply_revealed(e: Event, m: game_pb2.Event) -> None:
    m.supply_revealed.seat = e.seat
    if e.supply is not None:
        m.supply_revealed.supply.CopyFrom(supply_to_proto(e.supply))


def _game_over(e: Event, m: game_pb2.Event) -> None:
    m.game_over.SetInParent()


_TO_PROTO: dict[EventKind, Callable[[Event, game_pb2.Event], None]] = {
    EventKind.TURN_STARTED: _turn_started,
    EventKind.PLACED: _placed,
    EventKind.PASSED: _passed,
    EventKind.TEA_SPENT: _tea_spent,
    EventKind.TEA_RECEIVED: _tea_received,
    EventKind.PALACE_TILE: _palace_tile,
    EventKind.TOWER_TILE: _tower_tile,
    EventKind.TOWER_MERCHANTS: _tower_merchants,
    EventKind.COLOUR_EXHAUSTED: _colour_exhausted,
    EventKind.ROOFTOP_REMOVED: _rooftop_removed,
    EventKind.SUPPLY_REVEALED: _supply_revealed,
    EventKind.GAME_OVER: _game_over,
}


def event_to_proto(index: int, e: Event) -> game_pb2.Event:
    """Engine event -> protobuf."""
    msg = game_pb2.Event(index=index)
    _TO_PROTO[e.kind](e, msg)
    return msg


#: (index, id(event)) -> its bytes: a history's events live as long as its game
_EVENT_BYTES: IdentityMemo[bytes] = IdentityMemo()


def event_bytes(index: int, e: Event) -> bytes:
    """The serialized ``event_to_proto(index, e)``, kept: every seat is sent every event
    (found by the event's identity, ``medina.engine.memo``)."""
    key = (index, id(e))
    made = _EVENT_BYTES.get(key)
    if made is None:
        made = _EVENT_BYTES.put(key, e, event_to_proto(index, e).SerializeToString())
    return made


def events_to_proto(first_index: int, events: Sequence[Event]) -> list[game_pb2.Event]:
    """Consecutive events starting at history index ``first_index``."""
    return [event_to_proto(first_index + i, e) for i, e in enumerate(events)]


_UPDATE_EVENTS = key(game_pb2.Update, "events")[0]


def update_bytes(first_index: int, events: Sequence[Event]) -> bytes:
    """The serialized ``Update`` with consecutive events from ``first_index`` (shares the
    event cache with ``observation_to_proto``, so each event is encoded about once per
    match)."""
    return b"".join(
        [field(_UPDATE_EVENTS, event_bytes(first_index + i, e)) for i, e in enumerate(events)]
    )


def update_to_proto(first_index: int, events: Sequence[Event]) -> game_pb2.Update:
    """An ``Update`` with consecutive events from ``first_index``."""
    msg = game_pb2.Update()
    msg.MergeFromString(update_bytes(first_index, events))
    return msg


def event_from_proto(msg: game_pb2.Event) -> Event:
    """Protobuf event -> engine event; ValueError when no event is set (or its kind is newer
    than this code: a receiver skips those, docs/protocol.md)."""
    which = msg.WhichOneof("event")
    if which == "turn_started":
        t = msg.turn_started
        return Event(EventKind.TURN_STARTED, seat=t.seat, count=t.pieces)
    if which == "placed":
        p = msg.placed
        return Event(
            EventKind.PLACED,
            seat=p.seat,
            piece=int(p.piece),
            square=p.square,
            colour=colour_from_proto(p.colour),
            by_referee=p.by_referee,
        )
    if which == "passed":
        return Event(EventKind.PASSED, seat=msg.passed.seat)
    if which == "tea_spent":
        tea = msg.tea_spent
        return Event(EventKind.TEA_SPENT, seat=tea.seat, by_referee=tea.by_referee)
    if which == "tea_received":
        r = msg.tea_received
        return Event(EventKind.TEA_RECEIVED, seat=seat_from_optional(r, "seat"), count=r.count)
    if which == "palace_tile_moved":
        pt = msg.palace_tile_moved
        return Event(
            EventKind.PALACE_TILE,
            colour=colour_from_proto(pt.colour),
            source=seat_from_optional(pt, "from_seat"),
            target=seat_from_optional(pt, "to_seat"),
        )
    if which == "tower_tile_moved":
        tt = msg.tower_tile_moved
        return Event(
            EventKind.TOWER_TILE,
            tower=tower_from_proto(tt.tower),
            source=seat_from_optional(tt, "from_seat"),
            target=seat_from_optional(tt, "to_seat"),
        )
    if which == "tower_merchants_taken":
        tm = msg.tower_merchants_taken
        return Event(
            EventKind.TOWER_MERCHANTS,
            tower=tower_from_proto(tm.tower),
            target=seat_from_optional(tm, "seat"),
            count=tm.count,
        )
    if which == "colour_exhausted":
        return Event(
            EventKind.COLOUR_EXHAUSTED, colour=colour_from_proto(msg.colour_exhausted.colour)
        )
    if which == "rooftop_removed":
        rr = msg.rooftop_removed
        return Event(EventKind.ROOFTOP_REMOVED, seat=rr.seat, colour=colour_from_proto(rr.colour))
    if which == "supply_revealed":
        sr = msg.supply_revealed
        return Event(
            EventKind.SUPPLY_REVEALED,
            seat=sr.seat,
            supply=supply_from_proto(sr.supply) if sr.HasField("supply") else None,
        )
    if which == "game_over":
        return Event(EventKind.GAME_OVER)
    raise ValueError(f"event {msg.index}: no event is set")


def action_of_event(msg: game_pb2.Event) -> Action | None:
    """The action a history entry records (a placement or a tea break); None for any other
    event, or a placement of a kind this reader does not know."""
    which = msg.WhichOneof("event")
    if which == "tea_spent":
        return Action(ActionKind.TEA)
    if which != "placed":
        return None
    p = msg.placed
    try:
        kind = ActionKind(p.piece)
    except ValueError:
        return None  # a piece kind newer than this reader: not an action it can follow
    colour = colour_from_proto(p.colour) if kind is ActionKind.BUILDING else -1
    return Action(kind, p.square, colour)
