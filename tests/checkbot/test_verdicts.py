"""Verdicts from hand-made trials: each way a bot can fail names itself in one line."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from medina.checkbot.drills import drill_message
from medina.checkbot.runner import Crash, Trial
from medina.checkbot.scenarios import CHECKS, CheckOptions, Scenario
from medina.checkbot.verdicts import judge
from medina.engine import Action, ActionKind, GameState, apply_action, legal_moves, result
from medina.referee.outcome import MatchOutcome, SeatOutcome, Termination
from medina.referee.record import (
    DecisionEntry,
    DecisionSource,
    ErrorCode,
    Incident,
    IncidentKind,
    Rejection,
)

OPTIONS = CheckOptions(decision_ms=1000, first_extra_ms=500)
BOT = DecisionSource.BOT
TIMEOUT = DecisionSource.TIMEOUT
FALLBACK = DecisionSource.FALLBACK
Item = DecisionEntry | Incident


def outcome(s: GameState, bot: int, termination: Termination, detail: str) -> MatchOutcome:
    res = result(s)
    seats = tuple(
        SeatOutcome(
            seat,
            f"seat {seat + 1}",
            res.totals[seat],
            1,
            res.breakdowns[seat],
            termination if seat == bot else Termination.NORMAL,
            detail if seat == bot else "",
            0,
        )
        for seat in range(s.players)
    )
    return MatchOutcome(seats, termination is not Termination.ABORTED)


def make(
    tmp: Path,
    name: str,
    timeline: Sequence[Item] = (),
    *,
    crash: Crash | None = None,
    exit_code: int | None = 0,
    termination: Termination = Termination.NORMAL,
    detail: str = "",
    drilled: int = 0,
    dropped_after: int = 0,
    overran: bool = False,
    log: str = "",
    final: GameState | None = None,
) -> Trial:
    scenario = CHECKS[name](OPTIONS)
    state = final if final is not None else scenario.start()
    log_path = tmp / f"{name}.log"
    log_path.write_text(log)
    return Trial(
        scenario=scenario,
        match_id="m1",
        record_path=tmp / "m1.jsonl",
        log_path=log_path,
        outcome=outcome(state, scenario.bot, termination, detail),
        timeline=tuple(timeline),
        final=state,
        crash=crash,
        overran=overran,
        limit_s=OPTIONS.limit_s,
        exit_code=exit_code,
        exit_after_s=0.05,
        drilled=drilled,
        dropped_after=dropped_after,
    )


def first_legal(scenario: Scenario) -> Action:
    return legal_moves(scenario.start()).nth(0)


def decision(
    scenario: Scenario,
    rid: int,
    *,
    offset: int = 0,
    source: DecisionSource = BOT,
    rejections: tuple[Rejection, ...] = (),
    time_ms: int = 3,
) -> DecisionEntry:
    index = len(scenario.opening) + offset
    return DecisionEntry(
        index, scenario.bot, rid, first_legal(scenario), time_ms, rejections, source
    )


def incident(scenario: Scenario, kind: IncidentKind, **extra: object) -> Incident:
    return Incident(kind, scenario.bot, str(extra.get("detail", "")), 0, extra.get("termination"))  # type: ignore[arg-type]


ILLEGAL = Rejection(None, ErrorCode.ILLEGAL_ACTION, "wall-gate", "a wall at B1 closes the gate")
MALFORMED = Rejection(None, ErrorCode.MALFORMED_ACTION, "malformed", "square 999 is off the board")


def verdict(trial: Trial) -> tuple[bool, str]:
    r = judge(trial)
    assert r.name == trial.scenario.name and r.match_id == "m1"
    return r.passed, r.reason


def test_a_kind_check_passes_and_says_what_the_bot_placed(tmp_path: Path) -> None:
    s = CHECKS["kind-wall"](OPTIONS)
    n = len(legal_moves(s.start()))
    ok, reason = verdict(make(tmp_path, "kind-wall", [decision(s, 1)]))
    assert ok
    assert reason.startswith(
        f"request 1: only walls were legal ({n} choices); the bot placed a wall at "
    )
    assert reason.endswith(" in 3 ms")


def kind_wall_failures() -> list[tuple[str, dict[str, object], str]]:
    s = CHECKS["kind-wall"](OPTIONS)
    there = " (only walls were legal there)"
    return [
        (
            "timeout",
            {"timeline": [decision(s, 1, source=FALLBACK)]},
            "seat 0 sent no reply to request 1 within 1500 ms" + there,
        ),
        (
            "illegal",
            {"timeline": [decision(s, 1, rejections=(ILLEGAL,))]},
            "replied to request 1 with an illegal action: a wall at B1 closes the gate" + there,
        ),
        (
            "malformed",
            {"timeline": [decision(s, 1, rejections=(MALFORMED,))]},
            "sent a malformed reply to request 1: square 999 is off the board" + there,
        ),
        (
            "later timeout",
            {"timeline": [decision(s, 1), decision(s, 5, offset=2, source=TIMEOUT)]},
            "seat 0 sent no reply to request 5 within 1000 ms",
        ),
        (
            "crash before connecting",
            {"crash": Crash(2, False, 0, 0, frozenset()), "log": "usage: bot\nbot: error: --x\n"},
            "the bot exited with code 2 before connecting; its log ends: bot: error: --x",
        ),
        (
            "crash at the request",
            {
                "crash": Crash(1, True, 1, len(s.opening), frozenset({ActionKind.WALL})),
                "timeline": [incident(s, IncidentKind.DISCONNECTED, detail="stream ended")],
                "log": "Traceback\nKeyError: 7\n",
            },
            "the bot exited with code 1 while request 1 was open (only walls were legal); "
            "its log ends: KeyError: 7",
        ),
        (
            "killed, empty log",
            {"crash": Crash(-9, True, 0, 3, frozenset())},
            "the bot was killed by signal 9 during the match, with no request open; "
            "its log is empty",
        ),
        (
            "stalled",
            {
                "timeline": [incident(s, IncidentKind.FORFEIT, termination=Termination.STALLED)],
                "termination": Termination.STALLED,
            },
            "did not connect within 10 s of starting",
        ),
        (
            "left by itself",
            {
                "timeline": [
                    decision(s, 1),
                    incident(s, IncidentKind.DISCONNECTED, detail="stream ended"),
                ]
            },
            "its stream ended at decision 0 before MatchEnded (stream ended); "
            "the kit did not drop it",
        ),
        (
            "left and died",
            {
                "timeline": [decision(s, 1), incident(s, IncidentKind.DISCONNECTED)],
                "exit_code": 1,
                "log": "ValueError: no\n",
            },
            "its stream ended at decision 0 before MatchEnded and the bot exited with code 1; "
            "its log ends: ValueError: no",
        ),
        (
            "overran",
            {"timeline": [decision(s, 1)], "overran": True},
            "the match did not end within 120 s",
        ),
        (
            "forfeited otherwise",
            {
                "timeline": [decision(s, 1)],
                "termination": Termination.TIMEOUT,
                "detail": "ran out of time",
            },
            "its seat ended TIMEOUT: ran out of time",
        ),
    ]


@pytest.mark.parametrize(
    ("case", "extra", "reason"), kind_wall_failures(), ids=[c[0] for c in kind_wall_failures()]
)
def test_kind_check_failures_name_what_went_wrong(
    tmp_path: Path, case: str, extra: dict[str, object], reason: str
) -> None:
    assert verdict(make(tmp_path, "kind-wall", **extra)) == (False, reason)  # type: ignore[arg-type]


def test_kind_tea_says_whether_the_bot_took_the_break(tmp_path: Path) -> None:
    s = CHECKS["kind-tea"](OPTIONS)
    tea = DecisionEntry(len(s.opening), s.bot, 1, Action(ActionKind.TEA), 2, (), BOT)
    ok, reason = verdict(make(tmp_path, "kind-tea", [tea]))
    assert ok and reason.endswith("; the bot chose a tea break in 2 ms")
    late = decision(s, 1, source=FALLBACK)
    assert verdict(make(tmp_path, "kind-tea", [late])) == (
        False,
        "seat 1 sent no reply to request 1 within 1500 ms (a tea break was offered there)",
    )


def test_tea_and_pass_reports_the_events_before_the_bots_request(tmp_path: Path) -> None:
    s = CHECKS["tea-and-pass"](OPTIONS)
    state = s.start()
    policies = s.local_policies()
    while state.to_move != s.bot:
        state = apply_action(state, policies[state.to_move](state, None))  # type: ignore[arg-type]
    answered = DecisionEntry(state.decisions, s.bot, 4, legal_moves(state).nth(0), 1, (), BOT)
    ok, reason = verdict(make(tmp_path, "tea-and-pass", [answered], final=state))
    assert ok, reason
    assert reason == (
        "after seat 1's tea break and seat 2's automatic pass the bot answered request 4 and 0 more"
    )
    assert verdict(make(tmp_path, "tea-and-pass", [answered])) == (
        False,
        "the scripted tea break and pass did not happen (a check-bot bug)",
    )


def drill(rid: int) -> Rejection:
    return Rejection(None, ErrorCode.MALFORMED_ACTION, "malformed", drill_message(rid))


def test_rejection_retry(tmp_path: Path) -> None:
    s = CHECKS["rejection-retry"](OPTIONS)
    early = [decision(s, 2), decision(s, 4, offset=2)]

    def run(last: DecisionEntry, drilled: int = 6) -> tuple[bool, str]:
        return verdict(make(tmp_path, "rejection-retry", [*early, last], drilled=drilled))

    ok, reason = run(decision(s, 6, offset=4, rejections=(drill(6),), time_ms=9))
    assert ok and reason.startswith("request 6 was refused once as a drill; the bot answered it")
    assert reason.endswith("(9 ms in all)")
    assert run(decision(s, 6, offset=4, rejections=(drill(6),), source=FALLBACK)) == (
        False,
        "did not answer request 6 again within 1000 ms after the drill rejection",
    )
    assert run(decision(s, 6, offset=4, rejections=(drill(6), ILLEGAL))) == (
        False,
        "after the drill rejection of request 6: replied to request 6 with an illegal action: "
        "a wall at B1 closes the gate",
    )
    assert verdict(make(tmp_path, "rejection-retry", early)) == (
        False,
        "the bot answered fewer than 3 requests, so no drill was made",
    )


def test_reconnect(tmp_path: Path) -> None:
    s = CHECKS["reconnect"](OPTIONS)
    answered = [decision(s, rid, offset=i) for i, rid in enumerate((1, 3, 5, 7))]
    gone = incident(s, IncidentKind.DISCONNECTED, detail="stream ended")
    back = incident(s, IncidentKind.RECONNECTED)
    ok, reason = verdict(
        make(
            tmp_path,
            "reconnect",
            [*answered, gone, back, decision(s, 9, offset=5)],
            dropped_after=7,
        )
    )
    assert (ok, reason) == (
        True,
        "its stream was dropped after request 7; it reconnected with its resume token and "
        "finished the match",
    )
    forfeit = incident(s, IncidentKind.FORFEIT, termination=Termination.DISCONNECTED)
    assert verdict(
        make(
            tmp_path,
            "reconnect",
            [*answered, gone, forfeit],
            dropped_after=7,
            termination=Termination.DISCONNECTED,
        )
    ) == (
        False,
        "did not reconnect within 5 s after its stream was dropped (the kit ended it with "
        "status OK and no MatchEnded, which means: resume)",
    )
    crashed = make(
        tmp_path,
        "reconnect",
        [*answered, gone],
        dropped_after=7,
        crash=Crash(1, True, 9, 8, frozenset()),
        log="medina_client: seat 0 is already taken\n",
    )
    assert verdict(crashed) == (
        False,
        "after its stream was dropped, the bot exited with code 1 while request 9 was open; "
        "its log ends: medina_client: seat 0 is already taken; a bot must reconnect with "
        "Hello.resume_token from its Welcome",
    )
    # A bot that leaves by itself before the kit's drop is not mistaken for the drill.
    early: list[Item] = [answered[0], gone, back, *answered[1:]]
    assert verdict(make(tmp_path, "reconnect", early, dropped_after=7))[1].startswith(
        "its stream ended at decision 0 before MatchEnded"
    )


@pytest.mark.parametrize(
    ("exit_code", "expected"),
    [
        (0, (True, "exited with code 0 0.05 s after MatchEnded")),
        (None, (False, "still running 5 s after MatchEnded")),
        (3, (False, "exited with code 3 after MatchEnded; its log ends: bye")),
        (-9, (False, "was killed by signal 9 after MatchEnded; its log ends: bye")),
    ],
)
def test_match_end(tmp_path: Path, exit_code: int | None, expected: tuple[bool, str]) -> None:
    s = CHECKS["match-end"](OPTIONS)
    trial = make(tmp_path, "match-end", [decision(s, 1)], exit_code=exit_code, log="bye\n")
    assert verdict(trial) == expected


def test_tight_clock_reports_the_slowest_reply(tmp_path: Path) -> None:
    s = CHECKS["tight-clock"](OPTIONS)
    timeline = [decision(s, 3, time_ms=40), decision(s, 7, offset=1, time_ms=120)]
    assert verdict(make(tmp_path, "tight-clock", timeline)) == (
        True,
        "2 decisions at 500 ms each; slowest reply 120 ms",
    )
