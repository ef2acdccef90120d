"""``/metrics`` for Prometheus: matches, decisions, decision latency, misbehaviour by bot,
open streams and the event loop's lag; beside a ladder, the ladder's own (``LadderProbe``).

Counts come from the record entries of every match the arena creates (a record tap, see
``Arena.record_taps``), so they are exactly what the records hold; gauges are read from the
arena when Prometheus scrapes. Each app has its own registry (no global state).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.registry import Collector

from medina.referee.outcome import MatchOutcome
from medina.referee.record import (
    DecisionEntry,
    DecisionSource,
    Header,
    Incident,
    IncidentKind,
    RecordSink,
)

__all__ = ["CONTENT_TYPE_LATEST", "ArenaProbe", "LadderProbe", "Metrics"]

#: Distinct bot label values kept; later names are counted as "other" (a bot picks its own
#: name, and an unbounded label set would grow the server's memory).
MAX_BOT_LABELS = 200
#: Longest bot label kept.
BOT_LABEL_CHARS = 40
#: Seconds over which ``medina_decisions_per_second`` averages.
RATE_WINDOW_S = 10

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)


@dataclass
class ArenaProbe:
    """What the gauges read when scraped; each returns a number."""

    running: Callable[[], float] = lambda: 0.0
    waiting: Callable[[], float] = lambda: 0.0
    grpc_streams: Callable[[], float] = lambda: 0.0
    loop_lag_ms: Callable[[], float] = lambda: 0.0
    #: None while too few decisions were refereed lately to take a percentile.
    turnaround_ms: Callable[[], float | None] = lambda: None
    #: CreateMatch calls admission control refused since the server started.
    refused: Callable[[], float] = lambda: 0.0
    #: Matches in the start queue (their bots connected, waiting for room to be played).
    queued: Callable[[], float] = lambda: 0.0
    #: Matches that have waited in the start queue since the server started.
    queued_total: Callable[[], float] = lambda: 0.0
    #: 1 while no match record can be written (the disk is short of room), else 0.
    records_unwritable: Callable[[], float] = lambda: 0.0
    #: Matches whose record could not be written whole when they ended, since the start.
    records_failed: Callable[[], float] = lambda: 0.0


@dataclass
class LadderProbe:
    """What the ladder's metrics read when scraped (``ladder serve --http``): its own
    counts, beside those of the arena it drives."""

    #: Bots with a lobby stream open on this ladder server.
    bots: Callable[[], float]
    #: Matches this server formed that the arena has not ended yet.
    playing: Callable[[], float]
    #: Matches formed, rated, and ended unrated, since the start.
    formed: Callable[[], float]
    rated: Callable[[], float]
    aborted: Callable[[], float]
    #: The arena's refusals of the ladder's CreateMatch calls since the start, by reason.
    refused: Callable[[], Mapping[str, int]]
    #: 1 while the ladder's database cannot be written, else 0.
    database_unwritable: Callable[[], float]
    #: Match ends held in memory until the database can be written.
    held: Callable[[], float]


class _Ladder(Collector):
    """The ladder's metrics (``LadderProbe``), read when scraped."""

    def __init__(self, probe: LadderProbe) -> None:
        self.probe = probe

    def collect(self) -> Iterable[Metric]:
        p = self.probe
        for name, text, read in (
            ("bots_connected", "Bots with a lobby stream open on this ladder server", p.bots),
            ("matches_playing", "Matches this ladder formed that the arena plays", p.playing),
            (
                "database_unwritable",
                "1 while the ladder's database cannot be written (no match is formed, "
                "results are held in memory); 0 otherwise",
                p.database_unwritable,
            ),
            ("results_held", "Match ends held until the database can be written", p.held),
        ):
            gauge = GaugeMetricFamily(f"medina_ladder_{name}", text)
            gauge.add_metric([], read())
            yield gauge
        for name, text, read in (
            ("matches_formed", "Matches formed and sent to the arena since the start", p.formed),
            ("matches_rated", "Matches whose result was stored and rated since the start", p.rated),
            (
                "matches_aborted",
                "Matches formed that ended unrated (called off, or not complete in the "
                "arena) since the start",
                p.aborted,
            ),
        ):
            counter = CounterMetricFamily(f"medina_ladder_{name}", text)
            counter.add_metric([], read())
            yield counter
        refused = CounterMetricFamily(
            "medina_ladder_create_match_refused",
            "The arena's refusals of the ladder's CreateMatch calls since the start, by "
            "reason (SERVER_FULL, RECORD_UNWRITABLE, ...; the status code without one)",
            labels=["reason"],
        )
        for reason, n in sorted(p.refused().items()):
            refused.add_metric([reason], n)
        yield refused


@dataclass
class _Rate:
    """Decisions per whole second over the last ``RATE_WINDOW_S`` seconds."""

    counts: dict[int, int] = field(default_factory=dict)
    clock: Callable[[], float] = time.monotonic

    def add(self) -> None:
        now = int(self.clock())
        self.counts[now] = self.counts.get(now, 0) + 1
        for old in [s for s in self.counts if s <= now - RATE_WINDOW_S]:
            del self.counts[old]

    def per_second(self) -> float:
        now = int(self.clock())
        return sum(n for s, n in self.counts.items() if s > now - RATE_WINDOW_S) / RATE_WINDOW_S


