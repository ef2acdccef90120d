"""Engine supplies and history events <-> protobuf."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from medina.engine import Action, ActionKind, Event, EventKind, Supply
from medina.v1 import game_pb2

from .packed import field, key

__all__ = [
    "action_of_event",
    "colour_mask",
    "colours",
    "event_bytes",
    "event_from_proto",
    "event_to_proto",
    "events_to_proto",
    "supply_from_proto",
    "supply_to_proto",
    "update_to_proto",
]


_COLOURS = tuple(tuple(c + 1 for c in range(4) if (m >> c) & 1) for m in range(16))


def colours(mask: int) -> tuple[int, ...]:
    """A mask of palace colours -> the PalaceColour enum values, increasing."""
    return _COLOURS[mask & 0b1111]


def colour_mask(values: Sequence[int]) -> int:
    """PalaceColour enum values -> a mask of palace colours (unknown values ignored)."""
    out = 0
    for c in values:
        if 1 <= c <= 4:
            out |= 1 << (c - 1)
    return out


def supply_to_proto(supply: Supply) -> game_pb2.Supply:
    """Engine supply -> protobuf."""
    return game_pb2.Supply(
        buildings=supply.buildings,
        rooftops=_COLOURS[supply.rooftops],  # type: ignore[arg-type]
        neutral_rooftops=supply.neutral,
        blocking_rooftops=_COLOURS[supply.blocking],  # type: ignore[arg-type]
        stables=supply.stables,
        merchants=supply.merchants,
        walls=supply.walls,
    )


def supply_from_proto(msg: game_pb2.Supply) -> Supply:
    """Protobuf supply -> engine (missing building counts are 0)."""
    b = [*msg.buildings, 0, 0, 0, 0]
    return Supply(
        buildings=(b[0], b[1], b[2], b[3]),
        rooftops=colour_mask(msg.rooftops),
        neutral=msg.neutral_rooftops,
        blocking=colour_mask(msg.blocking_rooftops),
        stables=msg.stables,
        merchants=msg.merchants,
        walls=msg.walls,
    )


def event_to_proto(index: int, e: Event) -> game_pb2.Event:
    """Engine event -> protobuf (tower number = index + 1; colour enum = colour + 1)."""
    msg = game_pb2.Event(
        index=index,
        kind=int(e.kind),  # type: ignore[arg-type]
        seat=e.seat,
        piece=e.piece,  # type: ignore[arg-type]
        square=e.square,
        colour=e.colour + 1 if e.colour >= 0 else 0,  # type: ignore[arg-type]
        tower=e.tower + 1 if e.tower >= 0 else 0,
        source=e.source,
        target=e.target,
        count=e.count,
    )
    if e.supply is not None:
        msg.supply.CopyFrom(supply_to_proto(e.supply))
    return msg


@lru_cache(maxsize=4096)
def event_bytes(index: int, e: Event) -> bytes:
    """The serialized ``event_to_proto(index, e)``, cached: every seat is sent every event."""
    return event_to_proto(index, e).SerializeToString()


def events_to_proto(first_index: int, events: Sequence[Event]) -> list[game_pb2.Event]:
    """Consecutive events starting at history index ``first_index``."""
    return [event_to_proto(first_index + i, e) for i, e in enumerate(events)]


_UPDATE_EVENTS = key(game_pb2.Update, "events")[0]


def update_to_proto(first_index: int, events: Sequence[Event]) -> game_pb2.Update:
    """An ``Update`` with consecutive events from ``first_index`` (shares the event cache
    with ``observation_to_proto``, so each event is encoded about once per match)."""
    msg = game_pb2.Update()
    msg.MergeFromString(
        b"".join(
            [field(_UPDATE_EVENTS, event_bytes(first_index + i, e)) for i, e in enumerate(events)]
        )
    )
    return msg


_EVENT_KINDS = {int(k): k for k in EventKind}


def event_from_proto(msg: game_pb2.Event) -> Event:
    """Protobuf event -> engine event; ValueError for an unknown kind."""
    kind = _EVENT_KINDS.get(int(msg.kind))
    if kind is None:
        raise ValueError(f"event {msg.index}: unknown event kind {int(msg.kind)}")
    return Event(
        kind=kind,
        seat=msg.seat,
        piece=int(msg.piece),
        square=msg.square,
        colour=int(msg.colour) - 1 if msg.colour else -1,
        tower=msg.tower - 1 if msg.tower else -1,
        source=msg.source,
        target=msg.target,
        count=msg.count,
        supply=supply_from_proto(msg.supply) if msg.HasField("supply") else None,
    )


def action_of_event(msg: game_pb2.Event) -> Action | None:
    """The action a history entry records (a placement or a tea break), if any."""
    if msg.kind == game_pb2.EVENT_KIND_TEA_SPENT:
        return Action(ActionKind.TEA)
    if msg.kind != game_pb2.EVENT_KIND_PLACED:
        return None
    kind = ActionKind(msg.piece)
    colour = int(msg.colour) - 1 if kind is ActionKind.BUILDING else -1
    return Action(kind, msg.square, colour)
