"""Standings from game results: mean rank and score with 95 % intervals, win share, an
openskill Plackett-Luce rating, the terminations each bot caused, and head-to-head.

Pure: results are taken in game-number order, so the standings of a tournament do not depend
on the order its games happened to finish in (a resumed or distributed run gives the same
table as an uninterrupted one)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from openskill.models import PlackettLuce

from medina.engine.stats import Z95, wilson

#: Terminations a bot is charged with (every other one is NORMAL or the server's doing). In a
#: complete game each of them is a forfeit.
FAULTS = ("timeout", "illegal_action", "crashed", "disconnected", "stalled", "no_show")


@dataclass(frozen=True, slots=True)
class SeatResult:
    """One bot's result in one game."""

    bot: str
    seat: int
    total: int
    rank: int
    termination: str  # lower-case Termination name: normal, timeout, crashed, ...
    strikes: int = 0


@dataclass(frozen=True, slots=True)
class GameResult:
    """A finished game. ``ending`` is ``complete`` or ``abandoned`` (no bot ever connected:
    nothing was played; it counts only in the terminations)."""

    number: int
    block: int
    ruleset: str
    players: int
    ending: str
    seats: tuple[SeatResult, ...]


@dataclass(slots=True)
class Standing:
    """One bot's line in the standings."""

    bot: str
    games: int = 0
    rank_sum: float = 0.0
    score_sum: float = 0.0
    score_sq: float = 0.0
    wins: float = 0.0
    mu: float = 0.0
    sigma: float = 0.0
    strikes: int = 0
    faults: dict[str, int] = field(default_factory=dict)
    abandoned: int = 0

    @property
    def mean_rank(self) -> float:
        """Mean finishing place (1 is first)."""
        return self.rank_sum / self.games if self.games else math.nan

    @property
    def mean_score(self) -> float:
        """Mean final total."""
        return self.score_sum / self.games if self.games else math.nan

    @property
    def score_ci(self) -> float:
        """Half-width of the 95 % interval of the mean score (normal approximation)."""
        if self.games < 2:
            return math.inf
        var = (self.score_sq - self.score_sum**2 / self.games) / (self.games - 1)
        return Z95 * math.sqrt(max(var, 0.0) / self.games)

    @property
    def win_share(self) -> float:
        """Share of games won, shared first places split."""
        return self.wins / self.games if self.games else math.nan

    @property
    def win_ci(self) -> tuple[float, float]:
        """95 % Wilson interval of the win share."""
        return wilson(self.wins, self.games)

    @property
    def ordinal(self) -> float:
        """The rating's conservative estimate, mu - 3 sigma (the sort key)."""
        return self.mu - 3 * self.sigma

    @property
    def rating_interval(self) -> tuple[float, float]:
        """mu -/+ 1.96 sigma."""
        return self.mu - Z95 * self.sigma, self.mu + Z95 * self.sigma


@dataclass(frozen=True, slots=True)
class RatingPoint:
    """A bot's rating right after one of its games was rated (games in number order)."""

    game: int  # the game's number (from 0, as stored)
    bot: str
    games: int  # complete games of the bot rated so far, this one included
    mu: float
    sigma: float

    @property
    def ordinal(self) -> float:
        """mu - 3 sigma."""
        return self.mu - 3 * self.sigma


@dataclass(frozen=True, slots=True)
class Standings:
    """The table (best first), head-to-head shares and the rating history."""

    rows: tuple[Standing, ...]
    games: int
    #: head_to_head[a][b]: share of the games both played where a finished ahead of b (a tie
    #: counts half), and how many such games there were.
    head_to_head: dict[str, dict[str, tuple[float, int]]]
    #: Every bot's rating after each of its complete games, in game-number order: the same
    #: for a resumed or distributed run as for an uninterrupted one.
    history: tuple[RatingPoint, ...] = ()

    def history_of(self, bot: str) -> list[RatingPoint]:
        """One bot's rating history."""
        return [p for p in self.history if p.bot == bot]

    def separated(self) -> bool:
        """True when the rating intervals of every two neighbours in the table are apart."""
        if len(self.rows) < 2 or any(r.games == 0 for r in self.rows):
            return False
        for above, below in zip(self.rows, self.rows[1:], strict=False):
            if below.rating_interval[1] >= above.rating_interval[0]:
                return False
        return True

    def leader(self) -> str | None:
        """The bot on top, once anything was played."""
        return self.rows[0].bot if self.rows and self.rows[0].games else None


