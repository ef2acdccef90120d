"""Judging a trial: PASS or FAIL for its check, with one line naming what went wrong."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from medina.engine import Action, ActionKind, EventKind, legal_moves, square_name
from medina.engine.variants import PALACE_COLOURS
from medina.referee.outcome import Termination
from medina.referee.record import DecisionEntry, DecisionSource, ErrorCode, Incident, IncidentKind

from .drills import DRILL_PREFIX
from .runner import Crash, Trial
from .scenarios import KIND_WORDS


@dataclass(frozen=True)
class CheckResult:
    """The verdict of one check."""

    name: str
    passed: bool
    reason: str  # one line: what the bot did, or the first thing it got wrong
    match_id: str = ""
    record: str = ""
    log: str = ""


@dataclass(frozen=True)
class Problem:
    """The first thing the bot got wrong in a trial; ``request_id`` 0 when no request."""

    text: str
    request_id: int = 0


def judge(trial: Trial) -> CheckResult:
    """The verdict of ``trial`` for its scenario's check."""
    name = trial.scenario.name
    verdict = _SPECIAL.get(name, _kind_check if trial.scenario.kind else _clean_run)
    passed, reason = verdict(trial)
    return CheckResult(
        name, passed, reason, trial.match_id, str(trial.record_path), str(trial.log_path)
    )


# -- the first problem of a trial ---------------------------------------------------------


def first_problem(t: Trial) -> Problem | None:
    """The first thing the bot got wrong, in the order it happened, or None."""
    crash = t.crash
    if crash is not None and not crash.connected:
        return Problem(_crash_text(t, crash))
    bot = t.scenario.bot
    armed = dropped = False  # the kit's drop follows the reply to t.dropped_after
    for item in t.timeline:
        if isinstance(item, DecisionEntry):
            if item.seat != bot or item.index < t.opening_end:
                continue
            armed = armed or (t.dropped_after != 0 and item.request_id == t.dropped_after)
            problem = _decision_problem(t, item)
        elif item.seat != bot:
            continue
        elif item.kind is IncidentKind.DISCONNECTED and armed and not dropped:
            dropped = True  # the kit's own drop
            continue
        else:
            problem = _incident_problem(t, item, dropped)
        if problem is not None:
            return problem
    if crash is not None:
        return Problem(_crash_text(t, crash), crash.request_id)
    if t.overran:
        return Problem(f"the match did not end within {t.limit_s:g} s")
    seat = t.outcome.seats[bot]
    if seat.termination is not Termination.NORMAL:
        return Problem(f"its seat ended {seat.termination.name}: {seat.detail}")
    return None


def _incident_problem(t: Trial, incident: Incident, dropped: bool) -> Problem | None:
    s = t.scenario
    if incident.kind is IncidentKind.DISCONNECTED:
        if t.crash is not None:
            return Problem(_crash_text(t, t.crash), t.crash.request_id)
        text = f"its stream ended at decision {incident.at_decision} before MatchEnded"
        if t.exit_code is not None and t.exit_code != 0:  # it died, and the match ended anyway
            says = t.log_says()
            text += " and the bot" + says.exited(_exit_words(t.exit_code))
            ends = says.ends(t.log_path)
            return Problem(f"{text}; {ends}" if ends else text)
        return Problem(f"{text} ({incident.detail or 'no detail'}); the kit did not drop it")
    if incident.kind is IncidentKind.FORFEIT:
        if incident.termination is Termination.STALLED:
            return Problem(f"did not connect within {s.connect_s:g} s of starting")
        if dropped and incident.termination in (Termination.DISCONNECTED, Termination.CRASHED):
            grace = s.policies.reconnect_grace_ms / 1000
            # How the stream ended is said: a gRPC library may hide an OK end from a bot
            # (Ruby's waits for the bot's own request stream to finish first).
            return Problem(
                f"did not reconnect within {grace:g} s after its stream was dropped (the kit "
                "ended it with status OK and no MatchEnded, which means: resume)"
            )
    return None


