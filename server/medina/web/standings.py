"""The standings page's seam: the viewer shows whatever a standings provider returns.

Tournament and ladder storage plug in here: give ``build_app`` a ``StandingsProvider`` (a
callable returning ``Standings``). Without one the page says that no tournament database is
configured.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

V = TypeVar("V")

#: ``StandingRow.status`` of a bot that may play.
ACTIVE = "active"


@dataclass(frozen=True)
class StandingRow:
    """One bot in a table of standings."""

    bot: str
    rating: float
    low: float  # the rating interval's lower end
    high: float  # and upper end
    games: int
    #: Games that ended otherwise than normally, by termination name (timeout, crashed, ...).
    terminations: dict[str, int] = field(default_factory=dict)
    #: Mean finishing place (1 = first), when the provider counts places.
    mean_rank: float | None = None
    #: Share of games won and its 95 % interval, when the provider counts wins.
    win_share: float | None = None
    win_low: float = 0.0
    win_high: float = 1.0
    #: What the rows are sorted by, when the provider says (a ladder's ordinal, mu - 3 sigma).
    ordinal: float | None = None
    #: Whether the bot may play (``active``, ``suspended: ...``), when the provider says.
    status: str | None = None
    #: Too few games yet to be ranked among the others (listed after them), when the
    #: provider has such a rule (a ladder's ``--min-games``).
    provisional: bool = False

    @property
    def active(self) -> bool:
        """Whether the row is shown by default: its bot may play, or the provider does not
        say (a tournament's rows)."""
        return self.status in (None, ACTIVE)


@dataclass(frozen=True)
class BotGame:
    """One game of a bot, for its page."""

    number: int
    variant: str  # e.g. "medina-v2 4p"
    seats: tuple[str, ...]  # bot names by seat
    seat: int
    rank: int
    total: int
    termination: str
    match_id: str  # the record's id (its replay is /replay/ID when the viewer has it)


@dataclass(frozen=True)
class RatingStep:
    """A bot's rating right after one of its games (for its rating-over-time plot)."""

    game: int  # the game's number as shown (from 1)
    rating: float
    low: float  # the rating interval's lower end
    high: float  # and upper end


@dataclass(frozen=True)
class Standings:
    """A titled table, best first; ``games`` (optional) lists each bot's games for its page,
    ``head_to_head`` (optional) the pairs' shares (``[a][b]``: share of the games both
    played in which a finished ahead of b, a tie counting half, and how many there were),
    ``history`` (optional) each bot's rating after each of its games."""

    title: str
    rows: tuple[StandingRow, ...]
    note: str = ""
    games: Mapping[str, tuple[BotGame, ...]] = field(default_factory=dict)
    head_to_head: dict[str, dict[str, tuple[float, int]]] = field(default_factory=dict)
    history: Mapping[str, tuple[RatingStep, ...]] = field(default_factory=dict)
    #: The page refreshes its table as the provider's numbers change (a ladder's standings).
    live: bool = False
    #: Whether the provider counts wins: without, the table has no win share column (rather
    #: than a '-' on every row).
    wins: bool = True


#: Returns the current standings (called on each page view, off the server's event loop).
StandingsProvider = Callable[[], Standings]


class PerBot(Mapping[str, V]):
    """A per-bot mapping computed one bot at a time, when looked up: the standings page only
    asks which bots have one, a bot's page asks for that bot's (a ladder of thousands of
    versions read every version's games and history for each view of the table)."""

    def __init__(self, bots: Iterable[str], compute: Callable[[str], V]) -> None:
        self._bots = frozenset(bots)
        self._compute = compute

    def __getitem__(self, bot: str) -> V:
        if bot not in self._bots:
            raise KeyError(bot)
        return self._compute(bot)

    def __contains__(self, bot: object) -> bool:
        return bot in self._bots

    def __iter__(self) -> Iterator[str]:
        return iter(self._bots)

    def __len__(self) -> int:
        return len(self._bots)