def counted_ranks(seats: Sequence[SeatResult]) -> tuple[int, ...]:
    """The ranks the standings count for one complete game, by seat order of ``seats``.

    A seat that played on keeps its match rank (1 + the seats that played on with a strictly
    higher total). Every seat that forfeited (a termination in ``FAULTS``) ranks last, at the
    player count, tied with every other seat that forfeited, whatever the referee's random
    play-out of its seat scored and whoever forfeited first: a forfeit is a loss to every seat
    that played on and a draw with every other forfeit, never a win. So when every seat
    forfeited nobody won (no seat ranks 1).

    >>> counted_ranks([SeatResult("a", 0, 30, 1, "crashed"), SeatResult("b", 1, 20, 2, "timeout")])
    (2, 2)
    """
    last = len(seats)
    return tuple(last if s.termination in FAULTS else s.rank for s in seats)


class Accumulator:
    """Standings built one game at a time, in game-number order."""

    def __init__(self, bots: Sequence[str]) -> None:
        self.model = PlackettLuce()
        self.ratings = {b: self.model.rating(name=b) for b in bots}
        self.rows = {b: Standing(bot=b) for b in bots}
        self.h2h: dict[str, dict[str, list[float]]] = {a: {} for a in bots}
        self.played = 0
        self.history: list[RatingPoint] = []

    def add(self, game: GameResult) -> None:
        """Count one finished game."""
        for s in game.seats:
            row = self.rows[s.bot]
            row.strikes += s.strikes
            if s.termination in FAULTS:
                row.faults[s.termination] = row.faults.get(s.termination, 0) + 1
        if game.ending != "complete":
            for s in game.seats:
                self.rows[s.bot].abandoned += 1
            return
        self.played += 1
        ranks = counted_ranks(game.seats)
        firsts = sum(1 for r in ranks if r == 1)
        for s, rank in zip(game.seats, ranks, strict=True):
            row = self.rows[s.bot]
            row.games += 1
            row.rank_sum += rank
            row.score_sum += s.total
            row.score_sq += s.total * s.total
            if rank == 1:
                row.wins += 1 / firsts
        for a, ra in zip(game.seats, ranks, strict=True):
            for b, rb in zip(game.seats, ranks, strict=True):
                if a.bot == b.bot:
                    continue
                cell = self.h2h[a.bot].setdefault(b.bot, [0.0, 0])
                cell[0] += 1.0 if ra < rb else 0.5 if ra == rb else 0.0
                cell[1] += 1
        teams = [[self.ratings[s.bot]] for s in game.seats]
        new = self.model.rate(teams, ranks=[float(r) for r in ranks])
        for s, team in zip(game.seats, new, strict=True):
            self.ratings[s.bot] = team[0]
            rated = team[0]
            point = RatingPoint(
                game.number, s.bot, self.rows[s.bot].games, float(rated.mu), float(rated.sigma)
            )
            self.history.append(point)

    def standings(self) -> Standings:
        """The table as it stands (best first: by rating ordinal, then mean rank)."""
        rows = []
        for b, r in self.ratings.items():
            row = self.rows[b]
            rows.append(
                Standing(
                    bot=b,
                    games=row.games,
                    rank_sum=row.rank_sum,
                    score_sum=row.score_sum,
                    score_sq=row.score_sq,
                    wins=row.wins,
                    mu=float(r.mu),
                    sigma=float(r.sigma),
                    strikes=row.strikes,
                    faults=dict(row.faults),
                    abandoned=row.abandoned,
                )
            )
        rows.sort(key=lambda r: (-r.ordinal, r.mean_rank if r.games else math.inf, r.bot))
        return Standings(
            rows=tuple(rows),
            games=self.played,
            head_to_head={
                a: {b: (c[0] / c[1], int(c[1])) for b, c in row.items()}
                for a, row in self.h2h.items()
            },
            history=tuple(self.history),
        )


def compute(bots: Sequence[str], results: Iterable[GameResult]) -> Standings:
    """The standings of ``bots`` after ``results`` (taken in game-number order)."""
    acc = Accumulator(bots)
    for game in sorted(results, key=lambda g: g.number):
        acc.add(game)
    return acc.standings()


def first_separated_block(
    bots: Sequence[str], results: Iterable[GameResult], min_games: int
) -> int | None:
    """The first block after which the standings separated (see ``Standings.separated``),
    counting only whole blocks played from the first on and at least ``min_games`` games;
    None while they have not. ``results`` may hold games of later blocks: the check stops at
    the first block with a game missing."""
    by_block: dict[int, list[GameResult]] = {}
    for g in results:
        by_block.setdefault(g.block, []).append(g)
    return _scan(bots, by_block, min_games)


def _scan(bots: Sequence[str], by_block: dict[int, list[GameResult]], min_games: int) -> int | None:
    acc = Accumulator(bots)
    block = 0
    counted = 0
    while block in by_block:
        for g in sorted(by_block[block], key=lambda g: g.number):
            acc.add(g)
            counted += 1
        if counted >= min_games and acc.standings().separated():
            return block
        block += 1
    return None