def _decision_problem(t: Trial, d: DecisionEntry) -> Problem | None:
    bad = [r for r in d.rejections if not r.message.startswith(DRILL_PREFIX)]
    if bad:
        r = bad[0]
        if r.code is ErrorCode.MALFORMED_ACTION:
            return Problem(
                f"sent a malformed reply to request {d.request_id}: {r.message}", d.request_id
            )
        return Problem(
            f"replied to request {d.request_id} with an illegal action: {r.message}", d.request_id
        )
    if d.source is not DecisionSource.BOT and d.request_id:
        said = t.bridge_diagnosis()
        return Problem(
            f"seat {t.scenario.bot} sent no reply to request {d.request_id} "
            f"within {allowed_ms(t, d)} ms" + (f"; the stdio bridge said: {said}" if said else ""),
            d.request_id,
        )
    return None


def allowed_ms(t: Trial, d: DecisionEntry) -> int:
    """The time the bot had for decision ``d`` (its first decision gets the extra time)."""
    clock = t.scenario.time
    first = t.bot_decisions()
    extra = clock.first_decision_extra_ms if first and first[0].index == d.index else 0
    return clock.decision_ms + extra


def _crash_text(t: Trial, crash: Crash) -> str:
    says = t.log_says()
    if not crash.connected:
        when = " before connecting"
    elif crash.request_id:
        when = f" while request {crash.request_id} was open"
        if len(crash.kinds) == 1:
            when += f" (only {KIND_WORDS[next(iter(crash.kinds))]} were legal)"
    else:
        when = " during the match, with no request open"
    if t.limit is not None:
        how = f" was stopped by its sandbox ({t.limit.removeprefix('sandbox: ')}){when}"
    else:
        how = says.exited(_exit_words(crash.code), when)
    ends = says.ends(t.log_path)
    return f"the bot{how}; {ends}" if ends else f"the bot{how}; its log is empty"


def _exit_words(code: int) -> str:
    return f"was killed by signal {-code}" if code < 0 else f"exited with code {code}"


def describe(t: Trial, action: Action) -> str:
    """``a stable at F5`` style text."""
    if action.kind is ActionKind.TEA:
        return "a tea break"
    where = square_name(t.final.rules.geometry, action.square)
    if action.kind is ActionKind.BUILDING:
        return f"{_a(PALACE_COLOURS[action.colour])} building at {where}"
    if action.kind is ActionKind.START_MERCHANT:
        return f"the start merchant at {where}"
    what = _a(KIND_WORDS[action.kind].removesuffix("s"))
    if action.kind in (ActionKind.ROOFTOP, ActionKind.NEUTRAL_ROOFTOP, ActionKind.BLOCKING_ROOFTOP):
        return f"{what} on the palace at {where}"
    return f"{what} at {where}"


def _a(words: str) -> str:
    return f"{'an' if words[0] in 'aeiou' else 'a'} {words}"


# -- the checks ---------------------------------------------------------------------------

Verdict = tuple[bool, str]


def _fail(problem: Problem) -> Verdict:
    return False, problem.text


def _clean_run(t: Trial) -> Verdict:
    problem = first_problem(t)
    if problem is not None:
        return _fail(problem)
    n = len(t.bot_decisions())
    return True, f"answered all {n} of its requests legally and in time"


def _kind_check(t: Trial) -> Verdict:
    kind = t.scenario.kind
    assert kind is not None
    start = t.scenario.start()
    moves = legal_moves(start)
    words = KIND_WORDS[kind]
    target = next((d for d in t.bot_decisions() if d.index == t.opening_end), None)
    problem = first_problem(t)
    if problem is not None:
        at_target = (target is not None and problem.request_id == target.request_id) or (
            t.crash is not None and t.crash.decision == t.opening_end and problem.request_id
        )
        if at_target and kind is not ActionKind.TEA and "were legal" not in problem.text:
            return False, f"{problem.text} (only {words} were legal there)"
        if at_target and kind is ActionKind.TEA:
            return False, f"{problem.text} (a tea break was offered there)"
        return _fail(problem)
    assert target is not None, "a clean run answers the first request"
    did = describe(t, target.action)
    if kind is ActionKind.TEA:
        return True, (
            f"request {target.request_id} offered a tea break among {len(moves)} actions; "
            f"the bot chose {did} in {target.time_ms} ms"
        )
    return True, (
        f"request {target.request_id}: only {words} were legal "
        f"({len(moves)} choice{'' if len(moves) == 1 else 's'}); "
        f"the bot placed {did} in {target.time_ms} ms"
    )


