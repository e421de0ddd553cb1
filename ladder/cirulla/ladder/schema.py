"""The ladder's tables (SQLAlchemy 2 Core): the one place that names columns.

The tables are defined on the clients' database's one ``MetaData``
(``cirulla.ladder.database``), beside the worker pool's (``pool_jobs``,
``pool_tournaments``, defined in ``cirulla.ladder.pool_store``). Times are float
seconds since the epoch (``time.time()``) on every database, so lease and inactivity
arithmetic is the same on SQLite and PostgreSQL. Changing a table means a new Alembic
migration in ``cirulla/clients/matches/migrations/versions`` as well as the change here.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
    UniqueConstraint,
    false,
)

from cirulla.ladder.database import metadata as metadata

# The states' names live where ``cirulla --help`` can read them without the database layer.
from cirulla.ladder.defaults import BOT_STATES as BOT_STATES
from cirulla.ladder.defaults import MATCH_STATES as MATCH_STATES

# The pool's tables are defined in the shared layer (the tournament runner queues games in
# them without importing the ladder); they are named here too, for the ladder's readers.
from cirulla.ladder.pool_store import JOB_STATES as JOB_STATES
from cirulla.ladder.pool_store import pool_jobs as pool_jobs
from cirulla.ladder.pool_store import pool_tournaments as pool_tournaments

bots = Table(
    "bots",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("name", String(64), nullable=False, unique=True),
    Column("created_at", Float, nullable=False),
    Column("state", String(16), nullable=False, server_default="active"),
    Column("state_reason", Text, nullable=False, server_default=""),
    # sha256 hex of the connect-in bot key; NULL for managed bots.
    Column("bot_key_hash", String(64), nullable=True),
    Column("max_concurrency", Integer, nullable=False, server_default="2"),
    # sha256 hex of the bot's author key (migration 0007): its author reads its logs,
    # records and state changes with it; NULL for a bot registered before, until rotated
    Column("author_key_hash", String(64), nullable=True),
)

# A bot's state changes, oldest first (migration 0007): registered, new-version, paused,
# active (resumed), deactivated, removed. Its author reads them; the webhook follows them.
bot_events = Table(
    "bot_events",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("bot_id", Integer, ForeignKey("bots.id"), nullable=False),
    Column("version", Integer, nullable=False, server_default="0"),
    Column("at", Float, nullable=False),
    Column("state", String(16), nullable=False),
    Column("reason", Text, nullable=False, server_default=""),
)
Index("ix_bot_events_bot", bot_events.c.bot_id, bot_events.c.id)

bot_versions = Table(
    "bot_versions",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("bot_id", Integer, ForeignKey("bots.id"), nullable=False),
    Column("version", Integer, nullable=False),
    # the tournament --bot SPEC, or "connect" for a connect-in bot
    Column("spec", Text, nullable=False),
    #: its own limits in the sandbox (``parse_limits`` form); empty: the defaults
    Column("limits", Text, nullable=False, server_default=""),
    # comma-separated queues, e.g. "2p,3p"
    Column("queues", String(32), nullable=False),
    Column("created_at", Float, nullable=False),
    Column("validation_games_left", Integer, nullable=False, server_default="0"),
    Column("consecutive_failures", Integer, nullable=False, server_default="0"),
    Column("last_failure", Text, nullable=False, server_default=""),
    Column("last_log", Text, nullable=False, server_default=""),
    # the ladder match last_log comes from (withheld while its duplicate pair plays)
    Column("last_log_match_id", String(64), nullable=True),
    UniqueConstraint("bot_id", "version", name="uq_bot_versions_bot_version"),
)

ratings = Table(
    "ratings",
    metadata,
    Column("version_id", Integer, ForeignKey("bot_versions.id"), nullable=False),
    Column("queue", String(4), nullable=False),
    Column("mu", Float, nullable=False),
    Column("sigma", Float, nullable=False),
    Column("games", Integer, nullable=False, server_default="0"),
    Column("wins", Integer, nullable=False, server_default="0"),
    Column("draws", Integer, nullable=False, server_default="0"),
    Column("last_played_at", Float, nullable=True),
    PrimaryKeyConstraint("version_id", "queue", name="pk_ratings"),
)

rating_history = Table(
    "rating_history",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("version_id", Integer, ForeignKey("bot_versions.id"), nullable=False),
    Column("queue", String(4), nullable=False),
    Column("match_id", String(64), nullable=False),
    Column("mu", Float, nullable=False),
    Column("sigma", Float, nullable=False),
    Column("at", Float, nullable=False),
    # a second rating of the same match for the same version is impossible
    UniqueConstraint("match_id", "version_id", name="uq_rating_history_match_version"),
)
Index("ix_rating_history_version", rating_history.c.version_id)

ladder_matches = Table(
    "ladder_matches",
    metadata,
    # the ladder's id, stable from scheduling on ("lm-..."); the match server's id is
    # server_match_id once the match is created there
    Column("id", String(64), primary_key=True),
    Column("queue", String(4), nullable=False),
    # both games of a duplicate pair share pair_id, seed and deal_group
    Column("pair_id", String(64), nullable=True),
    Column("pair_index", Integer, nullable=False, server_default="0"),
    # the deck seed: 63 random bits (migration 0004)
    Column("seed", BigInteger, nullable=False),
    # JSON: preset, rules, move_limit_ms, game_timeout, ... (MatchConfig)
    Column("settings", Text, nullable=False),
    Column("status", String(16), nullable=False, server_default="scheduled"),
    Column("worker_id", String(64), nullable=True),
    Column("lease_expires_at", Float, nullable=True),
    Column("created_at", Float, nullable=False),
    Column("claimed_at", Float, nullable=True),
    Column("started_at", Float, nullable=True),
    Column("finished_at", Float, nullable=True),
    Column("cancel_reason", Text, nullable=False, server_default=""),
    # JSON: winner side, totals, deals, forfeit sides (MatchOutcome.to_json)
    Column("result", Text, nullable=True),
    Column("rated", Boolean, nullable=False, server_default="0"),
    Column("server_address", String(255), nullable=False, server_default=""),
    Column("server_match_id", String(64), nullable=True),
    # JSON list of notes in words
    Column("notes", Text, nullable=False, server_default="[]"),
    # times it was claimed (a re-queued match is claimed again)
    Column("attempts", Integer, nullable=False, server_default="0"),
    # the match request it plays (migration 0005); NULL for a scheduled match
    Column("request_id", String(64), nullable=True),
    # claimed before every match of a lower priority: 1 for requested games, 0 scheduled
    Column("priority", Integer, nullable=False, server_default="0"),
    # requested unrated: never changes a rating, whatever its result
    Column("unrated", Boolean, nullable=False, server_default=false()),
)
Index("ix_ladder_matches_status", ladder_matches.c.status, ladder_matches.c.created_at)
Index("ix_ladder_matches_request", ladder_matches.c.request_id)
Index("ix_ladder_matches_pair", ladder_matches.c.pair_id)
Index("ix_ladder_matches_server_match", ladder_matches.c.server_match_id)

ladder_seats = Table(
    "ladder_seats",
    metadata,
    Column("match_id", String(64), ForeignKey("ladder_matches.id"), nullable=False),
    Column("seat", Integer, nullable=False),
    Column("side", Integer, nullable=False),
    Column("version_id", Integer, ForeignKey("bot_versions.id"), nullable=False),
    # SECRET: the match server's seat token, never shown by any read
    Column("token", Text, nullable=True),
    # when a connect-in bot's assignment was delivered on its Enroll stream
    Column("delivered_at", Float, nullable=True),
    # ok | crash | timeout | illegal | disconnect | no-join ('' until over)
    Column("outcome", String(16), nullable=False, server_default=""),
    Column("points", Integer, nullable=True),
    Column("fault", Text, nullable=False, server_default=""),
    PrimaryKeyConstraint("match_id", "seat", name="pk_ladder_seats"),
)
Index("ix_ladder_seats_version", ladder_seats.c.version_id)

# A match or series requested by an operator or a bot's owner (RequestMatch).
match_requests = Table(
    "match_requests",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("queue", String(4), nullable=False),
    # JSON list of the bot names, in the order requested
    Column("bots", Text, nullable=False),
    Column("games", Integer, nullable=False),
    Column("unrated", Boolean, nullable=False, server_default=false()),
    # "admin" or "owner of NAME"
    Column("requested_by", Text, nullable=False, server_default=""),
    Column("created_at", Float, nullable=False),
)
Index("ix_match_requests_created", match_requests.c.created_at)

workers = Table(
    "workers",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("name", String(255), nullable=False),
    Column("server_address", String(255), nullable=False),
    Column("heartbeat_at", Float, nullable=False),
    Column("started_at", Float, nullable=False),
    # matches it plays at once (its --concurrency); NULL for rows from before 0003
    Column("slots", Integer, nullable=True),
)

enrollments = Table(
    "enrollments",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("bot_id", Integer, ForeignKey("bots.id"), nullable=False),
    Column("served_by", String(64), nullable=False),
    Column("capacity", Integer, nullable=False),
    Column("connected_at", Float, nullable=False),
    Column("heartbeat_at", Float, nullable=False),
)
