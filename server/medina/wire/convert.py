"""Engine and referee data <-> protobuf: the one import for the server's callers (actions,
legal actions, events and observations live in ``shared/``, which the SDK ships too;
settings and results in ``settings``)."""

from __future__ import annotations

from .settings import (
    outcome_from_proto,
    outcome_to_proto,
    settings_from_proto,
    settings_to_proto,
)
from .shared.actions import MalformedActionError, action_from_proto, action_to_proto
from .shared.events import (
    action_of_event,
    event_from_proto,
    event_to_proto,
    events_to_proto,
    supply_from_proto,
    supply_to_proto,
    update_to_proto,
)
from .shared.legal import actions_from_legal, legal_bytes, legal_to_proto
from .shared.observation import observation_bytes, observation_to_proto

__all__ = [
    "MalformedActionError",
    "action_from_proto",
    "action_of_event",
    "action_to_proto",
    "actions_from_legal",
    "event_from_proto",
    "event_to_proto",
    "events_to_proto",
    "legal_bytes",
    "legal_to_proto",
    "observation_bytes",
    "observation_to_proto",
    "outcome_from_proto",
    "outcome_to_proto",
    "settings_from_proto",
    "settings_to_proto",
    "supply_from_proto",
    "supply_to_proto",
    "update_to_proto",
]
