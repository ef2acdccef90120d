"""gRPC core's options for the processes ``medina-arena`` runs, set on import: gRPC reads them
from the environment once, when ``grpc`` is first imported, so ``medina.cli`` imports this
module before anything else. An operator's own setting of either variable is kept, even
empty. (``GRPC_ENABLE_FORK_SUPPORT``: ``without_fork_handlers``.) Both are for the arena's own
processes: the bots it starts do not inherit them (``medina.boundary.environment``).

``GRPC_EXPERIMENTS=-event_engine_listener``: a server's connections are accepted and served
through gRPC's older I/O path (epoll, polled by the thread that collects completed
operations) rather than the EventEngine listener's own threads, which hand every message to
that thread. Measured with grpcio 1.85 on the 2-core development machine, `serve`'s defaults,
bots written from the proto in one process, runs alternating with it and without it
(``GRPC_EXPERIMENTS`` empty), the server's CPU per decision was lower or equal in every pair:

- 128 matches of instant bots sending the SDK's Hello, 6 pairs: 6-23 % less CPU (median
  19 %), 3-22 % more decisions/s, a bot-seen p99 20-45 % lower;
- the same asking for updates, 5 pairs: 0-11 % less CPU, -6 to +11 % decisions/s, the p99
  higher in 4 of them;
- 256 matches of bots thinking 20-80 ms, 2 pairs: 11 and 35 % less CPU, 4 and 52 % more
  decisions/s, the p99 6 and 20 % higher.

Under load the tail is the admission control's (it holds the server's own turnaround near a
tenth of the shortest clock), and these runs let different numbers of matches in; the CPU a
decision costs is what this option changes.

A stand-in server with no referee (one stream per seat, 128 matches) used 15-30 % less CPU
per round trip with it.

Set only for the grpcio releases it was measured with (1.85), and only when the environment
names no experiments of its own: an operator's ``GRPC_EXPERIMENTS`` (even empty) is kept.
"""

from __future__ import annotations

import os
from importlib import metadata

from medina.boundary.environment import set_own

__all__ = ["EXPERIMENTS", "MEASURED_RELEASES", "apply", "quiet_core", "without_fork_handlers"]

#: The experiments this module turns off.
EXPERIMENTS = "-event_engine_listener"
#: grpcio releases (major.minor) whose servers were measured faster with ``EXPERIMENTS``.
MEASURED_RELEASES = frozenset({"1.85"})


def apply() -> bool:
    """Set ``GRPC_EXPERIMENTS`` unless it is set or grpcio is another release; whether it
    was set."""
    if "GRPC_EXPERIMENTS" in os.environ:
        return False
    try:
        release = ".".join(metadata.version("grpcio").split(".")[:2])
    except metadata.PackageNotFoundError:
        return False
    if release not in MEASURED_RELEASES:
        return False
    return set_own("GRPC_EXPERIMENTS", EXPERIMENTS)


def without_fork_handlers() -> bool:
    """Set ``GRPC_ENABLE_FORK_SUPPORT=false`` unless it is set; whether it was set.

    With fork support on, gRPC runs handlers around every ``fork()`` of the process. No
    process here forks to go on using gRPC: every child executes another program at once.
    But uvloop starts subprocesses (a front's replacement workers, bots) with ``fork()``,
    and with gRPC's threads busy the handlers gave up and logged so on every start ("Other
    threads are currently calling into gRPC, skipping fork() handlers" in the front's log
    as it replaced a killed worker); asyncio's own loop uses ``vfork()``, which runs none.
    """
    return set_own("GRPC_ENABLE_FORK_SUPPORT", "false")


def quiet_core() -> bool:
    """Set ``GRPC_VERBOSITY=ERROR`` unless it is set; whether it was set.

    gRPC's core logs a line at INFO for every TLS handshake that fails ("Handshake failed
    with error SSL_ERROR_SSL ..."): on a public address every port scanner, every client
    speaking plain HTTP or gRPC without TLS, wrote one to the server's log (20 junk
    connections, 20 lines), unbounded at the rate anyone connects. The server logs what an
    operator acts on itself; ``GRPC_VERBOSITY=INFO`` (or ``DEBUG``) brings gRPC's back.
    """
    return set_own("GRPC_VERBOSITY", "ERROR")


apply()
without_fork_handlers()
quiet_core()
