"""A seat played over a gRPC stream: queues outgoing messages, screens incoming replies."""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable, Sequence

import grpc

from medina.engine import Event, Geometry
from medina.referee.record import ErrorCode
from medina.referee.seat import (
    DecisionRequest,
    ForfeitNotice,
    MatchEnd,
    RejectionNotice,
    ReplySignal,
    RequestWrittenSignal,
    Signal,
)
from medina.v1 import arena_pb2
from medina.wire import convert, play

from ..common.admission import MatchTiming
from ..common.status import Reason

#: What the writer side of a stream consumes: a message, or a ``PlayResponse`` already
#: serialized (decision requests, built as wire bytes); None closes the stream.
Outgoing = asyncio.Queue[arena_pb2.PlayResponse | bytes | None]

#: The opt-in feature that sends ``SeatForfeited`` messages
#: (docs/protocol.md, "Versions and features").
FORFEIT_NOTICES = "forfeit-notices"


class Connection:
    """One live stream of a seat."""

    def __init__(
        self, omit_legal: bool, omit_updates: bool = False, features: frozenset[str] = frozenset()
    ) -> None:
        self.queue: Outgoing = asyncio.Queue()
        self.omit_legal = omit_legal
        self.omit_updates = omit_updates
        #: The opt-in features in effect on this stream (message kinds a 1.0 bot lacks).
        self.features = features
        #: With omit_updates: the events held back since the seat's last request (engine
        #: events, converted only if the match ends before the next request carries them),
        #: and the history index of the first.
        self.held: list[Event] = []
        self.held_from = 0
        #: The first copies of requests queued on this stream and not yet written, oldest
        #: first, with their ids: each one's write starts its clock. More than one when a
        #: seat is asked again before gRPC has reported the last write (a bot that answers
        #: at once, a seat with two decisions in a row): each is timed, none is lost.
        self.timed: deque[tuple[bytes, int]] = deque()
        self.crashed = False  # the bot's side failed rather than closing cleanly
        #: Set to end the stream with this status (and ErrorInfo reason) instead of OK.
        self.status: tuple[grpc.StatusCode, Reason, str] | None = None
        #: A newer stream took the seat over, and that is the status it ends with (its
        #: reader may wait on a bot sending nothing: the status is said at once).
        self.taken_over = False
        #: The newest request id written to this stream, and the newest one the bot replied
        #: to on it: while the first is ahead, a reply may still come (``owes_reply``).
        self.asked = 0
        self.answered = 0

    @property
    def owes_reply(self) -> bool:
        """Whether the bot was sent a request on this stream it has not replied to yet (a
        slow bot whose clock ran out is still choosing, and will write)."""
        return self.asked > self.answered

    def send(self, message: arena_pb2.PlayResponse | bytes) -> None:
        """Queue a message for the stream."""
        self.queue.put_nowait(message)

    def close(self) -> None:
        """End the stream after what is queued."""
        self.queue.put_nowait(None)


