"""The ladder protocol's words (proto/cirulla/v1/ladder.proto) as people type and read
them: queues, bot states, match statuses. Defined once for the ladder, which stores
them, and the web view's ladder pages, which read the ladder only through its protocol
(the server area never imports the ladder)."""

from __future__ import annotations

from cirulla.v1 import ladder_pb2

QUEUES: dict[str, ladder_pb2.LadderQueue] = {
    "2p": ladder_pb2.LADDER_QUEUE_TWO_PLAYERS,
    "3p": ladder_pb2.LADDER_QUEUE_THREE_PLAYERS,
    "4p": ladder_pb2.LADDER_QUEUE_FOUR_PLAYERS,
}
BOT_STATES: dict[str, ladder_pb2.BotState] = {
    "active": ladder_pb2.BOT_STATE_ACTIVE,
    "paused": ladder_pb2.BOT_STATE_PAUSED,
    "deactivated": ladder_pb2.BOT_STATE_DEACTIVATED,
    "removed": ladder_pb2.BOT_STATE_REMOVED,
}
MATCH_STATUSES: dict[str, ladder_pb2.LadderMatchStatus] = {
    "scheduled": ladder_pb2.LADDER_MATCH_STATUS_SCHEDULED,
    "claimed": ladder_pb2.LADDER_MATCH_STATUS_CLAIMED,
    "running": ladder_pb2.LADDER_MATCH_STATUS_RUNNING,
    "finished": ladder_pb2.LADDER_MATCH_STATUS_FINISHED,
    "cancelled": ladder_pb2.LADDER_MATCH_STATUS_CANCELLED,
}
#: The queues' and the match statuses' words by their protocol value.
QUEUE_NAMES = {v: k for k, v in QUEUES.items()}
MATCH_STATUS_NAMES = {v: k for k, v in MATCH_STATUSES.items()}
