"""The event loop a server process runs on: uvloop where it is installed, else asyncio's.

A server's Python time per decision is mostly the event loop's own work around gRPC's
messages (futures, callbacks, timers, the wake-ups from gRPC's poller), which uvloop does
in compiled code. Measured on 27 November 2026 on the 2-core development machine, `serve`'s
defaults, bots written from the proto in one process, runs alternating with uvloop and
without (``MEDINA_EVENT_LOOP=asyncio``): 128 matches of instant bots asking for updates,
four pairs, 0-16 % less server CPU per decision (424 against 434, 416/497, 499/581 and
424/425 µs); sending the SDK's Hello, two pairs, 7 and 14 % less. (256 matches of thinking
bots, two pairs, went one way each: the admission control lets different loads in.)

``MEDINA_EVENT_LOOP`` chooses: ``uvloop``, ``asyncio``, or unset (uvloop if installed: it is a
dependency of the server wherever it builds, which is not Windows). The choice is read once
per process, and a front's workers inherit it with its environment.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Coroutine
from importlib import metadata
from typing import Any, TypeVar

from .errors import CommandError

__all__ = ["ENV", "KINDS", "loop_factory", "run"]

T = TypeVar("T")

ENV = "MEDINA_EVENT_LOOP"
KINDS = ("uvloop", "asyncio")


def loop_factory() -> tuple[str, Callable[[], asyncio.AbstractEventLoop]]:
    """The loop to run on, by ``MEDINA_EVENT_LOOP``: its name and how to make one.
    CommandError for a value that names no loop, or for uvloop asked for by name and not
    installed."""
    asked = os.environ.get(ENV)
    if asked is not None and asked not in KINDS:
        raise CommandError(f"{ENV}={asked!r}: it must be one of {', '.join(KINDS)} (or unset)")
    if asked == "asyncio":
        return "asyncio", asyncio.new_event_loop
    try:
        import uvloop
    except ImportError:
        if asked == "uvloop":
            raise CommandError(
                f"{ENV}=uvloop, but uvloop is not installed (pip install uvloop)"
            ) from None
        return "asyncio", asyncio.new_event_loop
    return f"uvloop {metadata.version('uvloop')}", uvloop.new_event_loop


def run(
    main: Coroutine[Any, Any, T],
    factory: Callable[[], asyncio.AbstractEventLoop] | None = None,
) -> T:
    """``asyncio.run(main)`` on the loop ``factory`` makes (by default: ``loop_factory``'s)."""
    if factory is None:
        try:
            _name, factory = loop_factory()
        except CommandError:
            main.close()  # never awaited: say so quietly rather than warn
            raise
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(main)
