"""One seat's clock: per-decision limit, bank with increment, first-decision extra time."""

from __future__ import annotations

from dataclasses import dataclass

from .config import TimeControl


@dataclass(slots=True)
class SeatClock:
    """Bank and history of one seat; all times in milliseconds, measured by the server."""

    control: TimeControl
    bank_ms: int
    decisions: int = 0
    last_reply_ms: int | None = None  # None until the seat's first reply

    @classmethod
    def start(cls, control: TimeControl) -> SeatClock:
        """A fresh clock with the starting bank."""
        return cls(control=control, bank_ms=control.bank_ms)

    def allowed_ms(self) -> int:
        """Time allowed for the next decision: min(limit, bank), plus the first-decision extra.

        A zero bank setting means "no bank": only the per-decision limit applies.
        """
        c = self.control
        base = min(c.decision_ms, self.bank_ms) if c.bank_ms else c.decision_ms
        return base + (c.first_decision_extra_ms if self.decisions == 0 else 0)

    def charge(self, used_ms: int) -> None:
        """Take a decision's time from the bank (never below zero) and add the increment.

        The first decision's extra time is free.
        """
        c = self.control
        if self.decisions == 0:
            used_ms = max(0, used_ms - c.first_decision_extra_ms)
        if c.bank_ms:
            self.bank_ms = max(0, self.bank_ms - used_ms) + c.increment_ms
        self.decisions += 1
