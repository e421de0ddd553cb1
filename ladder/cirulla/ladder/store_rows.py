"""What the ladder store's parts share: constants, refusals, plans and the typed rows
they return.

The store (``store.py``) is split by aggregate, each part the only writer of its tables:
``store_bots`` (bots, bot_versions), ``store_matches`` (ladder_matches, ladder_seats: the
schedule, claims and leases), ``store_results`` (ratings, rating_history), ``store_workers``
(workers), ``store_enrollments`` (enrollments) and ``store_requests`` (match_requests).
What a part returns is a dataclass or a ``TypedDict`` defined here, so a reader sees
every field a row has without reading the query.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import TypedDict

from cirulla.ladder import rating
from cirulla.ladder.defaults import QUEUES
from cirulla.rules.options import OptionValue

QUEUE_PLAYERS = {"2p": 2, "3p": 3, "4p": 4}
CONNECT_SPEC = "connect"
#: Matches a bot may play at once unless registered otherwise.
DEFAULT_CONCURRENCY = 4
#: Unrated games a new version plays before its games count (docs/ladder.md).
VALIDATION_GAMES = 2
#: Failures (crash, timeout, never joined, illegal moves) in a row that deactivate a bot.
FAILURES_TO_DEACTIVATE = 3
#: Characters of a failed bot's output kept as ``last_log``.
LOG_TAIL_CHARS = 4000
#: An enrollment without a heartbeat for this long no longer counts as connected.
ENROLLMENT_TIMEOUT = 30.0
IN_FLIGHT = ("scheduled", "claimed", "running")
#: Scheduled matches a claim looks at (oldest first) for one it may start.
CLAIM_SCAN = 50
#: Games a bot's owner may have requested and not yet played, all requests together.
OWNER_REQUEST_GAMES = 10
#: Claim priority of requested games (scheduled matches have 0).
REQUEST_PRIORITY = 1
#: Seat outcomes that count as a failure of the bot.
FAULTS = ("crash", "timeout", "illegal", "disconnect", "no-join", "forfeit")


class LadderError(ValueError):
    """A request the ladder refuses; the message names the field or rule."""


class NotFound(LadderError):
    """An unknown bot or match."""


class Refused(LadderError):
    """A request this caller may not make (e.g. an anonymous one touching an existing bot)."""


def new_id(prefix: str) -> str:
    return f"{prefix}-{secrets.token_hex(6)}"


def new_key() -> str:
    """A bot key (an author's, and a connect-in bot's Enroll key): 192 random bits, shown
    once; only ``hash_key`` of it is stored."""
    return secrets.token_urlsafe(24)


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def parse_queues(queues: Iterable[str]) -> tuple[str, ...]:
    out: list[str] = []
    for queue in queues:
        for q in str(queue).split(","):
            q = q.strip()
            if not q:
                continue
            if q not in QUEUES:
                raise LadderError(f"queue {q!r}: queues are {', '.join(QUEUES)}")
            if q not in out:
                out.append(q)
    return tuple(sorted(out)) or ("2p",)


# ---------------------------------------------------------------------------- data


@dataclass(frozen=True, slots=True)
class MatchConfig:
    """How a ladder match is played (stored as JSON with the match)."""

    preset: str = "standard"
    rules: dict[str, OptionValue] = field(default_factory=dict)
    move_limit_ms: int = 10_000
    disconnect_grace_ms: int = 1_000
    game_timeout: float = 600.0

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> MatchConfig:
        data = json.loads(text)
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        return cls(**known)


@dataclass(frozen=True, slots=True)
class SeatPlan:
    seat: int
    side: int
    version_id: int


@dataclass(frozen=True, slots=True)
class MatchPlan:
    """A match the scheduler wants played."""

    queue: str
    seats: tuple[SeatPlan, ...]
    seed: int
    config: MatchConfig
    pair_id: str | None = None
    pair_index: int = 0
    #: the match request it plays (``request_matches``), claimed before scheduled play
    request_id: str | None = None
    #: requested unrated: never changes a rating
    unrated: bool = False


@dataclass(frozen=True, slots=True)
class Candidate:
    """A bot version the matchmaker may seat in a queue right now."""

    bot_id: int
    bot_name: str
    version_id: int
    version: int
    spec: str
    mu: float
    sigma: float
    games: int
    last_played_at: float | None
    validation_games_left: int
    free_slots: int

    @property
    def score(self) -> float:
        return rating.score(self.mu, self.sigma)


@dataclass(frozen=True, slots=True)
class ClaimedSeat:
    seat: int
    side: int
    version_id: int
    bot_name: str
    version: int
    spec: str
    #: the version's own limits (``parse_limits`` form); empty: the defaults
    limits: str = ""

    @property
    def connect_in(self) -> bool:
        return self.spec == CONNECT_SPEC


@dataclass(frozen=True, slots=True)
class ClaimedMatch:
    """A match a worker has claimed and now plays."""

    id: str
    queue: str
    seed: int
    pair_id: str | None
    config: MatchConfig
    seats: tuple[ClaimedSeat, ...]

    @property
    def players(self) -> int:
        return QUEUE_PLAYERS[self.queue]

    @property
    def deal_group(self) -> str:
        """The match server's deal_group: the pair's id (twins share deck orders)."""
        return self.pair_id or ""


@dataclass(frozen=True, slots=True)
class SeatOutcome:
    seat: int
    outcome: str = "ok"
    fault: str = ""
    log_tail: str = ""


@dataclass(frozen=True, slots=True)
class MatchOutcome:
    """What a worker reports for a match it played.

    ``void``: nobody is to blame and nothing was decided (e.g. the wall-clock limit with
    every seat playing); the match is recorded unrated.
    """

    winner: int | None
    totals: tuple[int, ...]
    seats: tuple[SeatOutcome, ...]
    deals: int = 0
    forfeit_sides: tuple[int, ...] = ()
    void: bool = False
    notes: tuple[str, ...] = ()
    #: why the game ended (``cirulla.ladder.endings.END_REASONS``); empty: derived on read
    end: str = ""
    #: for a forfeit, how the seat forfeited (``endings.FORFEIT_KINDS``)
    forfeit_kind: str = ""
    #: per seat, its bot's log relative to the worker's data folder (its author reads it)
    logs: tuple[str, ...] = ()

    def result_json(self) -> str:
        return json.dumps(
            {
                "winner": self.winner,
                "totals": list(self.totals),
                "deals": self.deals,
                "forfeit_sides": list(self.forfeit_sides),
                "void": self.void,
                "end": self.end,
                "forfeit_kind": self.forfeit_kind,
                "logs": list(self.logs),
            },
            sort_keys=True,
        )


# ---------------------------------------------------------------------------- typed rows


class BotInfo(TypedDict):
    """A bot with its current version, as the rpcs and the CLI show it."""

    id: int
    name: str
    state: str
    state_reason: str
    max_concurrency: int
    created_at: float
    connect_in: bool
    #: a connect-in bot without a live enrollment: not scheduled until it enrolls
    offline: bool
    version_id: int | None
    version: int
    spec: str
    #: its own limits in the sandbox (``parse_limits`` form); empty: the defaults
    limits: str
    queues: list[str]
    validation_games_left: int
    consecutive_failures: int
    last_failure: str
    last_log: str


class SeatView(TypedDict):
    """A seat of a match as anyone may read it (empty while its pair is withheld)."""

    seat: int
    side: int
    bot: str
    version: int
    version_id: int
    outcome: str
    points: int | None
    fault: str
    mu_after: float | None
    sigma_after: float | None


class MatchView(TypedDict):
    """A match as anyone may read it: no token, no seed."""

    id: str
    server_match_id: str
    server_address: str
    queue: str
    pair_id: str
    status: str
    rated: bool
    cancel_reason: str
    withheld: bool
    created_at: float
    started_at: float | None
    finished_at: float | None
    winner: int | None
    notes: list[str]
    request_id: str
    seats: list[SeatView]
    #: why the game ended (``endings.END_REASONS``); empty until finished, and withheld
    end: str
    #: for a forfeit, how the seat forfeited (``endings.FORFEIT_KINDS``); else empty
    forfeit_kind: str


class UnfinishedMatch(TypedDict):
    """A claimed or running match of a worker (for recovery and shutdown)."""

    id: str
    status: str
    queue: str
    worker_id: str | None
    server_match_id: str | None


class MatchTimes(TypedDict):
    """When a match went through its states (``cirulla bench ladder``)."""

    status: str
    rated: bool
    created_at: float
    claimed_at: float | None
    started_at: float | None
    finished_at: float | None


class RequestView(TypedDict):
    """A match request with its games (``match_requests``)."""

    id: str
    queue: str
    bots: list[str]
    games: int
    unrated: bool
    requested_by: str
    created_at: float
    matches: list[MatchView]
    finished: int
    cancelled: int


class Standing(TypedDict):
    """A bot's place in a queue."""

    bot: BotInfo
    queue: str
    mu: float
    sigma: float
    score: float
    games: int
    wins: int
    draws: int
    provisional: bool
    last_played_at: float | None
    rank: int


