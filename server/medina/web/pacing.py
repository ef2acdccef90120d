"""How fast one client address may send the viewer requests: a token bucket per address.

The viewer can share its event loop with the referee (``serve --http``), and a request,
however cheap (a cached replay, a 304), costs that loop a few hundred microseconds: eight
keep-alive clients asking as fast as they could for cached replays took a server refereeing
64 matches from about 1,240 decisions a second to 407, its p99 from 5 ms to 297, 50 strikes.
An address past its rate is not refused: its connections stop being read until its bucket
has a request again, so the excess waits in the client's own socket and costs the server
nothing. A new connection of an address in debt is not read either (a client opening a
connection per request got thousands a second through), and the debt is bounded (a flood
must not leave honest visitors waiting minutes after it stopped). Requests are weighed by
what they cost (``request_cost``): a filtered list of the records or a live page's first
message costs the loop many times a cached file. A person's browsing (a page and its
scripts, a replay, a live page's one stream) stays well inside the burst.
"""

from __future__ import annotations

from medina.boundary.bucket import TokenBucket

__all__ = [
    "EVERYONE",
    "REQUESTS_PER_S",
    "REQUEST_BURST",
    "SHARED_REQUESTS_PER_S",
    "SHARED_REQUEST_BURST",
    "Pacing",
    "request_cost",
]

#: Requests one address may send a second, on average.
REQUESTS_PER_S = 20.0
#: Requests one address may send at once after a pause (a page with its scripts and styles,
#: a few tabs opened together).
REQUEST_BURST = 100
#: Requests the viewer sharing its process with a referee (``serve --http``) handles a
#: second in all, whoever sends them (every address together, loopback included), and at once.
#: Past it every connection waits its turn: the matches' loop gives the viewer a few per cent.
SHARED_REQUESTS_PER_S = 400.0
SHARED_REQUEST_BURST = 400
#: The key of the one bucket all addresses share.
EVERYONE = "*"
#: Addresses remembered before the ones whose buckets are full again are forgotten.
_REMEMBERED = 4096


def request_cost(path: str, query: bytes) -> int:
    """What a request weighs in the pace, by what it costs the event loop and its threads
    (measured against a cached file's 1): the matches list over a records directory reads
    a stat per record, with a state filter every record's state; a live page's stream
    begins with the whole match so far; a replay or ``/metrics`` is a few milliseconds."""
    if path in ("/", "/api/matches"):
        return 10 if b"state=" in query else 4
    if path.startswith("/api/live/"):
        return 5
    if path.startswith(("/api/records/", "/standings", "/metrics")):
        return 2
    return 1


class Pacing:
    """Token buckets per client address: ``rate`` requests a second, ``burst`` at once, at
    most ``most_debt`` requests in debt (the wait a debt makes is at most
    ``most_debt / rate`` seconds)."""

    def __init__(
        self,
        rate: float = REQUESTS_PER_S,
        burst: int = REQUEST_BURST,
        most_debt: int | None = None,
    ) -> None:
        if rate <= 0 or burst < 1:
            raise ValueError(f"pacing needs rate > 0 and burst >= 1, not {rate} and {burst}")
        self.rate = rate
        self.burst = burst
        self.most_debt = burst if most_debt is None else most_debt
        self._buckets: dict[str, TokenBucket] = {}

    def take(self, client: str, now: float, cost: int = 1) -> float:
        """Count a request of ``client`` at ``now`` (seconds) weighing ``cost``; how long
        its connections must wait before the next is read (0: none)."""
        bucket = self._buckets.get(client)
        if bucket is None:
            if len(self._buckets) >= _REMEMBERED:
                self._forget_rested(now)
            bucket = self._buckets[client] = TokenBucket(self.rate, self.burst, now=now)
        return bucket.owe(now, cost, self.most_debt)

    def wait(self, client: str, now: float) -> float:
        """How long ``client`` must wait before it is read again (0: not in debt)."""
        bucket = self._buckets.get(client)
        return 0.0 if bucket is None else bucket.debt_s(now)

    def _forget_rested(self, now: float) -> None:
        """Drop the addresses whose buckets have filled up again (as good as new)."""
        for client in [c for c, b in self._buckets.items() if b.rested(now)]:
            del self._buckets[client]