def _tea_and_pass(t: Trial) -> Verdict:
    bot = t.scenario.bot
    start = t.scenario.start()
    tea = passed = -1
    for event in t.final.events_since(start.n_events):
        if event.kind is EventKind.TURN_STARTED and event.seat == bot:
            break
        if event.kind is EventKind.TEA_SPENT:
            tea = event.seat
        elif event.kind is EventKind.PASSED:
            passed = event.seat
    problem = first_problem(t)
    if problem is not None:
        return _fail(problem)
    if tea < 0 or passed < 0:
        return False, "the scripted tea break and pass did not happen (a check-bot bug)"
    answered = t.bot_decisions()
    return True, (
        f"after seat {tea}'s tea break and seat {passed}'s automatic pass the bot "
        f"answered request {answered[0].request_id} and {len(answered) - 1} more"
    )


def _rejection_retry(t: Trial) -> Verdict:
    problem = first_problem(t)
    rid = t.drilled
    if problem is not None:
        if rid and problem.request_id == rid:
            if problem.text.startswith(f"seat {t.scenario.bot} sent no reply"):
                d = next(d for d in t.bot_decisions() if d.request_id == rid)
                return False, (
                    f"did not answer request {rid} again within {allowed_ms(t, d)} ms "
                    "after the drill rejection"
                )
            return False, f"after the drill rejection of request {rid}: {problem.text}"
        return _fail(problem)
    if not rid:
        return False, (
            f"the bot answered fewer than {t.scenario.drill_at} requests, so no drill was made"
        )
    d = next(d for d in t.bot_decisions() if d.request_id == rid)
    return True, (
        f"request {rid} was refused once as a drill; the bot answered it again with "
        f"{describe(t, d.action)} ({d.time_ms} ms in all)"
    )


def _tight_clock(t: Trial) -> Verdict:
    problem = first_problem(t)
    if problem is not None:
        return _fail(problem)
    decisions = t.bot_decisions()
    slowest = max(d.time_ms for d in decisions)
    return True, (
        f"{len(decisions)} decisions at {t.scenario.time.decision_ms} ms each; "
        f"slowest reply {slowest} ms"
    )


def _reconnect(t: Trial) -> Verdict:
    problem = first_problem(t)
    hint = "; a bot must reconnect with Hello.resume_token from its Welcome"
    back = any(i.kind is IncidentKind.RECONNECTED for i in t.incidents())
    if problem is not None:
        if t.dropped_after and not back and problem.text.startswith("the bot"):
            return False, f"after its stream was dropped, {problem.text}{hint}"
        return _fail(problem)
    if not t.dropped_after:
        return False, (
            f"the bot answered fewer than {t.scenario.drop_after} requests, "
            "so its stream was never dropped"
        )
    if not back:
        return False, f"its stream was dropped but it never reconnected{hint}"
    return True, (
        f"its stream was dropped after request {t.dropped_after}; it reconnected with its "
        "resume token and finished the match"
    )


def _match_end(t: Trial) -> Verdict:
    problem = first_problem(t)
    if problem is not None:
        return _fail(problem)
    if t.exit_code is None:
        return False, f"still running {t.scenario.exit_s:g} s after MatchEnded"
    if t.exit_code != 0:
        ends = t.log_ends()
        return False, f"{_exit_words(t.exit_code)} after MatchEnded" + (f"; {ends}" if ends else "")
    return True, f"exited with code 0 {t.exit_after_s:.2f} s after MatchEnded"


_SPECIAL: dict[str, Callable[[Trial], Verdict]] = {
    "tea-and-pass": _tea_and_pass,
    "rejection-retry": _rejection_retry,
    "tight-clock": _tight_clock,
    "reconnect": _reconnect,
    "match-end": _match_end,
}

__all__ = ["CheckResult", "Problem", "allowed_ms", "describe", "first_problem", "judge"]
