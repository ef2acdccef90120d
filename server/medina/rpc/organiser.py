"""The organiser's side of MatchService: create a match the way a server asks to be asked,
and forfeit a seat whose bot process exited.

A server at capacity refuses with RESOURCE_EXHAUSTED (reason SERVER_FULL) and a retry hint
(``retry_after_ms``); one restarting a worker with UNAVAILABLE (NO_WORKER); a reply can be
lost. ``create_match`` retries those with the hint (or backoff) until ``give_up_s``, under
one request id, so a retry after a lost reply returns the match the first call created.
The command line's ``match`` and the tournament runner create their matches through it.

``report_queued`` says, while a match waits in the server's start queue (its bots are
there, the server has no room for it yet, no clock runs), where it stands, so that an
organiser's silence does not read as a hang.

``forfeit_seat`` (ForfeitSeat) is how both tell the referee that a seat's bot process has
exited, whether the server runs in their own process or elsewhere: the seat forfeits at once
(CRASHED) rather than after its reconnect grace or connect deadline. ``seat_forfeiter``
binds it to one match for ``launch.botproc.watch_bot_exit``.

``open_channel`` is how all of them dial a server: in clear, or over TLS with the organiser's
``--tls-ca`` (and ``--tls-cert``/``--tls-key`` for mutual TLS).
"""

from __future__ import annotations

import asyncio
import copy
import logging
import math
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import grpc

from medina.v1 import admin_pb2, admin_pb2_grpc
from medina.wire import matches as wire_matches
from medina.wire.shared.tls import ClientTls

from .common.start_queue import QUEUED_NOTE
from .common.status import reason_of

__all__ = [
    "SeatForfeit",
    "create_match",
    "forfeit_seat",
    "open_channel",
    "refusal_of",
    "report_queued",
    "seat_forfeiter",
]

log = logging.getLogger("medina.rpc")


def open_channel(address: str, tls: ClientTls | None = None) -> grpc.aio.Channel:
    """A channel to the server at ``address``: in clear (``tls`` None), or over TLS trusting
    ``tls.ca`` (the system's roots when None), presenting its client certificate if any."""
    if tls is None:
        return grpc.aio.insecure_channel(address)
    credentials = grpc.ssl_channel_credentials(
        root_certificates=tls.ca, private_key=tls.key, certificate_chain=tls.cert
    )
    return grpc.aio.secure_channel(address, credentials)


#: Reasons (and, from a server without reasons, codes) worth retrying: a full server, no
#: worker, the records' disk short of room (it recovers once the operator frees some).
RETRY_REASONS = frozenset({"SERVER_FULL", "NO_WORKER", "RECORD_UNWRITABLE"})
RETRY_CODES = frozenset({grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.UNAVAILABLE})


async def create_match(
    stub: admin_pb2_grpc.MatchServiceAsyncStub,
    request: admin_pb2.CreateMatchRequest,
    *,
    metadata: tuple[tuple[str, str], ...] = (),
    timeout_s: float = 30.0,
    give_up_s: float = 120.0,
    retry_reasons: frozenset[str] = RETRY_REASONS,
    on_refused: Callable[[str], None] | None = None,
) -> admin_pb2.CreateMatchResponse:
    """CreateMatch, retried while the server is full or briefly unavailable (and after a
    lost reply, under the same request id); the last error once ``give_up_s`` has passed.
    ``retry_reasons``: the refusals waited out (a person at a terminal wants to hear of a
    full disk at once; a ladder waits for it to be freed). ``on_refused`` hears each
    refusal's reason (the status code's name when the server gave none), waited out or
    not: the retries are logged at INFO only."""
    asked = copy.deepcopy(request)
    if not asked.request_id:
        asked.request_id = f"medina-{uuid.uuid4()}"
    give_up_at = time.monotonic() + give_up_s
    backoff = 0.1
    while True:
        try:
            answer: admin_pb2.CreateMatchResponse = await stub.CreateMatch(
                asked, metadata=metadata, timeout=timeout_s
            )
            return answer
        except grpc.aio.AioRpcError as exc:
            reason, retry_after_ms = refusal_of(exc)
            if on_refused is not None:
                on_refused(reason or exc.code().name)
            retry = reason in retry_reasons or (
                not reason and exc.code() in (*RETRY_CODES, grpc.StatusCode.DEADLINE_EXCEEDED)
            )
            wait = retry_after_ms / 1000 if retry_after_ms else backoff
            if not retry or time.monotonic() + wait > give_up_at:
                raise
            log.info("CreateMatch: %s (%s); trying again in %.1f s", exc.details(), reason, wait)
            await asyncio.sleep(wait)  # the server asked for this pause
            backoff = min(backoff * 2, 5.0)


