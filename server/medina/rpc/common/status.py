"""Statuses a program can act on: every status that ends a stream or refuses a call carries a
``google.rpc.ErrorInfo`` (reason, domain ``medina.v1``, metadata) in its details.

The reasons are a closed table (``Reason``, documented in docs/protocol.md, "Errors"): a
client switches on the reason, never on the English text, which may change. The details
travel the standard way, as a serialized ``google.rpc.Status`` in the
``grpc-status-details-bin`` trailing metadata, so every gRPC library's status helpers read them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, NoReturn

import grpc
from google.protobuf import any_pb2
from google.rpc.error_details_pb2 import ErrorInfo
from google.rpc.status_pb2 import Status

__all__ = [
    "DETAILS_KEY",
    "DOMAIN",
    "Reason",
    "Refused",
    "abort",
    "error_info",
    "reason_of",
    "refuse",
    "trailers",
]

#: The error domain of every ErrorInfo this server sends.
DOMAIN = "medina.v1"
#: The trailing metadata key of a status's details (the gRPC convention).
DETAILS_KEY = "grpc-status-details-bin"


class Reason(StrEnum):
    """Why a stream ended or a call was refused: one reason per cause (docs/protocol.md)."""

    # -- bot streams (ArenaService.Play) --------------------------------------------------
    #: No Hello within the handshake timeout.
    HELLO_TIMEOUT = "HELLO_TIMEOUT"
    #: The stream closed before Hello, or its first message was not Hello.
    HELLO_MISSING = "HELLO_MISSING"
    #: Hello.bot_name or bot_version cannot name the bot (too long, a control character).
    HELLO_INVALID = "HELLO_INVALID"
    #: Hello.protocol_version is not one this server speaks.
    PROTOCOL_VERSION_UNSUPPORTED = "PROTOCOL_VERSION_UNSUPPORTED"
    #: No match has a seat with this token.
    SEAT_TOKEN_UNKNOWN = "SEAT_TOKEN_UNKNOWN"
    #: The match has ended: there is nothing left to play.
    MATCH_OVER = "MATCH_OVER"
    #: The seat has forfeited and cannot be taken up again.
    SEAT_FORFEITED = "SEAT_FORFEITED"
    #: Another live stream holds the seat and no valid resume token was given.
    SEAT_TAKEN = "SEAT_TAKEN"
    #: A newer stream took this stream's seat over with the resume token: this one ends.
    SEAT_TAKEN_OVER = "SEAT_TAKEN_OVER"
    #: A message is not a PlayRequest (corrupt bytes).
    MESSAGE_MALFORMED = "MESSAGE_MALFORMED"
    #: A message is over the server's size limit.
    MESSAGE_TOO_LARGE = "MESSAGE_TOO_LARGE"
    #: The stream kept sending unsolicited messages past the rate limit.
    FLOODING = "FLOODING"
    #: The client address already holds the most open streams allowed.
    TOO_MANY_STREAMS = "TOO_MANY_STREAMS"
    # -- the server -------------------------------------------------------------------------
    #: No worker process is running (a multi-worker server restarting one).
    NO_WORKER = "NO_WORKER"
    #: The worker process holding the match died; the match is lost.
    WORKER_LOST = "WORKER_LOST"
    #: The server is shutting down.
    SHUTTING_DOWN = "SHUTTING_DOWN"
    # -- organiser calls (MatchService) and spectators --------------------------------------
    #: The organiser credential is missing or wrong.
    ORGANISER_TOKEN_INVALID = "ORGANISER_TOKEN_INVALID"
    #: The match configuration is invalid (the message names the field).
    MATCH_CONFIG_INVALID = "MATCH_CONFIG_INVALID"
    #: The server takes no more matches now (its limit, or its load).
    SERVER_FULL = "SERVER_FULL"
    #: The match record cannot be created (the records directory).
    RECORD_UNWRITABLE = "RECORD_UNWRITABLE"
    #: No match with this id.
    MATCH_NOT_FOUND = "MATCH_NOT_FOUND"
    #: The match has already ended (it cannot be aborted, nor a seat of it forfeited).
    MATCH_ENDED = "MATCH_ENDED"
    #: A request field other than the config is invalid (page token, page size, request id,
    #: a seat the match does not have).
    REQUEST_INVALID = "REQUEST_INVALID"
    #: CreateMatchRequest.request_id was used before with another configuration.
    REQUEST_ID_REUSED = "REQUEST_ID_REUSED"

    # -- the ladder (LadderService) -------------------------------------------------------
    #: The lobby call has no bot key, or not one of this ladder's (or it was rotated).
    BOT_KEY_INVALID = "BOT_KEY_INVALID"
    #: The bot's key was revoked by the organiser.
    BOT_REVOKED = "BOT_REVOKED"
    #: This version of the bot is suspended for its faults (another version may play).
    BOT_SUSPENDED = "BOT_SUSPENDED"
    #: The same bot has a live lobby stream already (here or on another server).
    BOT_CONNECTED_ELSEWHERE = "BOT_CONNECTED_ELSEWHERE"
    #: The lobby's first message is not a valid LobbyHello (the message names the field).
    LOBBY_HELLO_INVALID = "LOBBY_HELLO_INVALID"
    #: The bot opened more lobby streams in a minute than the ladder takes; retry later.
    JOINING_TOO_OFTEN = "JOINING_TOO_OFTEN"
    #: The bot did not echo a heartbeat in time; it is no longer matched.
    HEARTBEAT_MISSED = "HEARTBEAT_MISSED"
    #: The ladder cannot take a bot now (its database cannot be written); retry later.
    LADDER_UNAVAILABLE = "LADDER_UNAVAILABLE"
    #: No bot account with this name.
    BOT_NOT_FOUND = "BOT_NOT_FOUND"
    #: A bot account with this name exists already.
    BOT_EXISTS = "BOT_EXISTS"


#: The longest status message and ErrorInfo metadata value sent, in characters. Both may
#: echo what a client sent (a match id, a token's owner); echoed whole, a 5,000-character
#: match id made the trailers larger than a client accepts (8 KB by default in gRPC), so it
#: saw "received metadata size exceeds limit" instead of the reason.
MAX_MESSAGE_CHARS = 1000
MAX_METADATA_CHARS = 100


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, the cut marked with "..."."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def error_info(reason: Reason, **metadata: object) -> ErrorInfo:
    """An ErrorInfo of this server's domain; metadata values are written as strings (each
    clipped to ``MAX_METADATA_CHARS``)."""
    return ErrorInfo(
        reason=reason.value,
        domain=DOMAIN,
        metadata={k: clip(str(v), MAX_METADATA_CHARS) for k, v in metadata.items()},
    )


def trailers(
    code: grpc.StatusCode, message: str, reason: Reason, metadata: Mapping[str, object]
) -> tuple[tuple[str, bytes], ...]:
    """The trailing metadata carrying the status details (the message clipped to
    ``MAX_MESSAGE_CHARS``)."""
    detail = any_pb2.Any()
    detail.Pack(error_info(reason, **metadata))
    status = Status(code=code.value[0], message=clip(message, MAX_MESSAGE_CHARS), details=[detail])
    return ((DETAILS_KEY, status.SerializeToString()),)


def refuse(
    context: grpc.aio.ServicerContext[Any, Any],
    code: grpc.StatusCode,
    reason: Reason,
    message: str,
    **metadata: object,
) -> None:
    """Set the status ``abort`` would end the call with; the handler then returns (its
    response is not sent). For answers given often, such as a full server's: ``abort``
    raises, and grpc keeps that exception, its traceback and every frame it went through in
    a reference cycle until a full garbage collection, which this server runs rarely."""
    context.set_code(code)
    context.set_details(clip(message, MAX_MESSAGE_CHARS))
    context.set_trailing_metadata(trailers(code, message, reason, metadata))


@dataclass(frozen=True, slots=True)
class Refused:
    """A refusal returned rather than raised, for answers anyone can ask for at any rate (a
    bot stream's handshake): the handler sets it (``set_on``) and returns. An ``abort``
    there left about 6 KB a refusal in reference cycles until the next full collection (a
    client with no token could grow the server by megabytes a second, and that collection
    then stalled every match for seconds)."""

    code: grpc.StatusCode
    reason: Reason
    message: str
    metadata: Mapping[str, object] = field(default_factory=dict)

    def set_on(self, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        """Make this the call's status (``refuse``); the handler then returns."""
        refuse(context, self.code, self.reason, self.message, **self.metadata)

    async def abort(self, context: grpc.aio.ServicerContext[Any, Any]) -> NoReturn:
        """End the call with this status (``abort``), for a call that has sent messages."""
        await abort(context, self.code, self.reason, self.message, **self.metadata)


class Refusal(Exception):
    """A ``Refused`` raised, from a check deep inside a handler (a ladder lobby's key, hello
    and limits); the handler catches it and sets ``refused`` on the call."""

    def __init__(
        self, code: grpc.StatusCode, reason: Reason, message: str, **metadata: object
    ) -> None:
        super().__init__(message)
        self.refused = Refused(code, reason, message, metadata)


async def abort(
    context: grpc.aio.ServicerContext[Any, Any],
    code: grpc.StatusCode,
    reason: Reason,
    message: str,
    **metadata: object,
) -> NoReturn:
    """End the call with ``code``, ``message`` and an ErrorInfo naming ``reason``."""
    await context.abort(
        code, clip(message, MAX_MESSAGE_CHARS), trailers(code, message, reason, metadata)
    )
    raise AssertionError("context.abort returned")  # it always raises


def reason_of(trailing_metadata: Any) -> tuple[str, dict[str, str]]:
    """The ErrorInfo reason and metadata of domain ``medina.v1`` in a failed call's trailing
    metadata (what ``trailers`` wrote); ("", {}) when there is none."""
    for key, value in trailing_metadata or ():
        if key == DETAILS_KEY and isinstance(value, bytes):
            for detail in Status.FromString(value).details:
                info = ErrorInfo()
                if detail.Unpack(info) and info.domain == DOMAIN:
                    return info.reason, dict(info.metadata)
    return "", {}
