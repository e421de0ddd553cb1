"""The ladder's state on one database: a facade over one part per aggregate.

The scheduler, the workers (embedded or ``cirulla ladder worker``), the LadderService, the
enrollments, the reaper and the command line all go through a ``LadderStore``; nothing
else writes the tables. Each part has its own module and is the only writer of its
tables, and returns typed rows (``store_rows``):

* ``store.bots`` (``store_bots``): bots, bot_versions; the matchmaker's candidates;
* ``store.matches`` (``store_matches``): ladder_matches, ladder_seats: the schedule,
  claims, leases, connect-in deliveries;
* ``store.results`` (``store_results``): ratings, rating_history: results, standings,
  histories, head to head;
* ``store.workers`` (``store_workers``): workers;
* ``store.enrollments`` (``store_enrollments``): enrollments;
* ``store.requests`` (``store_requests``): match_requests;
* ``store.views`` (``store_views``): no table: the public reads of matches (withheld
  twins stay withheld), which the other parts use too.

A change that spans aggregates is still one transaction: the part that starts it calls
the owning part's ``conn``-taking method (a result's failure counts, a new version's
ratings, a heartbeat's leases). The two rules that make the ladder durable are the
matches' claim (``store_matches``) and the results' exactly-once ``finish``
(``store_results``).

The ladder's own modules call the parts (``store.bots.add_bot``, ``store.matches.claim``),
so each call names the aggregate it touches. The facade also names each part's public
methods (``store.add_bot`` is ``store.bots.add_bot``): the tests and scripts written
against the one-class store keep working, and carry no SQL of their own.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from sqlalchemy import Engine

from cirulla.ladder.defaults import MAX_REQUEST_GAMES, QUEUES
from cirulla.ladder.store_authors import AuthorViews
from cirulla.ladder.store_bots import BotStore
from cirulla.ladder.store_enrollments import EnrollmentStore
from cirulla.ladder.store_matches import MatchStore
from cirulla.ladder.store_requests import RequestStore
from cirulla.ladder.store_results import ResultStore
from cirulla.ladder.store_rows import (
    CLAIM_SCAN,
    CONNECT_SPEC,
    DEFAULT_CONCURRENCY,
    ENROLLMENT_TIMEOUT,
    FAILURES_TO_DEACTIVATE,
    FAULTS,
    IN_FLIGHT,
    LOG_TAIL_CHARS,
    OWNER_REQUEST_GAMES,
    QUEUE_PLAYERS,
    REQUEST_PRIORITY,
    VALIDATION_GAMES,
    BotHistory,
    BotInfo,
    Candidate,
    ClaimedMatch,
    ClaimedSeat,
    DeliveredSeat,
    HeadToHead,
    LadderError,
    MatchConfig,
    MatchOutcome,
    MatchPlan,
    MatchTimes,
    MatchView,
    NotFound,
    RatingPoint,
    RatingView,
    Refused,
    RequestView,
    SeatOutcome,
    SeatPlan,
    SeatView,
    Standing,
    UnfinishedMatch,
    VersionView,
    hash_key,
    new_id,
    parse_queues,
)
from cirulla.ladder.store_views import MatchPage, MatchViews
from cirulla.ladder.store_workers import WorkerStore

__all__ = [
    "CLAIM_SCAN",
    "CONNECT_SPEC",
    "DEFAULT_CONCURRENCY",
    "ENROLLMENT_TIMEOUT",
    "FAILURES_TO_DEACTIVATE",
    "FAULTS",
    "IN_FLIGHT",
    "LOG_TAIL_CHARS",
    "MAX_REQUEST_GAMES",
    "OWNER_REQUEST_GAMES",
    "QUEUES",
    "QUEUE_PLAYERS",
    "REQUEST_PRIORITY",
    "VALIDATION_GAMES",
    "BotHistory",
    "BotInfo",
    "Candidate",
    "ClaimedMatch",
    "ClaimedSeat",
    "DeliveredSeat",
    "HeadToHead",
    "LadderError",
    "LadderStore",
    "MatchConfig",
    "MatchOutcome",
    "MatchPage",
    "MatchPlan",
    "MatchTimes",
    "MatchView",
    "NotFound",
    "RatingPoint",
    "RatingView",
    "Refused",
    "RequestView",
    "SeatOutcome",
    "SeatPlan",
    "SeatView",
    "Standing",
    "UnfinishedMatch",
    "VersionView",
    "hash_key",
    "new_id",
    "parse_queues",
]


class LadderStore:
    """Ladder state on one engine (SQLite or PostgreSQL): its parts, and their methods."""

    def __init__(self, engine: Engine, *, clock: Callable[[], float] = time.time) -> None:
        self.engine = engine
        self.clock = clock
        self.bots = BotStore(self)
        self.matches = MatchStore(self)
        self.results = ResultStore(self)
        self.workers = WorkerStore(self)
        self.enrollments = EnrollmentStore(self)
        self.requests = RequestStore(self)
        self.views = MatchViews(self)
        self.authors = AuthorViews(self)
        # bots and versions
        self.add_bot = self.bots.add_bot
        self.set_state = self.bots.set_state
        self.check_bot_key = self.bots.check_bot_key
        self.get_bot = self.bots.get_bot
        self.list_bots = self.bots.list_bots
        self.candidates = self.bots.candidates
        # matches: the schedule, claims, leases, reads
        self.in_flight = self.matches.in_flight
        self.waiting = self.matches.waiting
        self.schedule = self.matches.schedule
        self.claim = self.matches.claim
        self.mark_running = self.matches.mark_running
        self.requeue = self.matches.requeue
        self.cancel = self.matches.cancel
        self.unfinished_of = self.matches.unfinished_of
        self.seat_tokens = self.matches.seat_tokens
        self.match = self.views.match
        self.bot_matches = self.views.bot_matches
        self.every_match = self.views.every_match
        # results and ratings
        self.finish = self.results.finish
        self.settle_pair_of = self.results.settle_pair_of
        self.standings = self.results.standings
        self.rated_games = self.results.rated_games
        self.bot_history = self.results.bot_history
        self.head_to_head = self.results.head_to_head
        # workers
        self.register_worker = self.workers.register_worker
        self.live_slots = self.workers.live_slots
        self.heartbeat = self.workers.heartbeat
        self.workers_named = self.workers.workers_named
        self.stale_workers = self.workers.stale_workers
        self.remove_worker = self.workers.remove_worker
        # match requests
        self.request_matches = self.requests.request_matches
        self.match_request = self.requests.match_request
        self.match_requests = self.requests.match_requests

    def now(self) -> float:
        return float(self.clock())
