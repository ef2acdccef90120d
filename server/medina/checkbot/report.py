"""The check-bot report: one line per check, a summary, or JSON for programs."""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from .verdicts import CheckResult

#: Width of the check-name column (the longest name is "kind-blocking-rooftop").
_NAME_WIDTH = 22


def result_line(result: CheckResult) -> str:
    """``  PASS  kind-wall               request 5: ...``."""
    mark = "PASS" if result.passed else "FAIL"
    return f"  {mark}  {result.name:<{_NAME_WIDTH}} {result.reason}"


@dataclass(frozen=True)
class Report:
    """Every verdict of one run of the kit."""

    command: tuple[str, ...]
    results: tuple[CheckResult, ...]
    seconds: float
    records: str | None  # where records and bot logs are kept (None: deleted)

    @property
    def passed(self) -> bool:
        """Whether every check passed."""
        return all(r.passed for r in self.results)

    def failed(self) -> list[CheckResult]:
        """The checks that failed."""
        return [r for r in self.results if not r.passed]

    def summary(self) -> str:
        """``14 checks: 13 passed, 1 failed (12.3 s)`` and where the logs are."""
        n = len(self.results)
        bad = len(self.failed())
        text = f"{n} check{'s' if n != 1 else ''}: {n - bad} passed, {bad} failed "
        text += f"({self.seconds:.1f} s)"
        if self.records is not None:
            text += f"\nrecords and bot logs: {self.records}"
        return text

    def text(self) -> str:
        """The whole report as text (what the CLI prints without --json)."""
        lines = [f"check-bot: {_shell(self.command)}"]
        lines += [result_line(r) for r in self.results]
        lines.append(self.summary())
        return "\n".join(lines)

    def as_dict(self) -> dict[str, object]:
        """The report as plain data (``--json``); paths only when the files are kept."""
        kept = self.records is not None
        return {
            "command": list(self.command),
            "passed": self.passed,
            "seconds": round(self.seconds, 3),
            "records": self.records,
            "checks": [
                {
                    "name": r.name,
                    "passed": r.passed,
                    "reason": r.reason,
                    "match_id": r.match_id,
                    "record": r.record if kept else None,
                    "log": r.log if kept else None,
                }
                for r in self.results
            ],
        }

    def to_json(self) -> str:
        """``as_dict`` as indented JSON."""
        return json.dumps(self.as_dict(), indent=2)


def _shell(command: Sequence[str]) -> str:
    return shlex.join(command)


__all__ = ["Report", "result_line"]
