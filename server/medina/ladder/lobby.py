"""LadderService over gRPC: the lobby stream, the standings, the organiser's account calls.
Transport only: what a call means is ``service.Ladder``'s and the store's."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from typing import Any

import grpc
from google.protobuf.message import DecodeError

from medina.rpc.common.auth import CredentialError, bearer, require_organiser
from medina.rpc.common.hello import first_message
from medina.rpc.common.limits import (
    ClientSlots,
    FloodGuard,
    FloodVerdict,
    Limits,
    Oversize,
    StreamSlotsExhausted,
    drain,
    sized,
)
from medina.rpc.common.status import Reason, Refused, abort
from medina.storage.ladder import BotRevokedError, StoreError
from medina.v1 import ladder_pb2, ladder_pb2_grpc
from medina.wire import ladder as wire_ladder

from . import accounts
from .service import Ladder, Refusal
from .session import Session
from .standings import DEFAULT_MIN_GAMES, standing_rows

__all__ = ["LadderServicer", "add_ladder_service"]

log = logging.getLogger("medina.ladder")

Context = grpc.aio.ServicerContext[Any, Any]


#: How old the standings ``GetStandings`` answers may be, in seconds.
STANDINGS_FRESH_S = 1.0


class LadderServicer(ladder_pb2_grpc.LadderServiceServicer):
    """The ladder's gRPC face."""

    def __init__(
        self,
        ladder: Ladder,
        organiser_token: str | None,
        limits: Limits | None = None,
        *,
        local: bool = False,
        min_games: int = DEFAULT_MIN_GAMES,
    ) -> None:
        self.ladder = ladder
        #: GetStandings' provisional rule (``standings.standings``).
        self.min_games = min_games
        self.organiser_token = organiser_token
        self.limits = limits or Limits()
        #: Lobby streams of each client address not yet welcomed (their key checked, their
        #: LobbyHello awaited, the bot registered): ``max_streams_per_client`` at once, as
        #: for Play and Watch streams. Without a cap one address held 12,800 streams waiting
        #: for the database's check of made-up keys (300 MB of the ladder's memory).
        self.opening = ClientSlots.for_limits(self.limits)
        #: The loopback lobby of a ladder that serves TLS (for its house bots).
        self.local = local
        #: The standings as last read (by ``include_inactive``), and when the read began.
        self._standings: dict[bool, tuple[float, ladder_pb2.GetStandingsResponse]] = {}
        #: The reads under way: callers meanwhile share them.
        self._reading: dict[bool, asyncio.Future[ladder_pb2.GetStandingsResponse]] = {}

    # -- the lobby -----------------------------------------------------------------------

    async def Lobby(
        self,
        request_iterator: AsyncIterator[ladder_pb2.LobbyRequest | Oversize],
        context: Context,
    ) -> AsyncIterator[ladder_pb2.LobbyResponse]:
        """A bot's session: key, LobbyHello, then matches until either side ends it."""
        try:
            key, unreadable = bearer(context.invocation_metadata()), None
        except CredentialError as exc:
            key, unreadable = "", exc
        try:
            client = self.opening.acquire(context.peer())
        except StreamSlotsExhausted as exc:
            refused = Refusal(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                Reason.TOO_MANY_STREAMS,
                f"lobby streams not welcomed yet: {exc}",
                limit=self.opening.limit,
            )
            refused.refused.set_on(context)
            return
        try:
            if unreadable is not None:
                raise Refusal(
                    grpc.StatusCode.UNAUTHENTICATED,
                    Reason.BOT_KEY_INVALID,
                    f"the lobby needs 'authorization: Bearer <bot key>' metadata: {unreadable}",
                    cause="malformed",
                )
            account = await self.ladder.authenticate(key)
            with self.ladder.awaiting_hello(account):
                hello = await self._hello(request_iterator)
            session = await self.ladder.open_session(
                account, hello, key_id=accounts.parse_key(key)[0], local=self.local
            )
        except Refusal as refusal:
            # Set, not raised: anyone may knock with a bad key, at any rate (status.Refused).
            refusal.refused.set_on(context)
            return
        finally:
            self.opening.release(client)
        # The reader is left to end with the call (cancelling a pending grpc.aio read leaks).
        reader = asyncio.create_task(self._read(request_iterator, session))
        try:
            async for message in self._write(session):
                yield message
        finally:
            await self.ladder.close_session(session)
            del reader
        if session.end is not None:
            await session.end.refused.abort(context)

    async def _hello(
        self,
        request_iterator: AsyncIterator[ladder_pb2.LobbyRequest | Oversize],
    ) -> ladder_pb2.LobbyHello:
        """The stream's LobbyHello; Refusal (set on the call by ``Lobby``) for anything else."""
        first = await first_message(
            request_iterator,
            self.ladder.config.hello_timeout_s,
            hello="LobbyHello",
            request="LobbyRequest",
        )
        if isinstance(first, Oversize):
            first = first.refused()
        if isinstance(first, Refused):
            raise Refusal(first.code, first.reason, first.message, **first.metadata)
        if not first.HasField("hello"):
            raise Refusal(
                grpc.StatusCode.INVALID_ARGUMENT,
                Reason.HELLO_MISSING,
                "the first message of a lobby stream must be LobbyHello",
            )
        return first.hello

    async def _read(
        self,
        request_iterator: AsyncIterator[ladder_pb2.LobbyRequest | Oversize],
        session: Session,
    ) -> None:
        guard = FloodGuard(self.limits)
        try:
            async for message in request_iterator:
                if session.closed:
                    return
                if isinstance(message, Oversize):
                    code, reason, text = message.status()
                    session.finish(Refusal(code, reason, text, limit=message.limit))
                    return
                kind = message.WhichOneof("kind")
                if kind == "heartbeat" and self.ladder.echo(session, message.heartbeat.sequence):
                    continue  # the awaited echo: solicited, never counted as flooding
                verdict = guard.admit()
                if verdict is FloodVerdict.DISCONNECT:
                    # Read the backlog first: ending a stream under the bot's waiting writes
                    # makes its gRPC library report INTERNAL instead of this status.
                    await drain(request_iterator)
                    session.finish(
                        Refusal(
                            grpc.StatusCode.RESOURCE_EXHAUSTED,
                            Reason.FLOODING,
                            f"more than {self.limits.unsolicited_per_second:g} lobby messages "
                            f"a second, {self.limits.flood_disconnect_after} dropped in a row",
                        )
                    )
                    return
                if verdict is not FloodVerdict.OK:
                    continue
                if kind == "leave":
                    self.ladder.leave(session)
                # A second LobbyHello or an unknown kind (a newer client) is ignored.
        except DecodeError as exc:
            session.finish(
                Refusal(
                    grpc.StatusCode.INVALID_ARGUMENT,
                    Reason.MESSAGE_MALFORMED,
                    f"a message from the bot is not a LobbyRequest: {exc}",
                )
            )
        except (Exception, asyncio.CancelledError):
            pass  # the call ended (aborted by us, cancelled, or broken): nothing to read
        # The bot closed its side (or the call ended): no more matches for it.
        if not session.closed and not session.playing:
            session.finish()
        else:
            session.leaving = True

    async def _write(self, session: Session) -> AsyncIterator[ladder_pb2.LobbyResponse]:
        interval = self.ladder.config.heartbeat_interval_s
        timeout = self.ladder.config.heartbeat_timeout_s
        next_beat = time.monotonic() + interval
        while True:
            due = session.echo_due(timeout)
            wake = next_beat if due is None else min(next_beat, due[1])
            try:
                async with asyncio.timeout(max(0.0, wake - time.monotonic())):
                    message = await session.out.get()
            except TimeoutError:
                now = time.monotonic()
                due = session.echo_due(timeout)
                if due is not None and now >= due[1]:
                    session.finish(_heartbeat_missed(due[0], timeout))
                    return
                if now >= next_beat:
                    next_beat = now + interval
                    yield wire_ladder.heartbeat(session.heartbeat_sent(now))
                continue
            if message is None:
                return
            yield message

    # -- standings -----------------------------------------------------------------------

    async def GetStandings(
        self, request: ladder_pb2.GetStandingsRequest, context: Context
    ) -> ladder_pb2.GetStandingsResponse:
        """The standings, best first, at most ``STANDINGS_FRESH_S`` old: the call is public,
        and each read of the database builds the whole table (eight callers asking as fast
        as they could kept a core of the ladder busy). Callers asking during a read share
        it."""
        inactive = request.include_inactive
        kept = self._standings.get(inactive)
        if kept is not None and asyncio.get_running_loop().time() - kept[0] < STANDINGS_FRESH_S:
            return kept[1]
        reading = self._reading.get(inactive)
        if reading is None:
            reading = asyncio.ensure_future(self._read_standings(inactive))
            self._reading[inactive] = reading
            reading.add_done_callback(lambda done: self._standings_read(inactive, done))
        return await asyncio.shield(reading)

    def _standings_read(
        self, inactive: bool, done: asyncio.Future[ladder_pb2.GetStandingsResponse]
    ) -> None:
        if self._reading.get(inactive) is done:
            del self._reading[inactive]
        if not done.cancelled():
            done.exception()  # retrieved: its callers may all have gone

    async def _read_standings(self, include_inactive: bool) -> ladder_pb2.GetStandingsResponse:
        began = asyncio.get_running_loop().time()
        store = self.ladder.store
        lines = await asyncio.to_thread(store.lines)
        rated = (await asyncio.to_thread(store.counts)).get("finished", 0)
        rows = standing_rows(lines, include_inactive=include_inactive, min_games=self.min_games)
        made = wire_ladder.standings(rows, rated)
        self._standings[include_inactive] = (began, made)
        return made

    # -- accounts ------------------------------------------------------------------------

    async def AddBot(
        self, request: ladder_pb2.AddBotRequest, context: Context
    ) -> ladder_pb2.AddBotResponse:
        """A new account and its key (shown once)."""
        await self._organiser(context)
        try:
            name = accounts.check_name(request.name)
        except ValueError as exc:
            await abort(context, grpc.StatusCode.INVALID_ARGUMENT, Reason.REQUEST_INVALID, str(exc))
        try:
            accounts.check_owner(request.owner)
            accounts.check_not_house(name, request.owner or name)
        except ValueError as exc:
            await abort(context, grpc.StatusCode.INVALID_ARGUMENT, Reason.REQUEST_INVALID, str(exc))
        made = accounts.new_key()
        try:
            await asyncio.to_thread(
                self.ladder.store.add_bot,
                name,
                request.owner or name,
                made.key_id,
                made.salt,
                made.digest,
            )
        except StoreError as exc:
            await abort(context, grpc.StatusCode.ALREADY_EXISTS, Reason.BOT_EXISTS, str(exc))
        return wire_ladder.added(name, made.key)

    async def ListBots(
        self, request: ladder_pb2.ListBotsRequest, context: Context
    ) -> ladder_pb2.ListBotsResponse:
        """Every account (never a key)."""
        await self._organiser(context)
        rows = await asyncio.to_thread(self.ladder.store.accounts)
        return wire_ladder.account_list(rows)

    async def RevokeBot(
        self, request: ladder_pb2.RevokeBotRequest, context: Context
    ) -> ladder_pb2.RevokeBotResponse:
        """Revoke a key; the bot's lobby stream here ends at once (elsewhere: at the next
        lease renewal)."""
        await self._organiser(context)
        account = await self._account(context, request.name)
        await asyncio.to_thread(self.ladder.store.revoke, account.name)
        self.ladder.revoke_local(account.id)
        return wire_ladder.revoked()

    async def RotateBot(
        self, request: ladder_pb2.RotateBotRequest, context: Context
    ) -> ladder_pb2.RotateBotResponse:
        """A new key; the old one stops working at once."""
        await self._organiser(context)
        account = await self._account(context, request.name)
        made = accounts.new_key()
        try:
            await asyncio.to_thread(
                self.ladder.store.set_key, account.name, made.key_id, made.salt, made.digest
            )
        except BotRevokedError as exc:
            await abort(context, grpc.StatusCode.FAILED_PRECONDITION, Reason.BOT_REVOKED, str(exc))
        self.ladder.rotated_local(account.id, made.key_id)
        return wire_ladder.rotated(account.name, made.key)

    async def UnsuspendBot(
        self, request: ladder_pb2.UnsuspendBotRequest, context: Context
    ) -> ladder_pb2.UnsuspendBotResponse:
        """Let a suspended version play again (one that is not suspended: nothing to do; a
        revoked bot's: refused, BOT_REVOKED)."""
        await self._organiser(context)
        account = await self._account(context, request.name)
        if request.bot_version not in account.versions:
            await abort(
                context,
                grpc.StatusCode.NOT_FOUND,
                Reason.BOT_NOT_FOUND,
                f"bot {account.name!r} has no version {request.bot_version[:100]!r}",
            )
        try:
            await asyncio.to_thread(self.ladder.store.unsuspend, account.name, request.bot_version)
        except BotRevokedError as exc:
            await abort(context, grpc.StatusCode.FAILED_PRECONDITION, Reason.BOT_REVOKED, str(exc))
        return wire_ladder.unsuspended()

    async def _organiser(self, context: Context) -> None:
        """Abort unless the call carries the organiser token; with none set, account calls
        are closed: every bot this ladder hosts reaches this address, and one could revoke
        or rotate its rivals' keys (``medina-arena bots ... --db`` works on the database)."""
        if not self.organiser_token:
            await abort(
                context,
                grpc.StatusCode.UNAUTHENTICATED,
                Reason.ORGANISER_TOKEN_INVALID,
                "this ladder was started without --organiser-token, so its account calls are "
                "closed (its bots reach this address too): use 'medina-arena bots ... --db' "
                "on its database, or start it with --organiser-token",
            )
        await require_organiser(context, self.organiser_token)

    async def _account(self, context: Context, name: str) -> Any:
        try:
            return await asyncio.to_thread(self.ladder.store.account, name)
        except StoreError as exc:
            await abort(context, grpc.StatusCode.NOT_FOUND, Reason.BOT_NOT_FOUND, str(exc))


