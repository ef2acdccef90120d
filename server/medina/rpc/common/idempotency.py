"""Idempotent match creation: ``CreateMatchRequest.request_id`` (AIP-155).

A tournament runner or a ladder that lost CreateMatch's reply retries with the same id and
gets the match the first call created, tokens included, instead of a second match whose
seats nobody will take. A retry that arrives while the first call is still under way waits
for it. A failed call is forgotten, so its retry tries again.
"""

from __future__ import annotations

import asyncio
import copy
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import grpc

from medina.v1 import admin_pb2

from .status import Reason, abort

__all__ = ["MAX_REQUEST_ID", "CreatedMatches", "RequestIdError", "create_once"]

#: Longest request id accepted, in characters.
MAX_REQUEST_ID = 128


class RequestIdError(ValueError):
    """A request id that is too long, or reused with another configuration."""

    def __init__(self, message: str, *, reused: bool) -> None:
        super().__init__(message)
        self.reused = reused


@dataclass(slots=True)
class _Entry:
    fingerprint: bytes
    answer: asyncio.Future[admin_pb2.CreateMatchResponse]
    at: float


class _Refused(Exception):
    """``create()`` was refused (admission control): nothing to keep under the id."""


class CreatedMatches:
    """The answers of recent CreateMatch calls that named a request id."""

    def __init__(
        self,
        keep_s: float = 24 * 3600,
        most: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.keep_s = keep_s
        self.most = most
        self.clock = clock
        self._entries: OrderedDict[str, _Entry] = OrderedDict()

    async def once(
        self,
        request: admin_pb2.CreateMatchRequest,
        create: Callable[[], Awaitable[admin_pb2.CreateMatchResponse | None]],
    ) -> admin_pb2.CreateMatchResponse | None:
        """``create()``'s answer, computed once per request id (every call without an id
        creates); None when ``create()`` was refused, which is not kept: a retry under the
        id asks again. Raises RequestIdError for an id that is too long or reused with
        another configuration."""
        rid = request.request_id
        if not rid:
            return await create()
        if len(rid) > MAX_REQUEST_ID:
            raise RequestIdError(
                f"request_id has {len(rid)} characters; at most {MAX_REQUEST_ID} are allowed",
                reused=False,
            )
        self._expire()
        fingerprint = request.config.SerializeToString(deterministic=True)
        entry = self._entries.get(rid)
        if entry is not None:
            if entry.fingerprint != fingerprint:
                raise RequestIdError(
                    f"request_id {rid!r} was used for a match with another configuration; "
                    "use a new id for a new match",
                    reused=True,
                )
            try:
                answer = await asyncio.shield(entry.answer)
            except Exception:
                return await self.once(request, create)  # the first call failed: try anew
            return copy.deepcopy(answer)
        future: asyncio.Future[admin_pb2.CreateMatchResponse] = (
            asyncio.get_running_loop().create_future()
        )
        self._entries[rid] = _Entry(fingerprint, future, self.clock())
        try:
            created = await create()
        except BaseException as exc:
            # Forgotten, so that a retry tries again; a retry waiting meanwhile fails alike.
            self._forget(rid, future, exc if isinstance(exc, Exception) else RuntimeError(exc))
            raise
        if created is None:
            # Refused, and forgotten alike; a retry waiting meanwhile asks for itself. The
            # exception is never raised, so it holds no traceback and no frame.
            self._forget(rid, future, _Refused())
            return None
        future.set_result(created)
        return created

    def _forget(
        self, rid: str, future: asyncio.Future[admin_pb2.CreateMatchResponse], exc: Exception
    ) -> None:
        self._entries.pop(rid, None)
        if not future.done():
            future.set_exception(exc)
            future.exception()  # retrieved: no "never retrieved" warning

    def _expire(self) -> None:
        """Forget ids older than ``keep_s``, and the oldest beyond ``most``."""
        now = self.clock()
        entries = self._entries
        while entries:
            rid, entry = next(iter(entries.items()))
            if now - entry.at < self.keep_s and len(entries) < self.most:
                break
            if not entry.answer.done():
                break  # still under way: kept until it is answered
            del entries[rid]


async def create_once(
    created: CreatedMatches,
    request: admin_pb2.CreateMatchRequest,
    context: grpc.aio.ServicerContext[Any, Any],
    create: Callable[[], Awaitable[admin_pb2.CreateMatchResponse | None]],
) -> admin_pb2.CreateMatchResponse | None:
    """CreateMatch's answer through ``created`` (the single server's and the front's one
    way): a bad or reused request id ends the call with INVALID_ARGUMENT and its reason."""
    try:
        return await created.once(request, create)
    except RequestIdError as exc:
        await abort(
            context,
            grpc.StatusCode.INVALID_ARGUMENT,
            Reason.REQUEST_ID_REUSED if exc.reused else Reason.REQUEST_INVALID,
            str(exc),
            field="request_id",
        )
