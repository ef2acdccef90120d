"""ArenaService.Play: the bot stream — handshake, then replies in, requests and events out."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator

import grpc
from google.protobuf.message import DecodeError

from medina.boundary.terminal import NAME_LIMIT, name_fault, printable
from medina.engine import initial_supplies, observe
from medina.referee.record import ErrorCode
from medina.referee.seat import ConnectionSignal
from medina.v1 import arena_pb2
from medina.wire import play
from medina.wire.shared.protocol import PROTOCOL_MINOR, PROTOCOL_VERSION, features_for

from ..common.hello import first_message
from ..common.limits import (
    ClientSlots,
    FloodGuard,
    FloodVerdict,
    Limits,
    Oversize,
    drain,
    sized,
    stream_slot,
)
from ..common.status import Reason, Refused, abort
from ..common.tokens import same_token
from .grpc_seat import Connection, GrpcSeat
from .host import Arena, HostedMatch

log = logging.getLogger("medina.rpc")


#: How long a stream that ended with MatchEnded stays open for a reply the bot still owes.
OWED_REPLY_WAIT_S = 10.0


class ArenaServicer:
    """Serves bot sessions for the matches of an ``Arena``."""

    def __init__(
        self, arena: Arena, limits: Limits | None = None, slots: ClientSlots | None = None
    ) -> None:
        self.arena = arena
        self.limits = limits or Limits()
        self.slots = slots or ClientSlots.for_limits(self.limits)
        #: Reader tasks of sessions, until each ends with its call.
        self._readers: set[asyncio.Task[None]] = set()

    async def Play(
        self,
        request_iterator: AsyncIterator[arena_pb2.PlayRequest],
        context: grpc.aio.ServicerContext[arena_pb2.PlayRequest, arena_pb2.PlayResponse],
    ) -> AsyncIterator[arena_pb2.PlayResponse | bytes]:
        """One bot session."""
        async with stream_slot(self.slots, context):
            async for message in self._session(request_iterator, context):
                yield message

    async def _session(
        self,
        request_iterator: AsyncIterator[arena_pb2.PlayRequest],
        context: grpc.aio.ServicerContext[arena_pb2.PlayRequest, arena_pb2.PlayResponse],
    ) -> AsyncIterator[arena_pb2.PlayResponse | bytes]:
        admitted = await self._handshake(request_iterator)
        if isinstance(admitted, Refused):
            admitted.set_on(context)
            return
        hosted, seat, hello = admitted
        grpc_seat = hosted.seats[seat]
        features, opted = features_for(hello.features)
        conn = grpc_seat.attach(hello.omit_legal_actions, hello.omit_updates, opted)
        match = hosted.match
        clean = False  # stays False when the handler is cancelled (the bot vanished)
        try:
            now = match.view()
            yield play.welcome(
                match_id=match.match_id,
                seat=seat,
                settings=now.settings,
                resume_token=hosted.resume_tokens[seat],
                observation=observe(now.state, seat),
                features=features,
                initial_supplies=initial_supplies(now.state.rules),
            )
            log.info(
                "match %s seat %d: %s connected",
                match.match_id,
                seat,
                printable(hello.bot_name[:100]) or "bot",  # a bot never writes a log line
            )
            match.submit(
                ConnectionSignal(
                    seat, True, time.monotonic(), hello.bot_name[:100], hello.bot_version[:100]
                )
            )
            reader = asyncio.get_running_loop().create_task(
                self._read(request_iterator, grpc_seat, conn, match.match_id)
            )
            self._readers.add(reader)  # a strong reference until it ends on its own
            reader.add_done_callback(self._readers.discard)
            while True:
                message = await conn.queue.get()
                if message is None:
                    clean = not conn.crashed
                    break
                yield message
                grpc_seat.written(conn, message)
            if clean and conn.status is None and grpc_seat.ended and conn.owes_reply:
                # The bot is still choosing (its clock ran out, the match ended meanwhile):
                # ending the call before its reply comes makes its gRPC library fail the
                # stream INTERNAL as it writes, MatchEnded unread. Its reply (answered with
                # a MATCH_OVER notice) and its half-close end the wait, or OWED_REPLY_WAIT_S.
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(OWED_REPLY_WAIT_S):
                        await asyncio.shield(reader)
            if conn.status is not None:
                # Set by the reader, which may still be draining the stream (its seat taken
                # over, or the match over, meanwhile): ending the call under that read would
                # leave the bot's pending writes to fail with its library's INTERNAL. A seat
                # taken over is said at once: that reader may wait on a bot that sends nothing.
                if not conn.taken_over:
                    await reader
                code, reason, text = conn.status
                await abort(context, code, reason, text, match_id=match.match_id, seat=seat)
        finally:
            # The reader is not cancelled: cancelling a pending gRPC read leaks the read's
            # state in grpc.aio (about 80 bytes a stream, never freed). Once this handler
            # returns, gRPC ends the call and the pending read fails on its own.
            if grpc_seat.detach(conn) and not grpc_seat.ended:
                log.info("match %s seat %d: disconnected", match.match_id, seat)
                match.submit(
                    ConnectionSignal(
                        seat, False, time.monotonic(), detail="stream ended", crashed=not clean
                    )
                )

    async def _handshake(
        self, request_iterator: AsyncIterator[arena_pb2.PlayRequest]
    ) -> tuple[HostedMatch, int, arena_pb2.Hello] | Refused:
        """The match, seat and Hello a stream's handshake opens, or why it is refused
        (returned, not raised: anyone may ask, at any rate; see ``Refused``)."""
        first = await first_message(request_iterator, self.limits.handshake_timeout_s)
        if isinstance(first, Refused):
            return first
        if isinstance(first, Oversize):
            return first.refused()
        if not first.HasField("hello"):
            return Refused(
                grpc.StatusCode.INVALID_ARGUMENT,
                Reason.HELLO_MISSING,
                "the first message of a stream must be Hello",
            )
        hello = first.hello
        if hello.protocol_version != PROTOCOL_VERSION:
            return Refused(
                grpc.StatusCode.FAILED_PRECONDITION,
                Reason.PROTOCOL_VERSION_UNSUPPORTED,
                f"protocol version {hello.protocol_version} is not supported; "
                f"this server speaks version {PROTOCOL_VERSION}",
                {"supported": PROTOCOL_VERSION, "minor": PROTOCOL_MINOR},
            )
        # Shown in consoles, tables and logs: a newline or ESC in a name acted there.
        for field, text in (("bot_name", hello.bot_name), ("bot_version", hello.bot_version)):
            if (fault := name_fault(f"Hello.{field}", text)) is not None:
                return Refused(
                    grpc.StatusCode.INVALID_ARGUMENT,
                    Reason.HELLO_INVALID,
                    fault,
                    {"field": field} | ({"limit": NAME_LIMIT} if len(text) > NAME_LIMIT else {}),
                )
        found = self.arena.find_seat(hello.token)
        if found is None:
            why = "unknown seat token"
            if not hello.token:
                # A bot resuming with its resume token alone: the seat token opens the seat.
                why = "Hello.token is empty: send the seat token (the resume token goes with it)"
            return Refused(grpc.StatusCode.UNAUTHENTICATED, Reason.SEAT_TOKEN_UNKNOWN, why)
        hosted, seat = found
        match = hosted.match
        about = {"match_id": match.match_id, "seat": seat}
        if match.view().outcome is not None:
            return Refused(
                grpc.StatusCode.FAILED_PRECONDITION, Reason.MATCH_OVER, "the match is over", about
            )
        if match.is_forfeited(seat):
            return Refused(
                grpc.StatusCode.FAILED_PRECONDITION,
                Reason.SEAT_FORFEITED,
                f"seat {seat} has forfeited and cannot be taken up again",
                about,
            )
        grpc_seat: GrpcSeat = hosted.seats[seat]
        # The seat token opens its seat whenever no stream holds it (a bot that restarted
        # and lost its resume token can rejoin); taking over a seat a live stream holds
        # needs the resume token, so trying the token first cannot lock the real bot out.
        if grpc_seat.connection is not None and not same_token(
            hello.resume_token, hosted.resume_tokens[seat]
        ):
            # A resume token that was sent and is wrong is said so: the bot would otherwise
            # be told to send the token it just sent.
            wrong = (
                "the resume token sent is not this seat's (from another match, or mistyped); "
                if hello.resume_token
                else ""
            )
            return Refused(
                grpc.StatusCode.ALREADY_EXISTS,
                Reason.SEAT_TAKEN,
                f"seat {seat} is held by another live stream; {wrong}to take it over (a "
                "connection that broke without the server noticing), send the resume token "
                "from that stream's Welcome, or connect again once that stream has ended",
                about,
            )
        return hosted, seat, hello

    async def _read(
        self,
        request_iterator: AsyncIterator[arena_pb2.PlayRequest],
        grpc_seat: GrpcSeat,
        conn: Connection,
        match_id: str,
    ) -> None:
        """Feed replies to the seat; when the bot's side ends, end the stream."""
        guard = FloodGuard(self.limits)
        try:
            async for message in request_iterator:
                if grpc_seat.connection is not conn:
                    return  # superseded by a reconnect
                if isinstance(message, Oversize):
                    conn.crashed = True
                    conn.status = message.status()
                    return
                is_reply = message.HasField("reply")
                if is_reply and grpc_seat.expects(message.reply.request_id):
                    grpc_seat.on_reply(conn, message.reply)
                    continue
                verdict = guard.admit()
                if verdict is FloodVerdict.OK:
                    if is_reply:
                        grpc_seat.on_reply(conn, message.reply)
                    else:
                        conn.send(_protocol_notice("only Reply messages are expected after Hello"))
                elif verdict is FloodVerdict.FIRST_DROP:
                    conn.send(_rate_notice(self.limits))
                elif verdict is FloodVerdict.DISCONNECT:
                    conn.crashed = True
                    conn.status = (
                        grpc.StatusCode.RESOURCE_EXHAUSTED,
                        Reason.FLOODING,
                        f"closed after {self.limits.flood_disconnect_after} unsolicited messages "
                        f"beyond the limit ({self.limits.unsolicited_per_second:g} per second, "
                        f"bursts of {self.limits.unsolicited_burst})",
                    )
                    grpc_seat.floods += 1
                    # Once at WARNING: a bot that resumes and floods again, over and over,
                    # must not fill the operator's log.
                    log.log(
                        logging.WARNING if grpc_seat.floods == 1 else logging.DEBUG,
                        "match %s seat %d: stream closed for flooding (%d time(s) in this match)",
                        match_id,
                        grpc_seat.seat,
                        grpc_seat.floods,
                    )
                    await drain(request_iterator)
                    return
        except DecodeError as exc:
            conn.crashed = True
            conn.status = (
                grpc.StatusCode.INVALID_ARGUMENT,
                Reason.MESSAGE_MALFORMED,
                f"a message from the bot is not a PlayRequest: {exc}",
            )
        except grpc.aio.AioRpcError:
            conn.crashed = True
        except (grpc.aio.UsageError, grpc.aio.AbortError):
            pass  # the call is over: this session has already ended
        except asyncio.CancelledError:
            conn.crashed = True
            raise
        finally:
            conn.close()