def _heartbeat_missed(sequence: int, timeout_s: float) -> Refusal:
    """The status that ends a lobby stream whose bot did not echo heartbeat ``sequence``."""
    timeout_ms = round(timeout_s * 1000)
    return Refusal(
        grpc.StatusCode.DEADLINE_EXCEEDED,
        Reason.HEARTBEAT_MISSED,
        f"heartbeat {sequence} was not echoed within heartbeat_timeout_ms ({timeout_ms}) of "
        "its sending; the bot is no longer matched, its matches in play go on",
        sequence=sequence,
        timeout_ms=timeout_ms,
    )


def add_ladder_service(servicer: LadderServicer, server: grpc.aio.Server) -> None:
    """Register LadderService, its lobby messages read through the size limit (a message
    over it ends the stream with MESSAGE_TOO_LARGE rather than a bare gRPC error)."""
    handlers = {
        "Lobby": grpc.stream_stream_rpc_method_handler(
            servicer.Lobby,
            request_deserializer=sized(
                ladder_pb2.LobbyRequest.FromString, servicer.limits.max_message_bytes
            ),
            response_serializer=ladder_pb2.LobbyResponse.SerializeToString,
        ),
    }

    # Every other method of the service is a unary call: served from the descriptor, so a
    # method added to the proto cannot be left unregistered (UNIMPLEMENTED to its callers).
    for method in ladder_pb2.DESCRIPTOR.services_by_name["LadderService"].methods:
        if method.name not in handlers:
            handlers[method.name] = grpc.unary_unary_rpc_method_handler(
                getattr(servicer, method.name),
                request_deserializer=getattr(ladder_pb2, method.input_type.name).FromString,
                response_serializer=_serialize,
            )
    service = ladder_pb2.DESCRIPTOR.services_by_name["LadderService"].full_name
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(service, handlers),))
    server.add_registered_method_handlers(service, handlers)


def _serialize(message: Any) -> bytes:
    data: bytes = message.SerializeToString()
    return data
