"""The organiser credential: a bearer token in the ``authorization`` metadata."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import grpc

from .status import Reason, abort
from .tokens import same_token


class CredentialError(ValueError):
    """The ``authorization`` metadata is not one ``Bearer <credential>``."""


def bearer_metadata(credential: str | None) -> tuple[tuple[str, str], ...]:
    """The metadata a call carries ``credential`` in (none for None or ""): what ``bearer``
    reads."""
    return (("authorization", f"Bearer {credential}"),) if credential else ()


def bearer(metadata: Iterable[tuple[str, str | bytes]] | None) -> str:
    """The credential of the call's one ``authorization: Bearer <credential>`` metadata (the
    scheme in any case, RFC 9110); "" when there is none; CredentialError for a value
    without the scheme, or more than one: with two, which one counts would be a guess (the
    last one did)."""
    given = [v for k, v in metadata or () if k == "authorization"]
    if not given:
        return ""
    if len(given) > 1:
        raise CredentialError(f"{len(given)} authorization metadata values; send one")
    value = given[0]
    if not isinstance(value, str):
        raise CredentialError("the authorization metadata is binary; send text")
    scheme, space, credential = value.strip().partition(" ")
    if not space or scheme.lower() != "bearer":
        raise CredentialError("the authorization metadata is not 'Bearer <credential>'")
    return credential.strip()


def carries_token(context: grpc.aio.ServicerContext[Any, Any], token: str | None) -> bool:
    """Whether the call carries ``Bearer <token>``; never when no token is set (on a server
    without one anybody may make organiser calls, so nobody is known to be the organiser)."""
    if not token:
        return False
    try:
        given = bearer(context.invocation_metadata())
    except CredentialError:
        return False
    return same_token(given, token)


async def require_organiser(context: grpc.aio.ServicerContext[Any, Any], token: str | None) -> None:
    """Abort with UNAUTHENTICATED unless the call carries ``Bearer <token>`` (when one is set)."""
    if token and not carries_token(context, token):
        try:
            bearer(context.invocation_metadata())
            why = ""
        except CredentialError as exc:
            why = f" ({exc})"
        await abort(
            context,
            grpc.StatusCode.UNAUTHENTICATED,
            Reason.ORGANISER_TOKEN_INVALID,
            f"organiser calls need 'authorization: Bearer <organiser token>' metadata{why}",
        )