class _Refusals(Collector):
    """The refused CreateMatch calls, a counter the organiser service keeps: read when
    scraped."""

    def __init__(self, probe: ArenaProbe) -> None:
        self.probe = probe

    def collect(self) -> Iterable[Metric]:
        counter = CounterMetricFamily(
            "medina_create_match_refused",
            "CreateMatch calls refused by admission control (SERVER_FULL) since the start",
        )
        counter.add_metric([], self.probe.refused())
        yield counter
        queued = CounterMetricFamily(
            "medina_start_queue_entered",
            "Matches that have waited in the start queue since the start",
        )
        queued.add_metric([], self.probe.queued_total())
        yield queued
        failed = CounterMetricFamily(
            "medina_record_write_failures",
            "Matches whose record could not be written whole (aborted unless only the last "
            "line failed; completed once there is room) since the start",
        )
        failed.add_metric([], self.probe.records_failed())
        yield failed


class Metrics:
    """The viewer's metrics registry and the record tap that feeds it."""

    def __init__(self, probe: ArenaProbe | None = None, ladder: LadderProbe | None = None) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.probe = probe or ArenaProbe()
        self._bots: set[str] = set()
        self._rate = _Rate()
        r = self.registry
        Gauge("medina_matches_running", "Matches being played", registry=r).set_function(
            lambda: self.probe.running()
        )
        Gauge("medina_matches_waiting", "Matches waiting for their bots", registry=r).set_function(
            lambda: self.probe.waiting()
        )
        Gauge(
            "medina_matches_queued",
            "Matches whose bots are connected, waiting in the start queue for room to be played",
            registry=r,
        ).set_function(lambda: self.probe.queued())
        self.finished = Counter(
            "medina_matches_finished",
            "Matches ended, by ending (complete, aborted, abandoned)",
            ["ending"],
            registry=r,
        )
        self.decisions = Counter(
            "medina_decisions",
            "Decisions applied, by source (bot, timeout, fallback)",
            ["source"],
            registry=r,
        )
        Gauge(
            "medina_decisions_per_second",
            f"Decisions per second over the last {RATE_WINDOW_S} s",
            registry=r,
        ).set_function(self._rate.per_second)
        self.latency = Histogram(
            "medina_decision_latency_seconds",
            "Server-measured think time of accepted bot replies",
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.timeouts = Counter(
            "medina_bot_timeouts",
            "Timeout strikes (time or retries ran out), by bot",
            ["bot"],
            registry=r,
        )
        self.illegal = Counter(
            "medina_bot_illegal_replies",
            "Refused replies (illegal or malformed), by bot",
            ["bot"],
            registry=r,
        )
        self.forfeits = Counter(
            "medina_bot_forfeits",
            "Seats forfeited, by bot and termination (crashed, timeout, disconnected, ...)",
            ["bot", "termination"],
            registry=r,
        )
        Gauge("medina_grpc_streams_open", "Open Play and Watch streams", registry=r).set_function(
            lambda: self.probe.grpc_streams()
        )
        self.event_streams = Gauge(
            "medina_http_event_streams_open",
            "Open Server-Sent Events streams of live pages",
            registry=r,
        )
        Gauge(
            "medina_event_loop_lag_seconds",
            "How late the event loop runs (decaying maximum)",
            registry=r,
        ).set_function(lambda: self.probe.loop_lag_ms() / 1000)
        Gauge(
            "medina_turnaround_p99_seconds",
            "From a bot's reply read to its match's next request written, 99th percentile "
            "of the last seconds (NaN: too few decisions to say)",
            registry=r,
        ).set_function(self._turnaround_s)
        Gauge(
            "medina_records_unwritable",
            "1 while match records cannot be written (a full disk, or less free than "
            "--records-reserve-mb): CreateMatch is refused; 0 otherwise",
            registry=r,
        ).set_function(lambda: self.probe.records_unwritable())
        r.register(_Refusals(self.probe))
        if ladder is not None:
            r.register(_Ladder(ladder))

    def _turnaround_s(self) -> float:
        ms = self.probe.turnaround_ms()
        return float("nan") if ms is None else ms / 1000

    def bot_label(self, name: str) -> str:
        """A bounded label value for a bot name."""
        label = (name or "unnamed")[:BOT_LABEL_CHARS]
        if label in self._bots:
            return label
        if len(self._bots) >= MAX_BOT_LABELS:
            return "other"
        self._bots.add(label)
        return label

    def tap(self, match_id: str) -> RecordSink:
        """A record sink for one match (``Arena.record_taps`` calls this)."""
        return _MatchTap(self)

    def exposition(self) -> bytes:
        """The text Prometheus scrapes."""
        return generate_latest(self.registry)


class _MatchTap:
    """Counts one match's record entries into the metrics."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics
        self.bots: dict[int, str] = {}

    def _bot(self, seat: int) -> str:
        return self.metrics.bot_label(self.bots.get(seat, f"seat {seat}"))

    def header(self, header: Header) -> None:
        self.bots = {s.seat: s.bot_name or s.name for s in header.seats}

    def decision(self, entry: DecisionEntry) -> None:
        m = self.metrics
        m.decisions.labels(entry.source.name.lower()).inc()
        m._rate.add()
        if entry.source is DecisionSource.BOT:
            m.latency.observe(entry.time_ms / 1000)
        if entry.rejections:
            m.illegal.labels(self._bot(entry.seat)).inc(len(entry.rejections))

    def incident(self, incident: Incident) -> None:
        m = self.metrics
        if incident.kind is IncidentKind.TIMEOUT:
            m.timeouts.labels(self._bot(incident.seat)).inc()
        elif incident.kind is IncidentKind.FORFEIT and incident.termination is not None:
            m.forfeits.labels(self._bot(incident.seat), incident.termination.name.lower()).inc()

    def outcome(self, outcome: MatchOutcome, ended_at: str) -> None:
        ending = "complete" if outcome.complete else "aborted"
        if outcome.abandoned:
            ending = "abandoned"
        self.metrics.finished.labels(ending).inc()
