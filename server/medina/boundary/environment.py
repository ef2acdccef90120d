"""The variables ``medina-arena`` sets in its own environment for itself, kept from the
programs it starts for others (bots): a bot's runtime is the bot author's, not tuned for
the arena's server. Standard library only: the CLI sets them before gRPC is imported, and
every place that starts a bot (``launch/botproc.py``, the ladder's house bots) strips them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

__all__ = ["for_others", "set_own"]

#: name -> the value this process set (only variables it found unset).
_OWN: dict[str, str] = {}


def set_own(name: str, value: str) -> bool:
    """Set ``name`` for this process (and its own server processes) unless it is set, even
    empty: an operator's value is kept. Whether it was set here."""
    if name in os.environ:
        return False
    os.environ[name] = value
    _OWN[name] = value
    return True


def for_others(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """``environ`` (default: this process's) without the variables ``set_own`` set, where
    they still hold the value it gave them: the environment a bot process starts from."""
    env = os.environ if environ is None else environ
    return {k: v for k, v in env.items() if k not in _OWN or _OWN[k] != v}
