"""What a refused call or a failed stream says, as data: the ``google.rpc.ErrorInfo`` a
Medina Arena server (protocol 1.1) puts in every error status, and which reasons a bot
retries (docs/protocol.md, "Errors").
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from google.rpc.error_details_pb2 import ErrorInfo
from google.rpc.status_pb2 import Status

__all__ = ["DOMAIN", "FINAL", "RETRY", "StatusInfo", "status_info"]

#: The domain of a Medina Arena server's ErrorInfo.
DOMAIN = "medina.v1"
_DETAILS_KEY = "grpc-status-details-bin"

#: Reasons that retrying (with backoff) may fix: the server is busy, restarting a worker,
#: or the seat is still held by a stream of ours that broke without the server noticing.
RETRY = frozenset({"NO_WORKER", "TOO_MANY_STREAMS", "SEAT_TAKEN", "SERVER_FULL", "HELLO_TIMEOUT"})
#: Reasons that end the bot's session for good: nothing is left to play on this seat.
FINAL = frozenset(
    {
        "MATCH_OVER",
        "SEAT_FORFEITED",
        "SEAT_TOKEN_UNKNOWN",
        "PROTOCOL_VERSION_UNSUPPORTED",
        "WORKER_LOST",
        "SHUTTING_DOWN",
        "HELLO_MISSING",
        "HELLO_INVALID",
        "SEAT_TAKEN_OVER",
    }
)


@dataclass(frozen=True)
class StatusInfo:
    """The reason of an error status (empty from a server that sends none) and its metadata."""

    reason: str = ""
    metadata: dict[str, str] = field(default_factory=dict)


def status_info(trailing_metadata: Iterable[tuple[str, str | bytes]] | None) -> StatusInfo:
    """The ErrorInfo of domain medina.v1 in a call's trailing metadata, if any."""
    for key, value in trailing_metadata or ():
        if key != _DETAILS_KEY or not isinstance(value, bytes):
            continue
        try:
            status = Status.FromString(value)
        except Exception:  # a malformed detail says nothing
            return StatusInfo()
        for detail in status.details:
            info = ErrorInfo()
            if detail.Unpack(info) and info.domain == DOMAIN:
                return StatusInfo(info.reason, dict(info.metadata))
    return StatusInfo()
