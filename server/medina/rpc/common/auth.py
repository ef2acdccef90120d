"""The organiser credential: a bearer token in the ``authorization`` metadata."""

from __future__ import annotations

from typing import Any

import grpc

from .status import Reason, abort
from .tokens import same_token


async def require_organiser(context: grpc.aio.ServicerContext[Any, Any], token: str | None) -> None:
    """Abort with UNAUTHENTICATED unless the call carries ``Bearer <token>`` (when one is set)."""
    if not token:
        return
    given = ""
    for key, value in context.invocation_metadata() or ():
        if key == "authorization" and isinstance(value, str):
            given = value.removeprefix("Bearer ").strip()
    if not same_token(given, token):
        await abort(
            context,
            grpc.StatusCode.UNAUTHENTICATED,
            Reason.ORGANISER_TOKEN_INVALID,
            "organiser calls need 'authorization: Bearer <organiser token>' metadata",
        )