#: How often ``report_queued`` asks, and how often at most it says the place again.
QUEUE_POLL_S = 2.0
QUEUE_SAY_EVERY_S = 10.0


async def report_queued(
    stub: admin_pb2_grpc.MatchServiceAsyncStub,
    match_id: str,
    say: Callable[[str], None],
    *,
    metadata: tuple[tuple[str, str], ...] = (),
    poll_s: float = QUEUE_POLL_S,
    say_every_s: float = QUEUE_SAY_EVERY_S,
) -> None:
    """Until the match is no longer waiting: ``say`` its note each time it is found in the
    server's start queue, the first time at once and then when its place has changed and
    ``say_every_s`` has passed. Cancel it when the match is known to have started; it ends
    on its own once GetMatch shows the match past waiting (or fails)."""
    said, said_at = "", -math.inf
    while True:
        try:
            got = await stub.GetMatch(
                wire_matches.get_request(match_id), metadata=metadata, timeout=10
            )
        except grpc.aio.AioRpcError as exc:
            log.debug("GetMatch %s while it may be queued: %s", match_id, exc.details())
            return
        match = got.match
        if match.state != admin_pb2.MATCH_STATE_WAITING:
            return
        note = match.note
        now = time.monotonic()
        if (
            note.startswith(QUEUED_NOTE)
            and note != said
            and (not said or now - said_at >= say_every_s)
        ):
            say(f"match {match_id} waits for the server: {note}")
            said, said_at = note, now
        await asyncio.sleep(poll_s)  # asking the server again, not waiting on ourselves


def refusal_of(exc: grpc.aio.AioRpcError) -> tuple[str, int]:
    """The ErrorInfo reason of a refusal and its retry hint in ms (0: none)."""
    reason, metadata = reason_of(exc.trailing_metadata())
    hint = metadata.get("retry_after_ms", "")
    return reason, int(hint) if hint.isdigit() else 0


@dataclass(frozen=True, slots=True)
class SeatForfeit:
    """What came of telling the referee that a seat's bot exited (ForfeitSeat)."""

    #: The match had ended already: the exit forfeited nothing (exiting is what bots do then).
    ended: bool = False
    #: Whether a bot ever took the seat up; None when the server did not say (it could not
    #: be reached, or does not know ForfeitSeat: the seat then forfeits after its grace).
    ever_connected: bool | None = None

    @property
    def when(self) -> str:
        """`` during the match``, `` before connecting``, or '' when not known."""
        if self.ever_connected is None:
            return ""
        return " during the match" if self.ever_connected else " before connecting"


async def forfeit_seat(
    stub: admin_pb2_grpc.MatchServiceAsyncStub,
    match_id: str,
    seat: int,
    reason: str,
    *,
    metadata: tuple[tuple[str, str], ...] = (),
    timeout_s: float = 10.0,
) -> SeatForfeit:
    """ForfeitSeat: ``seat`` forfeits now (CRASHED) with ``reason`` (``its bot exited with
    code 1``), to which the server adds whether a bot had taken the seat up. Never raises a
    call's error: a match that had ended is ``ended``; any other refusal is logged and the
    seat is left to its reconnect grace, as before the call existed."""
    request = wire_matches.forfeit_request(match_id, seat, reason)
    try:
        answer: admin_pb2.ForfeitSeatResponse = await stub.ForfeitSeat(
            request, metadata=metadata, timeout=timeout_s
        )
    except grpc.aio.AioRpcError as exc:
        reason_name, _ = refusal_of(exc)
        if reason_name == "MATCH_ENDED" or (
            not reason_name and exc.code() is grpc.StatusCode.FAILED_PRECONDITION
        ):
            return SeatForfeit(ended=True)
        level = logging.INFO if exc.code() is grpc.StatusCode.UNIMPLEMENTED else logging.WARNING
        log.log(
            level,
            "match %s: cannot forfeit seat %d at once (%s: %s); it forfeits after its grace",
            match_id,
            seat,
            exc.code().name,
            exc.details(),
        )
        return SeatForfeit()
    return SeatForfeit(ever_connected=answer.ever_connected)


def seat_forfeiter(
    stub: admin_pb2_grpc.MatchServiceAsyncStub,
    match_id: str,
    metadata: tuple[tuple[str, str], ...] = (),
) -> Callable[[int, str], Awaitable[SeatForfeit]]:
    """``forfeit_seat`` for one match: (seat, reason) -> what came of it."""

    def forfeit(seat: int, reason: str) -> Awaitable[SeatForfeit]:
        return forfeit_seat(stub, match_id, seat, reason, metadata=metadata)

    return forfeit