class RatingView(TypedDict):
    """A version's rating in one queue, sigma grown by inactivity."""

    queue: str
    mu: float
    sigma: float
    games: int
    wins: int
    draws: int
    last_played_at: float | None
    provisional: bool


class RatingPoint(TypedDict):
    """A rating after one rated game."""

    queue: str
    version: int
    match_id: str
    mu: float
    sigma: float
    at: float


class VersionView(TypedDict):
    version: int
    spec: str
    #: its own limits (``parse_limits`` form); empty: the defaults
    limits: str
    queues: list[str]
    created_at: float


class BotHistory(TypedDict):
    """A bot's versions, ratings, rating history and matches."""

    bot: BotInfo
    versions: list[VersionView]
    ratings: list[RatingView]
    rating_history: list[RatingPoint]
    matches: list[MatchView]


class HeadToHead(TypedDict):
    """Finished, not withheld games of two bots on opposite sides."""

    bot_a: str
    bot_b: str
    games: int
    a_wins: int
    b_wins: int
    draws: int
    a_points: int
    b_points: int
    matches: list[MatchView]


@dataclass(frozen=True, slots=True)
class DeliveredSeat:
    """A connect-in bot's seat of a running match, marked delivered (``Enroll``)."""

    match_id: str
    server_match_id: str
    server_address: str
    seat: int
    token: str
    queue: str
    delivered_at: float
