"""The open-files limit of a server process: every bot stream's connection and every running
match's record is an open file, and the soft limit a login shell or a service manager hands a
process is often 1,024, reached by about 250 matches whose four bots each connect on their
own. A process may raise its soft limit up to its hard limit (usually 524,288 or more on
Linux) without privileges, as Go's runtime and nginx's ``worker_rlimit_nofile`` do, so the
servers (``serve``, ``ladder serve``) raise it at start. An operator's lower hard limit is
kept: it is the operator's ceiling.
"""

from __future__ import annotations

import logging

__all__ = ["CEILING", "raise_open_files_limit"]

log = logging.getLogger("medina.cli")

#: The most a server asks for: beyond it an unlimited hard limit would only cost the kernel
#: a larger descriptor table.
CEILING = 1 << 20


def raise_open_files_limit() -> tuple[int, int] | None:
    """Raise the soft open-files limit to the hard limit (at most ``CEILING``); the soft
    limit before and after, or None where there is no such limit (Windows) or it cannot be
    changed."""
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows has no rlimits
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = CEILING if hard == resource.RLIM_INFINITY else min(hard, CEILING)
    if soft == resource.RLIM_INFINITY or soft >= wanted:
        return soft, soft
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    except (ValueError, OSError) as exc:  # a sandbox may forbid it: the old limit stands
        log.warning("cannot raise the open-files limit from %d to %d: %s", soft, wanted, exc)
        return soft, soft
    log.info("open-files limit raised from %d to %d", soft, wanted)
    return soft, wanted
