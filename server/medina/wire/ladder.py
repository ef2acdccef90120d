"""The ladder's messages (ladder.proto) from plain data (its requests to its arena are an
organiser's: ``wire.matches``). The ladder builds no protobuf message itself."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

from medina.referee.outcome import MatchOutcome
from medina.v1 import ladder_pb2, match_pb2

from .settings import outcome_to_proto

__all__ = [
    "account_list",
    "added",
    "assigned",
    "ended",
    "heartbeat",
    "rating",
    "revoked",
    "rotated",
    "standing_row",
    "standings",
    "welcome",
]


def rating(mu: float, sigma: float, ordinal: float, games: int) -> ladder_pb2.LadderRating:
    """A rating as the ladder reports it."""
    return ladder_pb2.LadderRating(mu=mu, sigma=sigma, ordinal=ordinal, games=games)


def welcome(
    bot: str,
    version: str,
    heartbeat_interval_ms: int,
    heartbeat_timeout_ms: int,
    max_matches: int,
    now: ladder_pb2.LadderRating,
) -> ladder_pb2.LobbyResponse:
    """The answer to a LobbyHello."""
    return ladder_pb2.LobbyResponse(
        welcome=ladder_pb2.LobbyWelcome(
            bot=bot,
            bot_version=version,
            heartbeat_interval_ms=heartbeat_interval_ms,
            heartbeat_timeout_ms=heartbeat_timeout_ms,
            max_matches=max_matches,
            rating=now,
        )
    )


def assigned(
    match_id: str, seat: int, token: str, address: str, config: match_pb2.MatchConfig
) -> ladder_pb2.LobbyResponse:
    """A match for the bot: where to open its Play stream, with which seat token."""
    return ladder_pb2.LobbyResponse(
        match=ladder_pb2.MatchAssigned(
            match_id=match_id, seat=seat, token=token, address=address, config=config
        )
    )


def ended(
    match_id: str,
    outcome: MatchOutcome | None,
    rated: bool,
    after: ladder_pb2.LadderRating | None,
) -> ladder_pb2.LobbyResponse:
    """One of the bot's matches ended (``outcome`` None: aborted before it had one)."""
    message = ladder_pb2.LadderMatchEnded(match_id=match_id, rated=rated)
    if outcome is not None:
        message.result.CopyFrom(outcome_to_proto(outcome))
    if after is not None:
        message.rating.CopyFrom(after)
    return ladder_pb2.LobbyResponse(ended=message)


def heartbeat(sequence: int) -> ladder_pb2.LobbyResponse:
    """A liveness probe the bot echoes."""
    return ladder_pb2.LobbyResponse(heartbeat=ladder_pb2.Heartbeat(sequence=sequence))


class LineLike(Protocol):
    """What a standings row is made of (a stored rating line)."""

    @property
    def bot(self) -> str: ...
    @property
    def owner(self) -> str: ...
    @property
    def version(self) -> str: ...
    @property
    def mu(self) -> float: ...
    @property
    def sigma(self) -> float: ...
    @property
    def games(self) -> int: ...
    @property
    def mean_rank(self) -> float: ...
    @property
    def faults(self) -> Mapping[str, int]: ...
    @property
    def last_seen(self) -> float: ...
    @property
    def inactive(self) -> str: ...
    @property
    def aborted(self) -> int: ...


def standing_row(
    line: LineLike, ordinal: float, interval: tuple[float, float], provisional: bool
) -> ladder_pb2.StandingRow:
    """One bot version's line of the standings."""
    return ladder_pb2.StandingRow(
        bot=line.bot,
        owner=line.owner,
        bot_version=line.version,
        rating=rating(line.mu, line.sigma, ordinal, line.games),
        mu_low=interval[0],
        mu_high=interval[1],
        mean_rank=line.mean_rank,
        faults=dict(line.faults),
        last_seen=line.last_seen,
        inactive=line.inactive,
        aborted=line.aborted,
        provisional=provisional,
    )


def standings(
    rows: Sequence[ladder_pb2.StandingRow], matches: int
) -> ladder_pb2.GetStandingsResponse:
    """The GetStandings answer."""
    return ladder_pb2.GetStandingsResponse(rows=rows, matches=matches)


def added(name: str, key: str) -> ladder_pb2.AddBotResponse:
    """The AddBot answer: the key, shown once."""
    return ladder_pb2.AddBotResponse(name=name, key=key)


def rotated(name: str, key: str) -> ladder_pb2.RotateBotResponse:
    """The RotateBot answer: the new key, shown once."""
    return ladder_pb2.RotateBotResponse(name=name, key=key)


class AccountLike(Protocol):
    """What a listed account is made of."""

    @property
    def name(self) -> str: ...
    @property
    def owner(self) -> str: ...
    @property
    def created_at(self) -> float: ...
    @property
    def inactive(self) -> str: ...
    @property
    def versions(self) -> tuple[str, ...]: ...
    @property
    def suspended(self) -> Mapping[str, str]: ...


def account_list(accounts: Iterable[AccountLike]) -> ladder_pb2.ListBotsResponse:
    """The ListBots answer (never a key)."""
    return ladder_pb2.ListBotsResponse(
        bots=[
            ladder_pb2.BotAccount(
                name=a.name,
                owner=a.owner,
                created_at=a.created_at,
                inactive=a.inactive,
                versions=a.versions,
                suspended=a.suspended,
            )
            for a in accounts
        ]
    )


def revoked() -> ladder_pb2.RevokeBotResponse:
    """The RevokeBot answer."""
    return ladder_pb2.RevokeBotResponse()


def unsuspended() -> ladder_pb2.UnsuspendBotResponse:
    """The UnsuspendBot answer."""
    return ladder_pb2.UnsuspendBotResponse()
