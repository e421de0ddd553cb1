"""Prometheus metrics of the match server, and the ``--metrics HOST:PORT`` endpoint.

Every metric of the project is named ``cirulla_...`` and defined here (the ladder's own
in ``cirulla.ladder.metrics``), in prometheus-client's default registry, so
one ``/metrics`` page serves the match server, the ladder around it and the process
(CPU, memory, open files). The session and hub call the small functions below at the
moment something happens; nothing here reads a match, so a scrape never waits for the
event loop. The values are counts and durations only: no name, id, hand or card.

The endpoint is prometheus-client's own HTTP server on a thread of its own, so a slow
scraper never delays a move.
"""

from __future__ import annotations

import bisect
import logging
import math
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from wsgiref.simple_server import WSGIServer

from prometheus_client import REGISTRY, Counter, Gauge, start_http_server
from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily, Metric

log = logging.getLogger("cirulla.server")

MATCHES_RUNNING = Gauge(
    "cirulla_matches_running", "Matches in progress on this match server (every seat joined)."
)
MATCHES_FINISHED = Counter(
    "cirulla_matches_finished", "Matches that ended with a result on this match server."
)
MATCHES_ABORTED = Counter(
    "cirulla_matches_aborted", "Matches aborted (AbortMatch, never joined, out of decks)."
)
GAMES_FINISHED = Counter(
    "cirulla_games_finished",
    "Games finished (a best-of-N match has several), by reason.",
    ["reason"],
)
#: Bounds of the decision latency histogram's buckets, in seconds.
DECISION_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)


class _Decisions:
    """The two per-decision metrics as plain numbers the event loop adds to, read only
    when ``/metrics`` is scraped: a prometheus-client Counter and Histogram take a lock
    per update, which every decision of every match paid (the server's cost per decision
    is a budget of microseconds; a scrape comes every few seconds).

    ``cirulla_decisions``: actions played (answered, played on timeout, or forced);
    ``cirulla_decision_seconds``: from the decision opened (its request sent) to the
    accepted answer, the seat's thinking time plus the network (answered decisions only),
    as the record's elapsed_ms but finer than whole ms.
    """

    def __init__(self) -> None:
        self.total = 0
        self.counts = [0] * (len(DECISION_BUCKETS) + 1)  # the last: above every bound
        self.sum = 0.0
        self.created = time.time()

    def observe(self, seconds: float) -> None:
        self.counts[bisect.bisect_left(DECISION_BUCKETS, seconds)] += 1
        self.sum += seconds

    def collect(self) -> Iterator[Metric]:
        # a copy first: the event loop goes on adding while this thread reads
        counts, total, seconds = list(self.counts), self.total, self.sum
        played = CounterMetricFamily(
            "cirulla_decisions",
            "Actions played (answered, played on timeout, or forced); rate() gives "
            "decisions per second.",
            created=self.created,
        )
        played.add_metric([], total, created=self.created)
        yield played
        buckets, running = [], 0
        for bound, count in zip((*map(float, DECISION_BUCKETS), math.inf), counts, strict=True):
            running += count
            buckets.append(("+Inf" if bound == math.inf else repr(bound), running))
        latency = HistogramMetricFamily(
            "cirulla_decision_seconds",
            "Time from a decision request to its accepted answer (answered decisions only).",
        )
        latency.add_metric([], buckets, seconds)
        yield latency


DECISIONS = _Decisions()
REGISTRY.register(DECISIONS)
TIMEOUTS = Counter("cirulla_timeouts", "Decisions whose clock ran out.")
FORFEITS = Counter("cirulla_forfeits", "Games forfeited by a seat (timeout policy forfeit_game).")
ILLEGAL_ACTIONS = Counter(
    "cirulla_illegal_actions",
    "Submitted actions rejected as ILLEGAL or INDEX_OUT_OF_RANGE (the seats' illegal_actions).",
)
RECORDS_WRITTEN = Counter(
    "cirulla_records_written", "Game records written to the match server's database."
)


def match_started() -> None:
    MATCHES_RUNNING.inc()


def match_finished() -> None:
    MATCHES_RUNNING.dec()
    MATCHES_FINISHED.inc()


def match_aborted(was_running: bool) -> None:
    if was_running:
        MATCHES_RUNNING.dec()
    MATCHES_ABORTED.inc()


def decision(opened_at: float, *, answered: bool) -> None:
    """A decision opened at ``opened_at`` (``time.perf_counter``) was played now."""
    DECISIONS.total += 1
    if answered:
        DECISIONS.observe(time.perf_counter() - opened_at)


@dataclass
class MetricsServer:
    """The running ``/metrics`` endpoint (``port``: the bound one, for port 0)."""

    server: WSGIServer
    thread: threading.Thread
    port: int

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


def parse_address(address: str, flag: str = "--metrics") -> tuple[str, int]:
    """HOST:PORT (``[::1]:9100`` for IPv6) or a ValueError naming ``flag``."""
    host, sep, port = address.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isascii() or not port.isdigit() or int(port) > 65535:
        raise ValueError(f"{flag} {address!r}: expected HOST:PORT with a port of 0 to 65535")
    return host, int(port)


def start_metrics(address: str) -> MetricsServer:
    """Serve the default registry at ``http://address/metrics`` (port 0 picks one);
    OSError (one line naming ``--metrics``) when the address cannot be bound."""
    host, port = parse_address(address)
    try:
        server, thread = start_http_server(port, addr=host)
    except (OSError, socket.gaierror) as exc:
        raise OSError(f"--metrics: cannot listen on {address}: {exc.strerror or exc}") from None
    bound = int(server.server_port)
    log.info("metrics_started listen=%s port=%d", address, bound)
    return MetricsServer(server, thread, bound)
