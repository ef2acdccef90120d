"""Name <-> number tables for the enums whose domain side is not an IntEnum."""

from __future__ import annotations

from medina.v1 import game_pb2

RULESET_IDS: dict[str, int] = {
    "medina-v2": game_pb2.RULESET_MEDINA_V2,
    "medina-v1": game_pb2.RULESET_MEDINA_V1,
    "medina-v1-2p": game_pb2.RULESET_MEDINA_V1_2P,
}
RULESET_NAMES: dict[int, str] = {v: k for k, v in RULESET_IDS.items()}
