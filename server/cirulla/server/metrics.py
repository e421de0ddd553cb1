"""Metrics of the match server, and the ``--metrics HOST:PORT`` endpoint.

Every metric of the project is named ``cirulla_...`` and defined here (the ladder's own
in ``cirulla.ladder.metrics``); once ``--metrics`` serves them, they are in
prometheus-client's default registry, so one ``/metrics`` page serves the match server,
the ladder around it and the process (CPU, memory, open files). The session and hub call
the small functions below at the moment something happens; nothing here reads a match, so
a scrape never waits for the event loop. The values are counts and durations only: no
name, id, hand or card.

The counts are plain numbers here (``COUNTS``), read only when ``/metrics`` is scraped
(``cirulla.server.metrics_export``): a prometheus-client Counter takes a lock per update,
and importing prometheus-client and its HTTP server cost every process that hosts a match
server (each ``cirulla server``, tournament runner, ladder and worker) about 0.05 CPU
seconds at start whether or not it served metrics (docs/performance-log.md, "Start-up"); it
is imported when the endpoint starts.

The endpoint is prometheus-client's own HTTP server on a thread of its own, so a slow
scraper never delays a move.
"""

from __future__ import annotations

import bisect
import logging
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from wsgiref.simple_server import WSGIServer

log = logging.getLogger("cirulla.server")

#: Bounds of the decision latency histogram's buckets, in seconds.
DECISION_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)


@dataclass(slots=True)
class Counts:
    """What the match server counts, as plain numbers the event loop (and the hub's record
    writer, ``records_written``) add to; ``cirulla.server.metrics_export`` names and
    describes each one when ``/metrics`` is scraped.

    ``decisions``: actions played (answered, played on timeout, or forced);
    ``decision_counts`` and ``decision_seconds``: the latency histogram, from the decision
    opened (its request sent) to the accepted answer, the seat's thinking time plus the
    network (answered decisions only), as the record's elapsed_ms but finer than whole ms.
    """

    matches_running: int = 0
    matches_finished: int = 0
    matches_aborted: int = 0
    #: games finished by reason: (count, when the reason was first counted)
    games_finished: dict[str, tuple[int, float]] = field(default_factory=dict)
    timeouts: int = 0
    forfeits: int = 0
    illegal_actions: int = 0
    records_written: int = 0
    decisions: int = 0
    decision_counts: list[int] = field(
        default_factory=lambda: [0] * (len(DECISION_BUCKETS) + 1)  # the last: above every bound
    )
    decision_seconds: float = 0.0
    created: float = field(default_factory=time.time)


COUNTS = Counts()


def match_started() -> None:
    COUNTS.matches_running += 1


def match_finished() -> None:
    COUNTS.matches_running -= 1
    COUNTS.matches_finished += 1


def match_aborted(was_running: bool) -> None:
    if was_running:
        COUNTS.matches_running -= 1
    COUNTS.matches_aborted += 1


def game_finished(reason: str) -> None:
    count, created = COUNTS.games_finished.get(reason, (0, time.time()))
    COUNTS.games_finished[reason] = (count + 1, created)


def timed_out() -> None:
    COUNTS.timeouts += 1


def forfeited() -> None:
    COUNTS.forfeits += 1


def illegal_action() -> None:
    COUNTS.illegal_actions += 1


def record_written() -> None:
    COUNTS.records_written += 1


def decision(opened_at: float, *, answered: bool) -> None:
    """A decision opened at ``opened_at`` (``time.perf_counter``) was played now."""
    COUNTS.decisions += 1
    if answered:
        seconds = time.perf_counter() - opened_at
        COUNTS.decision_counts[bisect.bisect_left(DECISION_BUCKETS, seconds)] += 1
        COUNTS.decision_seconds += seconds


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
    # prometheus-client (the server extra's) only for the endpoint: see the docstring above
    from cirulla.server.metrics_export import serve

    server, thread = serve(host, port, address, COUNTS, DECISION_BUCKETS)
    bound = int(server.server_port)
    log.info("metrics_started listen=%s port=%d", address, bound)
    return MetricsServer(server, thread, bound)
