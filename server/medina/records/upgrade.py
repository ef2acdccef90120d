"""Reading records written by earlier releases: format 1 lines upgraded to format 2.

Format 2 came with protocol 1.0 (docs/protocol.md, "Schema decisions (protocol 1.0)"). The changes a
record line sees, each undone here on the JSON object before it is parsed:

* ``-1`` for "none" became an absent field (the setup's well and start merchant, an
  incident's seat);
* clock and policy fields gained presence: format 1 omitted a zero value, which always
  meant zero there (the writer wrote the settings it played with), so it is written out;
* a result's ``complete`` flag became ``ending`` (COMPLETE or ABORTED);
* a palace score's ``roofSquare`` became ``rooftopSquare``;
* request ids were uint64 (JSON strings) and are uint32 now (numbers; parsed either way).
"""

from __future__ import annotations

from typing import Any

__all__ = ["CURRENT_FORMAT_VERSION", "upgrade_line"]

CURRENT_FORMAT_VERSION = 2

_TIME_FIELDS = ("bankMs", "incrementMs", "firstDecisionExtraMs", "graceMs")
_POLICY_FIELDS = ("maxRejections", "reconnectGraceMs")


def upgrade_line(data: dict[str, Any], version: int) -> dict[str, Any]:
    """The JSON object of one record line of format ``version``, as format 2 writes it."""
    if version >= CURRENT_FORMAT_VERSION:
        return data
    if "header" in data:
        _header(data["header"])
    elif "incident" in data:
        if data["incident"].get("seat") == -1:
            del data["incident"]["seat"]
    elif "outcome" in data:
        _result(data["outcome"].get("result", {}))
    return data


def _header(h: dict[str, Any]) -> None:
    h["formatVersion"] = CURRENT_FORMAT_VERSION
    setup = h.get("setup", {})
    for key in ("well", "startMerchant"):
        if setup.get(key) == -1:
            del setup[key]
    config = h.setdefault("config", {})
    time = config.setdefault("timeControl", {})
    for key in _TIME_FIELDS:
        time.setdefault(key, 0)
    policies = config.setdefault("policies", {})
    for key in _POLICY_FIELDS:
        policies.setdefault(key, 0)


def _result(result: dict[str, Any]) -> None:
    complete = result.pop("complete", False)
    result["ending"] = "MATCH_ENDING_COMPLETE" if complete else "MATCH_ENDING_ABORTED"
    for seat in result.get("seats", []):
        for palace in seat.get("breakdown", {}).get("palaces", []):
            if "roofSquare" in palace:
                palace["rooftopSquare"] = palace.pop("roofSquare")
