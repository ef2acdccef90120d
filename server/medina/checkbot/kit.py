"""Running the kit: a private arena, then every selected check's scenario in turn."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from medina.rpc.single.server import start_private_server

from .runner import Launcher, play
from .scenarios import CHECKS, CheckOptions
from .verdicts import CheckResult, judge


async def check_bot(
    launch: Launcher,
    options: CheckOptions,
    records: Path,
    *,
    on_result: Callable[[CheckResult], None] | None = None,
) -> list[CheckResult]:
    """Play a bot (started by ``launch`` once per check) through the selected checks.

    A real server listens on 127.0.0.1 (a free port) for the run; records and bot
    logs go to ``records``. ``on_result`` hears each verdict as soon as it is known.
    """
    server = await start_private_server(records)
    results: list[CheckResult] = []
    try:
        for name in options.selected():
            scenario = CHECKS[name](options)
            trial = await play(server, scenario, launch, records, options.limit_s)
            result = judge(trial)
            results.append(result)
            if on_result is not None:
                on_result(result)
    finally:
        await server.stop(grace_s=1.0)
    return results


__all__ = ["check_bot"]
