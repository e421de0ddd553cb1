"""What several ladder pages show of the same rpc messages: a bot's state and limits, a
match's result and why it ended, a row of a list of matches, times in UTC.

A score alone misleads (7-27 is a cappotto, 0-0 a forfeit), so every result the pages
show (the list of matches, a bot's matches, a match's page) says why, from
``LadderMatch.end_reason`` and ``forfeit_kind``, in the words ``cirulla ladder match``
uses. A withheld game (the first of a duplicate pair whose twin is in play) shows nothing
more than that it is withheld. ``templates/ladder/macros.html`` draws these views.

Also what every ladder route does alike: a failed rpc is a page saying so (``guarded``),
a queue is read from the query (``queue_of``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import grpc
from google.protobuf.timestamp_pb2 import Timestamp
from starlette.requests import Request
from starlette.responses import Response

from cirulla.server.web import templating
from cirulla.server.web.chart import utc
from cirulla.server.web.ladder import QUEUE_NAMES, QUEUES, STATES, STATUSES
from cirulla.server.web.replay import HTTP_OF, rpc_error
from cirulla.v1 import ladder_pb2

Handler = Callable[[Request], Awaitable[Response]]

#: ``LadderMatch.end_reason`` in words (as ``cirulla ladder match`` says them)
END_WORDS = {
    ladder_pb2.LADDER_END_REASON_TARGET: ("target", "target reached"),
    ladder_pb2.LADDER_END_REASON_CAPPOTTO: ("cappotto", "cappotto"),
    ladder_pb2.LADDER_END_REASON_FORFEIT: ("forfeit", "forfeit"),
    ladder_pb2.LADDER_END_REASON_TIME_LIMIT: ("time-limit", "time limit (void)"),
    ladder_pb2.LADDER_END_REASON_VOID: ("void", "void"),
}


def seconds(ts: Timestamp | None) -> float | None:
    if ts is None or (ts.seconds == 0 and ts.nanos == 0):
        return None
    return float(ts.seconds) + float(ts.nanos) / 1e9


def when(ts: Timestamp | None) -> str:
    at = seconds(ts)
    return utc(at) if at is not None else ""


def state_text(bot: ladder_pb2.LadderBot) -> str:
    state = STATES.get(bot.state, "unknown")
    if state == "active" and bot.validation_games_left:
        state = f"validating ({bot.validation_games_left} left)"
    return state


def _size(value: int) -> str:
    """``2 GiB``, ``512 MiB``: a limit in bytes, exact in the largest unit that fits."""
    for unit, size in (("TiB", 1024**4), ("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if value >= size and value % size == 0:
            return f"{value // size} {unit}"
    return f"{value} bytes"


def limits_text(bot: ladder_pb2.LadderBot) -> str:
    """A version's limits in the sandbox (``LadderBot.limits``), for people: a bot's
    author sees what its program may use before it is killed for using more."""
    if not bot.HasField("limits") or not bot.limits.memory_bytes:
        return "none here (a connect-in bot runs on its own machine)"
    lim = bot.limits
    cores = lim.cpu_millicores / 1000
    cpu = (f"{cores:g} core" + ("" if cores == 1 else "s")) if lim.cpu_millicores else "any CPU"
    return (
        f"memory {_size(lim.memory_bytes)}, {lim.processes} processes and threads, {cpu}, "
        f"output {_size(lim.output_bytes)}, /tmp {_size(lim.tmp_bytes)}"
    )


@dataclass(frozen=True)
class EndReason:
    """Why a game ended: ``key`` for the page's data attribute, ``words`` for people."""

    key: str
    words: str


def end_of(m: ladder_pb2.LadderMatch) -> EndReason | None:
    """Why the game ended, after its result: a score alone misleads (7-27 is a cappotto,
    0-0 a forfeit). None for a match the rpc gave no reason (an older ladder)."""
    if m.end_reason not in END_WORDS:
        return None
    key, words = END_WORDS[m.end_reason]
    if m.forfeit_kind:
        words += f" ({m.forfeit_kind.replace('-', ' ')})"
    return EndReason(key, words)


@dataclass(frozen=True)
class Result:
    """A match's result as the rpc gives it: a withheld twin shows nothing more."""

    status: str
    withheld: bool
    cancel_reason: str
    winner_side: int | None
    winners: list[str]
    points: str
    end: EndReason | None
    rated: bool


def _side_points(m: ladder_pb2.LadderMatch) -> list[int]:
    by_side: dict[int, int] = {}
    for s in m.seats:
        if s.HasField("points"):
            by_side[s.side] = s.points
    return [by_side[k] for k in sorted(by_side)]


def result_of(m: ladder_pb2.LadderMatch) -> Result:
    if m.withheld:  # nothing of its result is even read
        return Result("withheld", True, "", None, [], "", None, False)
    winner = m.winner_side if m.HasField("winner_side") else None
    return Result(
        status=STATUSES.get(m.status, "unknown"),
        withheld=False,
        cancel_reason=m.cancel_reason,
        winner_side=winner,
        winners=[s.bot_name for s in m.seats if s.side == winner],
        points="-".join(str(p) for p in _side_points(m)),
        end=end_of(m),
        rated=m.rated,
    )


@dataclass(frozen=True)
class SeatLink:
    bot: str
    version: int


@dataclass(frozen=True)
class MatchRow:
    """One row of a list of matches (``macros.html``'s ``matches_table``)."""

    match_id: str
    status: str
    withheld: bool
    queue: str
    seats: list[SeatLink]
    result: Result
    time: str


def match_row(m: ladder_pb2.LadderMatch) -> MatchRow:
    return MatchRow(
        match_id=m.match_id,
        status=STATUSES.get(m.status, "unknown"),
        withheld=m.withheld,
        queue=QUEUE_NAMES.get(m.queue, "?"),
        seats=[SeatLink(s.bot_name, s.version) for s in m.seats],
        result=result_of(m),
        time=when(m.finish_time) or when(m.start_time) or when(m.create_time),
    )


def guarded(what: str, fn: Handler) -> Handler:
    """``fn``, whose failed rpc is a page naming ``what`` with the rpc's status (the HTTP
    status of ``replay.HTTP_OF``, else 502)."""

    async def run(request: Request) -> Response:
        try:
            return await fn(request)
        except grpc.aio.AioRpcError as exc:
            code = HTTP_OF.get(exc.code(), 502)
            return templating.page("ladder/error.html", code, title=what, line=rpc_error(exc))

    return run


def queue_of(request: Request) -> str | None:
    """The ``queue`` of the query (2p by default), or None when it names no queue."""
    queue = request.query_params.get("queue", "2p")
    return queue if queue in QUEUES else None
