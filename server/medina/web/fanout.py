"""One live stream per match however many pages follow it.

A match's stream (``source.Feed``: one spectator subscription to this process's match, one
``Watch`` call to another server) is read once, by one task, and each of its messages is
made and encoded once, then queued for every page of that match. A page that opens while
the stream is being read gets first one message with everything said so far (the stream's
first message with every later one folded in: the snapshot, the updates after it, the story
from the start, the board and clocks as they are now) and then the shared messages. The
stream is closed when its last page leaves (a page opened later starts it again), and
forgotten when it ends, its whole (one message) kept for the pages of the last
``ENDED_KEPT`` ended matches.

Without this every page followed the match itself: with 500 pages on the matches of one
server, the server's event loop rebuilt and encoded the same board 500 times per decision
between a bot's reply and the next request, and its matches played 12 times slower.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
from collections import OrderedDict, deque
from collections.abc import AsyncGenerator, Callable

from .live import sse
from .source import Feed
from .view import JSON

log = logging.getLogger("medina.web")

#: What a page is sent when nothing was said for the keep-alive interval.
KEEPALIVE_FRAME = sse(None).encode()

#: A message's keys whose lists each later message extends; every other key a later
#: message replaces (the board, clocks, phase, note, the result).
GROWING = ("watch", "story")

#: Seconds between two messages of a match to its pages: what a stream says in between is
#: folded into the next. Each message is written to every page on the event loop the
#: referee shares, so a match's pages cost it at most this many writes a second each,
#: however fast its bots play (a page cannot show 50 decisions a second anyway); its first
#: and its last message go at once.
PACE_S = 0.25

#: Messages at most queued for one page. A page's messages wait only while its connection
#: is not written to (the client reads nothing: the viewer's writes to it are paused); a
#: page with more waiting is dropped, its queue let go and its stream ended when the
#: connection is written to again (a browser's page reconnects and starts from everything
#: said so far, folded into one message). 64 is 16 s of a match at ``PACE_S``; the
#: connection itself is closed after ``server.WRITE_STALL_S`` without a write.
MAX_PENDING = 64


class Message:
    """One message of a live stream: its JSON and its Server-Sent Events frame, encoded once
    however many pages are sent it (the last one, with ``result``, is the ``end`` event).
    Its JSON is never changed once made."""

    __slots__ = ("_frame", "data")

    def __init__(self, data: JSON) -> None:
        self.data = data
        self._frame: bytes | None = None

    @property
    def final(self) -> bool:
        """Whether it is the stream's last message (it carries the result)."""
        return "result" in self.data

    @property
    def frame(self) -> bytes:
        """The Server-Sent Events frame of the message."""
        if self._frame is None:
            self._frame = sse(self.data, "end" if self.final else "update").encode()
        return self._frame


#: What a page reads: messages, None for a keep-alive; given the keep-alive interval (s).
Live = Callable[[float], AsyncGenerator[Message | None, None]]


class _Folded:
    """Messages of a stream folded into one: everything it has said, for a page that opens
    now (made once, however many pages open), or what it said since its pages were last
    sent a message."""

    def __init__(self, first: JSON) -> None:
        self.data: JSON = {k: list(v) if k in GROWING else v for k, v in first.items()}
        self._message: Message | None = None

    def add(self, later: JSON) -> None:
        for key, value in later.items():
            if key in GROWING:
                self.data[key] = self.data.get(key, []) + value
            else:
                self.data[key] = value
        self._message = None

    def message(self) -> Message:
        if self._message is None:
            self._message = Message(dict(self.data))
        return self._message


class _Page:
    """One page's messages not yet sent to it; ``dropped`` once too many waited."""

    __slots__ = ("dropped", "pending", "wake")

    def __init__(self, first: Message | None) -> None:
        self.pending: deque[Message] = deque(() if first is None else (first,))
        self.wake = asyncio.Event()
        self.dropped = False

    def put(self, message: Message) -> None:
        self.pending.append(message)
        self.wake.set()