class GrpcSeat:
    """The referee's ``Seat`` for a remote bot. At most one live connection at a time."""

    def __init__(
        self,
        seat: int,
        geometry: Geometry,
        submit: Callable[[Signal], None],
        timing: MatchTiming | None = None,
    ) -> None:
        self.seat = seat
        self.geometry = geometry
        self.submit = submit
        #: The match's timing, shared by its seats (admission weighs the turnaround).
        self.timing = timing
        self.connection: Connection | None = None
        self.ever_connected = False
        self.open_request = 0  # id of the request awaiting an answer, 0 for none
        self.judging = False  # a reply to open_request is with the referee
        self.issued: set[int] = set()
        self.ended = False
        #: Streams of this seat closed for flooding (the first is logged as a warning).
        self.floods = 0

    # -- Seat protocol (called by the referee) ---------------------------------------

    def request(self, request: DecisionRequest) -> bool:
        """Send (or re-send) a decision request; True when its write will be reported (the
        first copy, on a live connection)."""
        first_copy = request.request_id not in self.issued
        self.open_request = request.request_id
        self.judging = False
        self.issued.add(request.request_id)
        conn = self.connection
        if conn is None:
            return False  # away: its clock runs from now, as a disconnected seat's does
        conn.held.clear()  # the request's observation carries them
        conn.asked = max(conn.asked, request.request_id)
        message = play.request_bytes(request, with_legal=not conn.omit_legal)
        if first_copy:
            conn.timed.append((message, request.request_id))
        conn.send(message)
        return first_copy

    def reject(self, notice: RejectionNotice) -> None:
        """The reply was refused: the request is open again."""
        self.judging = False
        if self.connection is not None:
            self.connection.send(play.rejected(notice))

    def close_request(self, request_id: int) -> None:
        """The request is settled."""
        if self.open_request == request_id:
            self.open_request = 0
            self.judging = False

    def update(self, first_index: int, events: Sequence[Event]) -> bool:
        """Forward public events (held for the next request when the bot opted out); False
        when nothing was sent."""
        conn = self.connection
        if conn is None:
            return False
        if conn.omit_updates:
            if not conn.held:
                conn.held_from = first_index
            conn.held.extend(events)
            return False
        conn.send(play.update(first_index, events))
        return True

    def forfeited(self, notice: ForfeitNotice) -> None:
        """Tell a bot that asked for forfeit notices."""
        conn = self.connection
        if conn is not None and FORFEIT_NOTICES in conn.features:
            conn.send(play.forfeited(notice))

    def end(self, end: MatchEnd) -> None:
        """Send the result and close the stream."""
        self.ended = True
        self.open_request = 0
        conn = self.connection
        if conn is not None:
            # a bot without updates still learns how the game ended
            conn.send(play.match_ended(end, conn.held_from, conn.held))
            conn.close()

    # -- transport side (called by the servicer) ---------------------------------------

    def attach(
        self, omit_legal: bool, omit_updates: bool = False, features: frozenset[str] = frozenset()
    ) -> Connection:
        """A new stream takes the seat; an older one is closed."""
        old = self.connection
        if old is not None:
            # Said, not a silent OK: a bot told to resume after a clean end would take the
            # seat back, and two holders of one resume token would go on taking it in turn.
            if old.status is None:  # else its reader set one, and drains the stream
                old.taken_over = True
                old.status = (
                    grpc.StatusCode.ABORTED,
                    Reason.SEAT_TAKEN_OVER,
                    f"seat {self.seat} was taken over by a newer stream with its resume token; "
                    "this stream is closed (stop this copy of the bot)",
                )
            old.close()
        conn = Connection(omit_legal, omit_updates, features)
        self.connection = conn
        self.ever_connected = True
        return conn

    def detach(self, conn: Connection) -> bool:
        """The stream ended; returns True if it was the live one."""
        if self.connection is conn:
            self.connection = None
            return True
        return False

    def written(self, conn: Connection, message: arena_pb2.PlayResponse | bytes) -> None:
        """The stream wrote ``message`` to the bot: if it was the first copy of a request,
        the referee starts that request's clock now."""
        timed = conn.timed
        if timed and message is timed[0][0]:  # the stream writes in order
            request_id = timed.popleft()[1]
            now = time.monotonic()
            if self.timing is not None:
                self.timing.requested(now)
            self.submit(RequestWrittenSignal(self.seat, request_id, now))

    def expects(self, request_id: int) -> bool:
        """Whether a reply with this id would be the awaited answer to the open request."""
        return bool(request_id) and request_id == self.open_request and not self.judging

    def on_reply(self, conn: Connection, reply: arena_pb2.Reply) -> None:
        """Screen a bot's reply; only an answer to the open request reaches the referee."""
        rid = reply.request_id
        conn.answered = max(conn.answered, rid)
        if self.ended:
            self._notice(conn, ErrorCode.MATCH_OVER, rid, "the match is over")
        elif self.expects(rid):
            received = time.monotonic()
            if self.timing is not None:
                self.timing.replied(received)
            try:
                action = convert.action_from_proto(reply.action, self.geometry)
            except convert.MalformedActionError as exc:
                self.judging = True
                raw = reply.action.SerializeToString() if reply.HasField("action") else None
                self.submit(ReplySignal(self.seat, rid, None, received, str(exc), raw))
                return
            self.judging = True
            self.submit(ReplySignal(self.seat, rid, action, received))
        elif rid == self.open_request and rid:
            self._notice(
                conn,
                ErrorCode.STALE_REQUEST,
                rid,
                f"a reply to request {rid} is already being judged; duplicate ignored",
            )
        elif rid in self.issued:
            self._notice(
                conn,
                ErrorCode.STALE_REQUEST,
                rid,
                f"request {rid} was already answered or timed out",
            )
        else:
            self._notice(
                conn,
                ErrorCode.UNKNOWN_REQUEST,
                rid,
                f"no request {rid} was sent to seat {self.seat}",
            )

    def _notice(self, conn: Connection, code: ErrorCode, rid: int, message: str) -> None:
        conn.send(play.notice(code, message, rid))
