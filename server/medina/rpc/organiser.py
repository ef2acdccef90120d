"""The organiser's side of CreateMatch: create a match the way a server asks to be asked.

A server at capacity refuses with RESOURCE_EXHAUSTED (reason SERVER_FULL) and a retry hint
(``retry_after_ms``); one restarting a worker with UNAVAILABLE (NO_WORKER); a reply can be
lost. ``create_match`` retries those with the hint (or backoff) until ``give_up_s``, under
one request id, so a retry after a lost reply returns the match the first call created.
The command line's ``match`` and the tournament runner create their matches through it.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import time
import uuid

import grpc

from medina.v1 import admin_pb2, admin_pb2_grpc

from .common.status import reason_of

__all__ = ["create_match"]

log = logging.getLogger("medina.rpc")

#: Reasons (and, from a server without reasons, codes) worth retrying.
RETRY_REASONS = frozenset({"SERVER_FULL", "NO_WORKER"})
RETRY_CODES = frozenset({grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.UNAVAILABLE})


async def create_match(
    stub: admin_pb2_grpc.MatchServiceAsyncStub,
    request: admin_pb2.CreateMatchRequest,
    *,
    metadata: tuple[tuple[str, str], ...] = (),
    timeout_s: float = 30.0,
    give_up_s: float = 120.0,
) -> admin_pb2.CreateMatchResponse:
    """CreateMatch, retried while the server is full or briefly unavailable (and after a
    lost reply, under the same request id); the last error once ``give_up_s`` has passed."""
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
            reason, retry_after_ms = _reason(exc)
            retry = reason in RETRY_REASONS or (
                not reason and exc.code() in (*RETRY_CODES, grpc.StatusCode.DEADLINE_EXCEEDED)
            )
            wait = retry_after_ms / 1000 if retry_after_ms else backoff
            if not retry or time.monotonic() + wait > give_up_at:
                raise
            log.info("CreateMatch: %s (%s); trying again in %.1f s", exc.details(), reason, wait)
            await asyncio.sleep(wait)  # the server asked for this pause
            backoff = min(backoff * 2, 5.0)


def _reason(exc: grpc.aio.AioRpcError) -> tuple[str, int]:
    """The ErrorInfo reason of a refusal and its retry hint in ms (0: none)."""
    reason, metadata = reason_of(exc.trailing_metadata())
    hint = metadata.get("retry_after_ms", "")
    return reason, int(hint) if hint.isdigit() else 0
