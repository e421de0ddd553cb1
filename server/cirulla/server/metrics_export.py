"""The match server's counts (``cirulla.server.metrics.COUNTS``) as Prometheus metrics,
and the HTTP endpoint that serves them: imported when ``--metrics`` starts it, so a
process that serves no metrics never imports prometheus-client.

Each metric keeps the name, type and help it had as a prometheus-client Counter, Gauge
or Histogram (``cirulla_matches_finished_total`` and its ``_created``, ...): the
collector builds them from the plain numbers at each scrape.
"""

from __future__ import annotations

import math
import socket
import threading
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING
from wsgiref.simple_server import WSGIServer

from prometheus_client import REGISTRY, start_http_server
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

if TYPE_CHECKING:  # the counts are handed in: cirulla.server.metrics imports this module
    from cirulla.server.metrics import Counts

#: (name, help, the count's attribute of ``Counts``) of the unlabelled counters
COUNTERS = (
    (
        "cirulla_matches_finished",
        "Matches that ended with a result on this match server.",
        "matches_finished",
    ),
    (
        "cirulla_matches_aborted",
        "Matches aborted (AbortMatch, never joined, out of decks).",
        "matches_aborted",
    ),
    ("cirulla_timeouts", "Decisions whose clock ran out.", "timeouts"),
    (
        "cirulla_forfeits",
        "Games forfeited by a seat (timeout policy forfeit_game).",
        "forfeits",
    ),
    (
        "cirulla_illegal_actions",
        "Submitted actions rejected as ILLEGAL or INDEX_OUT_OF_RANGE (the seats' illegal_actions).",
        "illegal_actions",
    ),
    (
        "cirulla_records_written",
        "Game records written to the match server's database.",
        "records_written",
    ),
)


class ServerCollector(Collector):
    """Reads ``counts`` (``cirulla.server.metrics.COUNTS``) when scraped (on the endpoint's
    thread: copies first, the event loop goes on adding meanwhile)."""

    def __init__(self, counts: Counts, buckets: Sequence[float]) -> None:
        self.counts = counts
        self.buckets = buckets

    def collect(self) -> Iterator[Metric]:
        counts = self.counts
        created = counts.created
        yield GaugeMetricFamily(
            "cirulla_matches_running",
            "Matches in progress on this match server (every seat joined).",
            value=counts.matches_running,
        )
        for name, text, attribute in COUNTERS:
            family = CounterMetricFamily(name, text, created=created)
            family.add_metric([], getattr(counts, attribute), created=created)
            yield family
        games = CounterMetricFamily(
            "cirulla_games_finished",
            "Games finished (a best-of-N match has several), by reason.",
            labels=["reason"],
        )
        for reason, (count, first) in sorted(dict(counts.games_finished).items()):
            games.add_metric([reason], count, created=first)
        yield games
        yield from _decisions(counts, self.buckets)


def _decisions(counts: Counts, bounds: Sequence[float]) -> Iterator[Metric]:
    """``cirulla_decisions``: actions played (answered, played on timeout, or forced);
    ``cirulla_decision_seconds``: the latency of answered decisions."""
    buckets_now = list(counts.decision_counts)
    total, seconds = counts.decisions, counts.decision_seconds
    played = CounterMetricFamily(
        "cirulla_decisions",
        "Actions played (answered, played on timeout, or forced); rate() gives "
        "decisions per second.",
        created=counts.created,
    )
    played.add_metric([], total, created=counts.created)
    yield played
    buckets, running = [], 0
    for bound, count in zip((*map(float, bounds), math.inf), buckets_now, strict=True):
        running += count
        buckets.append(("+Inf" if bound == math.inf else repr(bound), running))
    latency = HistogramMetricFamily(
        "cirulla_decision_seconds",
        "Time from a decision request to its accepted answer (answered decisions only).",
    )
    latency.add_metric([], buckets, seconds)
    yield latency


_registered = threading.Lock()
_collector: list[ServerCollector] = []


def register(counts: Counts, buckets: Sequence[float]) -> None:
    """The server's collector in the default registry, once per process."""
    with _registered:
        if not _collector:
            _collector.append(ServerCollector(counts, buckets))
            REGISTRY.register(_collector[0])


def serve(
    host: str, port: int, address: str, counts: Counts, buckets: Sequence[float]
) -> tuple[WSGIServer, threading.Thread]:
    """The default registry, with ``counts``, served at ``http://host:port/metrics`` on a
    thread; OSError (one line naming ``--metrics`` and ``address``) when it cannot be
    bound."""
    register(counts, buckets)
    try:
        return start_http_server(port, addr=host)
    except (OSError, socket.gaierror) as exc:
        raise OSError(f"--metrics: cannot listen on {address}: {exc.strerror or exc}") from None
