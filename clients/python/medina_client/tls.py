"""What a connection that failed over TLS says to a bot author: gRPC reports a certificate it
refused, a server without TLS and a handshake the server broke off all as UNAVAILABLE with
a message of its C core; ``explain`` names the side at fault and the option that fixes it."""

from __future__ import annotations

from dataclasses import dataclass

from .errors import MedinaClientError

__all__ = ["TlsError", "Trouble", "explain"]


class TlsError(MedinaClientError):
    """The connection's TLS cannot work as configured (the server's certificate is not
    trusted or names another host, or the server does not serve TLS): retrying cannot fix
    it."""


@dataclass(frozen=True)
class Trouble:
    """What went wrong, in the bot author's terms; ``final``: no retry can fix it."""

    text: str
    final: bool


#: (what gRPC's details hold, what it means, final), with TLS on the bot's side.
_WITH_TLS = (
    (
        "Hostname Verification Check failed",
        "the server's TLS certificate does not name the host you dialled; connect by the "
        "name or address its certificate names (ask the organiser)",
        True,
    ),
    (
        "CERTIFICATE_VERIFY_FAILED",
        "the server's TLS certificate is not signed by the CA given with --tls-ca (ask the "
        "organiser for the CA that signed it), or has expired",
        True,
    ),
    (
        "WRONG_VERSION_NUMBER",
        "the server does not serve TLS: connect without --tls-ca, --tls-cert and --tls-key",
        True,
    ),
    (
        "Failed to create security handshaker",
        "this bot's client certificate and key cannot be used (--tls-cert, --tls-key)",
        True,
    ),
    (
        "Socket closed",
        "the server closed the connection during the TLS handshake: if it requires client "
        "certificates (mutual TLS), pass --tls-cert and --tls-key with a certificate signed "
        "by the CA the organiser trusts",
        False,
    ),
)
#: The same without TLS on the bot's side.
_PLAINTEXT = (
    (
        "Socket closed",
        "the server closed the connection: if it serves TLS, pass --tls-ca with the CA that "
        "signed its certificate (ask the organiser)",
        False,
    ),
)


def explain(details: str, tls: bool) -> Trouble | None:
    """What a connection failure's ``details`` mean for a bot that dialled with TLS (or
    without), or None when TLS does not explain them."""
    for found, text, final in _WITH_TLS if tls else _PLAINTEXT:
        if found in details:
            return Trouble(text, final)
    return None