class _Broadcast:
    """One match's stream, read by one task and queued for each of its pages."""

    def __init__(
        self,
        feed: Feed,
        keepalive_s: float,
        forget: Callable[[Message | None], None],
        max_pending: int = MAX_PENDING,
    ) -> None:
        self.pages: set[_Page] = set()
        self._max_pending = max_pending
        #: Everything the pages were sent (a page that opens starts from it).
        self.so_far: _Folded | None = None
        #: What the stream said since, not sent yet (``PACE_S``).
        self._held: _Folded | None = None
        self._sent_at = -math.inf
        self._timer: asyncio.TimerHandle | None = None
        self.over = False
        self._forget = forget
        self._loop = asyncio.get_running_loop()
        self._task = self._loop.create_task(self._read(feed, keepalive_s))

    async def _read(self, feed: Feed, keepalive_s: float) -> None:
        messages = feed(keepalive_s)
        try:
            async for data in messages:
                if data is None:
                    continue  # each page keeps its own connection alive
                if self._held is None:
                    self._held = _Folded(data)
                else:
                    self._held.add(data)
                final = "result" in data
                wait = self._sent_at + PACE_S - self._loop.time()
                if final or wait <= 0:
                    self._send()
                elif self._timer is None:
                    self._timer = self._loop.call_later(wait, self._send)
                if final:
                    assert self.so_far is not None  # just sent
                    self._end(self.so_far.message())
                    return
        except Exception:
            # The pages' streams end without the result: each page reconnects and says so.
            log.warning("a live stream failed; its pages will reconnect", exc_info=True)
        finally:
            await messages.aclose()
            self._end()

    def _send(self) -> None:
        """Send the pages what was held back, as one message."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        held, self._held = self._held, None
        if held is None or self.over:
            return
        self._sent_at = self._loop.time()
        message = held.message()
        if self.so_far is None:
            self.so_far = _Folded(message.data)
        else:
            self.so_far.add(message.data)
        for page in list(self.pages):
            if len(page.pending) < self._max_pending:
                page.put(message)
            else:
                self._drop(page)

    def _drop(self, page: _Page) -> None:
        """Let go of a page that reads nothing: its queue now, its stream when it is next
        read (it ends without the result: the page reconnects)."""
        log.debug("dropped a live page with %d messages unread", len(page.pending))
        page.dropped = True
        page.pending.clear()
        page.wake.set()
        self._leave(page)

    def _leave(self, page: _Page) -> None:
        self.pages.discard(page)
        if not self.pages and not self.over:
            self._end()  # no page opened from now on joins it
            self._task.cancel()

    def _end(self, final: Message | None = None) -> None:
        """No page joins from now on; ``final``: everything the stream said, to its end."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self.over:
            self.over = True
            self._forget(final)
            for page in self.pages:
                page.wake.set()

    async def follow(self, keepalive_s: float) -> AsyncGenerator[Message | None, None]:
        """A page's messages: what was said so far (if anything was), then each new one; a
        None after ``keepalive_s`` seconds without one."""
        page = _Page(self.so_far.message() if self.so_far is not None else None)
        self.pages.add(page)
        try:
            while True:
                while page.pending:
                    message = page.pending.popleft()
                    yield message
                    if message.final:
                        return
                if self.over or page.dropped:
                    return
                page.wake.clear()
                try:
                    async with asyncio.timeout(keepalive_s):
                        await page.wake.wait()
                except TimeoutError:
                    yield None
        finally:
            self._leave(page)


#: Ended matches whose whole stream (one message) is kept for the pages that open after.
ENDED_KEPT = 32


class FanOut:
    """The streams of the matches being followed, by match id, and the whole streams of the
    last ``ENDED_KEPT`` that ended (a page opened on an ended match is sent its one message
    as it was made and encoded, not a new one each time). A page with more than
    ``max_pending`` messages waiting is dropped (``MAX_PENDING``)."""

    def __init__(self, max_pending: int = MAX_PENDING) -> None:
        if max_pending < 1:
            raise ValueError(f"max_pending must be at least 1, not {max_pending}")
        self.max_pending = max_pending
        self._streams: dict[str, _Broadcast] = {}
        self._ended: OrderedDict[str, Message] = OrderedDict()

    def following(self, match_id: str) -> bool:
        """Whether ``match_id``'s stream is being read for some page now."""
        return match_id in self._streams

    def __len__(self) -> int:
        return len(self._streams)

    def pages(self, match_id: str) -> int:
        """How many pages follow ``match_id``'s stream now (a dropped page no longer does)."""
        stream = self._streams.get(match_id)
        return 0 if stream is None else len(stream.pages)

    def live(self, match_id: str, feed: Feed | None) -> Live:
        """A page's messages of ``match_id``: from its stream if it is being read, else from
        ``feed`` read anew (None: only when the stream is being read). Nothing starts
        before the page reads its first message."""

        async def messages(keepalive_s: float) -> AsyncGenerator[Message | None, None]:
            ended = self._ended.get(match_id)
            if ended is not None:
                yield ended
                return
            stream = self._streams.get(match_id)
            if stream is None:
                if feed is None:
                    return  # it failed in between: the page reconnects
                stream = _Broadcast(
                    feed,
                    keepalive_s,
                    lambda final: self._forget(match_id, stream, final),
                    self.max_pending,
                )
                self._streams[match_id] = stream
            async with contextlib.aclosing(stream.follow(keepalive_s)) as follow:
                async for message in follow:
                    yield message

        return messages

    def _forget(self, match_id: str, stream: _Broadcast | None, final: Message | None) -> None:
        if self._streams.get(match_id) is stream:
            del self._streams[match_id]
        if final is not None:
            self._ended[match_id] = final
            while len(self._ended) > ENDED_KEPT:
                self._ended.popitem(last=False)


__all__ = ["KEEPALIVE_FRAME", "MAX_PENDING", "FanOut", "Live", "Message"]
