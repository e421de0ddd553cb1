"""The store's rows as LadderService messages (proto/cirulla/v1/ladder.proto), the
protocol's enums both ways, and the type of an rpc's context: what the servicer
(``service``), the author rpcs (``authors``), the connect-in stream (``enroll``) and the
command's clients (``cli_*``) share. No database and no servicer here, so a client
command imports it at its start."""

from __future__ import annotations

import grpc
from google.protobuf.message import Message
from google.protobuf.timestamp_pb2 import Timestamp

from cirulla import ladder_words
from cirulla.ladder import endings, rating
from cirulla.ladder.defaults import MAX_PAGE
from cirulla.ladder.limits import effective_pb
from cirulla.ladder.store_rows import (
    BotInfo,
    LadderError,
    MatchView,
    RatingView,
    RequestView,
    Standing,
)
from cirulla.v1 import ladder_pb2

#: The context of every ladder rpc: requests and responses are protobuf messages (each
#: handler names its own; the context's read and write are never called).
Context = grpc.aio.ServicerContext[Message, Message]

QUEUE_TO_PB = ladder_words.QUEUES
PB_TO_QUEUE = ladder_words.QUEUE_NAMES
STATE_TO_PB = ladder_words.BOT_STATES
STATUS_TO_PB = ladder_words.MATCH_STATUSES
PB_TO_STATUS = ladder_words.MATCH_STATUS_NAMES
END_TO_PB = {
    endings.TARGET: ladder_pb2.LADDER_END_REASON_TARGET,
    endings.CAPPOTTO: ladder_pb2.LADDER_END_REASON_CAPPOTTO,
    endings.FORFEIT: ladder_pb2.LADDER_END_REASON_FORFEIT,
    endings.TIME_LIMIT: ladder_pb2.LADDER_END_REASON_TIME_LIMIT,
    endings.VOID: ladder_pb2.LADDER_END_REASON_VOID,
}
PB_TO_END = {v: k for k, v in END_TO_PB.items()}
DEFAULT_PAGE = 50


def timestamp(seconds: float | None) -> Timestamp | None:
    if seconds is None:
        return None
    ts = Timestamp()
    ts.FromNanoseconds(int(seconds * 1e9))
    return ts


def queue_name(value: int, default: str | None = "2p") -> str | None:
    if value == ladder_pb2.LADDER_QUEUE_UNSPECIFIED:
        return default
    if value not in PB_TO_QUEUE:
        raise LadderError(f"queue: unknown LadderQueue value {value}")
    return PB_TO_QUEUE[value]


def status_name(value: int) -> str | None:
    """A LadderMatchStatus filter: None for unspecified (every status)."""
    if value == ladder_pb2.LADDER_MATCH_STATUS_UNSPECIFIED:
        return None
    if value not in PB_TO_STATUS:
        raise LadderError(f"status: unknown LadderMatchStatus value {value}")
    return PB_TO_STATUS[value]


# -------------------------------------------------------------------- store -> protobuf


def bot_pb(bot: BotInfo) -> ladder_pb2.LadderBot:
    return ladder_pb2.LadderBot(
        name=bot["name"],
        version=bot["version"],
        spec=bot["spec"],
        queues=[QUEUE_TO_PB[q] for q in bot["queues"]],
        state=STATE_TO_PB[bot["state"]],
        state_reason=bot["state_reason"],
        validation_games_left=bot["validation_games_left"],
        max_concurrency=bot["max_concurrency"],
        consecutive_failures=bot["consecutive_failures"],
        last_failure=bot["last_failure"],
        last_log=bot["last_log"],
        create_time=timestamp(bot["created_at"]),
        connect_in=bot["connect_in"],
        offline=bot.get("offline", False),
        # a connect-in bot runs on its own machine: it has no limits here
        limits=None if bot["connect_in"] else effective_pb(bot["limits"]),
    )


def rating_pb(r: Standing | RatingView) -> ladder_pb2.Rating:
    return ladder_pb2.Rating(
        queue=QUEUE_TO_PB[r["queue"]],
        mu=r["mu"],
        sigma=r["sigma"],
        score=rating.score(r["mu"], r["sigma"]),
        games=r["games"],
        wins=r["wins"],
        draws=r["draws"],
        provisional=r["provisional"],
        last_played_time=timestamp(r["last_played_at"]),
    )


def match_pb(m: MatchView) -> ladder_pb2.LadderMatch:
    out = ladder_pb2.LadderMatch(
        match_id=m["id"],
        server_match_id=m["server_match_id"],
        server_address=m["server_address"],
        queue=QUEUE_TO_PB[m["queue"]],
        pair_id=m["pair_id"],
        status=STATUS_TO_PB[m["status"]],
        rated=m["rated"],
        cancel_reason=m["cancel_reason"],
        withheld=m["withheld"],
        create_time=timestamp(m["created_at"]),
        start_time=timestamp(m["started_at"]),
        finish_time=timestamp(m["finished_at"]),
        notes=m["notes"],
        request_id=m.get("request_id", ""),
        end_reason=END_TO_PB.get(m.get("end", ""), ladder_pb2.LADDER_END_REASON_UNSPECIFIED),
        forfeit_kind=m.get("forfeit_kind", ""),
    )
    if m["winner"] is not None:
        out.winner_side = m["winner"]
    for s in m["seats"]:
        seat = out.seats.add(
            seat=s["seat"],
            side=s["side"],
            bot_name=s["bot"],
            version=s["version"],
            outcome=s["outcome"],
            fault=s["fault"],
        )
        if s["points"] is not None:
            seat.points = s["points"]
        if s["mu_after"] is not None:
            seat.mu_after = s["mu_after"]
            seat.sigma_after = s["sigma_after"] or 0.0
    return out


def request_pb(r: RequestView) -> ladder_pb2.MatchRequest:
    return ladder_pb2.MatchRequest(
        request_id=r["id"],
        bot_names=r["bots"],
        queue=QUEUE_TO_PB[r["queue"]],
        games=r["games"],
        unrated=r["unrated"],
        requested_by=r["requested_by"],
        create_time=timestamp(r["created_at"]),
        matches=[match_pb(m) for m in r["matches"]],
        finished=r["finished"],
        cancelled=r["cancelled"],
    )


def page_size(value: int) -> int:
    return min(value or DEFAULT_PAGE, MAX_PAGE)
