"""The open-files limit of a server process: every bot stream's connection and every running
match's record is an open file, and the soft limit a login shell or a service manager hands a
process is often 1,024, reached by about 250 matches whose four bots each connect on their
own. A process may raise its soft limit up to its hard limit (usually 524,288 or more on
Linux) without privileges, as Go's runtime and nginx's ``worker_rlimit_nofile`` do, so the
servers (``serve``, ``ladder serve``) raise it at start. An operator's lower hard limit is
kept: it is the operator's ceiling.

Whatever the limit, the server's admission control keeps the process below it
(``rpc.common.admission``: a match waiting or running may hold its record and a connection
per bot; CreateMatch is refused beyond the budget); ``report_budget`` tells the operator at
start how many matches that is, and warns when it binds before a limit the operator set.
"""

from __future__ import annotations

import logging

from medina.rpc.common.admission import (
    MOST_PLAYERS,
    RAISE_OPEN_FILES,
    AdmissionLimits,
    files_budget,
    files_reserve,
    match_files,
    matches_within,
)

__all__ = ["CEILING", "raise_open_files_limit", "report_budget"]

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


def report_budget(
    admission: AdmissionLimits, *, max_queued_given: bool, workers: int = 1
) -> tuple[int, int] | None:
    """Log how many matches waiting or running the open-files limit (``max_open_files``)
    holds, 4-player and 2-player, and warn when it binds before ``--max-matches`` or an
    explicit ``--max-queued`` (``max_queued_given``; the default's queue is only noted).
    With ``workers`` above 1 each worker has the limit, and the front, which forwards the
    bots that do not follow redirects, counts every match at ``MOST_PLAYERS`` files.
    Returns the two counts (for the whole server), or None when the limit is not weighed."""
    limit = admission.max_open_files
    if limit is None:
        return None
    counts: list[int] = []
    for players in (MOST_PLAYERS, 2):
        held = matches_within(limit, match_files(players))
        if workers > 1:  # the front admits while every match at the most and this fit
            front = max(0, (files_budget(limit) - players) // MOST_PLAYERS + 1)
            held = min(workers * held, front)
        counts.append(held)
    most, pairs = counts
    where = "" if workers == 1 else f" across {workers} workers and their front"
    holds = (
        f"the open-files limit of {limit} holds at most {most} {MOST_PLAYERS}-player "
        f"matches waiting or running{where} ({pairs} 2-player; {files_reserve(limit)} files "
        "are kept for listeners, organisers and spectators)"
    )
    log.info("%s: CreateMatch is refused (SERVER_FULL) beyond them", holds)
    bound = [("--max-matches", admission.max_matches)]
    if admission.max_queued > 0:
        bound.append(("--max-queued", admission.max_queued))
    for option, value in bound:
        if value is None or value <= most:
            continue
        if option == "--max-queued" and not max_queued_given:
            log.info("the start queue's default of %d matches cannot fill: %s", value, holds)
            continue
        log.warning(
            "%s %d will not be reached with %d-player matches: %s; %s",
            option,
            value,
            MOST_PLAYERS,
            holds,
            RAISE_OPEN_FILES,
        )
    return most, pairs
