"""The organiser credential: a bearer token in the ``authorization`` metadata."""

from __future__ import annotations

from typing import Any

import grpc

from .status import Reason, abort
from .tokens import same_token


def carries_token(context: grpc.aio.ServicerContext[Any, Any], token: str | None) -> bool:
    """Whether the call carries ``Bearer <token>``; never when no token is set (on a server
    without one anybody may make organiser calls, so nobody is known to be the organiser)."""
    if not token:
        return False
    given = ""
    for key, value in context.invocation_metadata() or ():
        if key == "authorization" and isinstance(value, str):
            given = value.removeprefix("Bearer ").strip()
    return same_token(given, token)


async def require_organiser(context: grpc.aio.ServicerContext[Any, Any], token: str | None) -> None:
    """Abort with UNAUTHENTICATED unless the call carries ``Bearer <token>`` (when one is set)."""
    if token and not carries_token(context, token):
        await abort(
            context,
            grpc.StatusCode.UNAUTHENTICATED,
            Reason.ORGANISER_TOKEN_INVALID,
            "organiser calls need 'authorization: Bearer <organiser token>' metadata",
        )
