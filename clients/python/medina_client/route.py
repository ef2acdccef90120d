"""Where a seat's streams go: the address the bot was given, or the one a server's Redirect
named (protocol 1.1, feature "redirect": a server running its matches in several processes
sends a bot straight to the process holding its match)."""

from __future__ import annotations

from dataclasses import dataclass, field

from medina.wire.shared.addresses import address_port_error, host_port

from .errors import AddressError, Redirected

__all__ = ["MAX_REDIRECTS", "Route", "check_address"]

#: Redirects followed in a row before the bot goes back to the address it was given.
MAX_REDIRECTS = 3


@dataclass
class Route:
    """The address of the next stream, and whether to ask for redirects."""

    given: str
    current: str = field(default="")
    #: Ask the server for redirects (off after a redirect led nowhere, and for an address
    #: that is not HOST:PORT, such as a unix socket).
    redirects: bool = True
    _followed: int = 0

    def __post_init__(self) -> None:
        check_address(self.given)
        self.current = self.current or self.given
        if host_port(self.given) is None:
            self.redirects = False

    @property
    def redirected(self) -> bool:
        """Whether the next stream goes where a redirect said."""
        return self.current != self.given

    def follow(self, redirect: Redirected) -> None:
        """Go where ``redirect`` says (its host, or the given address's host)."""
        self._followed += 1
        parts = host_port(self.given)
        if parts is None or self._followed > MAX_REDIRECTS:
            self.fall_back()
            return
        host = redirect.host or parts[0]
        self.current = f"{host}:{redirect.port}"

    def arrived(self) -> None:
        """A Welcome came: the redirects so far led somewhere."""
        self._followed = 0

    def fall_back(self) -> None:
        """Back to the given address, no longer asking for redirects."""
        self.current = self.given
        self.redirects = False


def check_address(address: str) -> None:
    """AddressError when ``address`` is ``HOST:PORT`` with a port out of 1..65535 (other
    targets, such as ``unix:PATH``, are left to gRPC)."""
    why = address_port_error(address)
    if why is not None:
        raise AddressError(f"server address {address}: {why}")