def add_arena_service(servicer: ArenaServicer, server: grpc.aio.Server) -> None:
    """Register ArenaService: as the generated ``add_ArenaServiceServicer_to_server`` does, but
    a response may be a ``PlayResponse`` already serialized (decision requests are built as
    wire bytes and written as they are)."""
    handlers = {
        "Play": grpc.stream_stream_rpc_method_handler(
            servicer.Play,
            request_deserializer=sized(
                arena_pb2.PlayRequest.FromString, servicer.limits.max_message_bytes
            ),
            response_serializer=_serialize,
        )
    }
    service = arena_pb2.DESCRIPTOR.services_by_name["ArenaService"].full_name
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(service, handlers),))
    server.add_registered_method_handlers(service, handlers)


def _serialize(message: arena_pb2.PlayResponse | bytes) -> bytes:
    return message if type(message) is bytes else message.SerializeToString()  # type: ignore[union-attr]


def _rate_notice(limits: Limits) -> arena_pb2.PlayResponse:
    return play.notice(
        ErrorCode.RATE_LIMITED,
        f"too many unsolicited messages (more than {limits.unsolicited_per_second:g} per "
        f"second, bursts of {limits.unsolicited_burst}); they are dropped unanswered, and "
        f"after {limits.flood_disconnect_after} in a row the stream is closed",
    )


def _protocol_notice(text: str) -> arena_pb2.PlayResponse:
    return play.notice(ErrorCode.PROTOCOL, text)
