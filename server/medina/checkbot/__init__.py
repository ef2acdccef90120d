"""check-bot: a conformance kit that plays one bot through scripted situations on a private
arena and says what it handled and what it got wrong (``medina-arena check-bot``).

Layers: ``positions`` finds scripted openings with the engine, ``scenarios`` turns each
check into a match (position, clock, opponents, drills), ``runner`` plays it on a real
server with the bot process, ``verdicts`` judges the record, ``report`` prints it.
"""

from .kit import check_bot
from .positions import PositionNotFoundError
from .report import Report, result_line
from .runner import Launcher
from .scenarios import CHECKS, DESCRIPTIONS, CheckOptions
from .verdicts import CheckResult

__all__ = [
    "CHECKS",
    "DESCRIPTIONS",
    "CheckOptions",
    "CheckResult",
    "Launcher",
    "PositionNotFoundError",
    "Report",
    "check_bot",
    "result_line",
]
