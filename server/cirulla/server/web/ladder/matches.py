"""Every ladder match a page at a time (``/ladder/matches``, ``templates/ladder/
matches.html``) and each match's page (``/ladder/matches/ID``, ``match.html``): its result
as the rpc gives it, its seats, and links to its replays or live view when the match
server may show them (never for a withheld duplicate twin)."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode

import grpc
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from cirulla.server.web import templating
from cirulla.server.web.ladder import LIST_MATCHES, QUEUE_NAMES, QUEUES, STATUS_VALUES, STATUSES
from cirulla.server.web.ladder.reader import LadderReader
from cirulla.server.web.ladder.views import guarded, match_row, result_of, when
from cirulla.server.web.replay import message_page, rpc_error
from cirulla.v1 import ladder_pb2


async def every_match(reader: LadderReader, request: Request) -> Response:
    """Every ladder match, newest first, a page at a time: the filters are a plain
    form and the next page a plain link carrying the rpc's page token."""
    params = request.query_params
    queue, status = params.get("queue", ""), params.get("status", "")
    bot, token = params.get("bot", "").strip(), params.get("page_token", "")
    if queue and queue not in QUEUES:
        return message_page("Ladder matches", "", "queue: one of 2p, 3p, 4p", 400, error=False)
    if status and status not in STATUS_VALUES:
        choices = ", ".join(STATUS_VALUES)
        return message_page("Ladder matches", "", f"status: one of {choices}", 400, error=False)
    got = await reader.list_matches(queue, status, bot, token)
    filters = {k: v for k, v in (("queue", queue), ("status", status), ("bot", bot)) if v}
    newest = "/ladder/matches" + (f"?{urlencode(filters)}" if filters else "") if token else ""
    older = (
        f"/ladder/matches?{urlencode({**filters, 'page_token': got.next_page_token})}"
        if got.next_page_token
        else ""
    )
    return templating.page(
        "ladder/matches.html",
        title="Ladder matches",
        queue=queue,
        queues=list(QUEUES),
        status=status,
        statuses=list(STATUS_VALUES),
        bot=bot,
        filters=list(filters.items()),
        per_page=LIST_MATCHES,
        older_page=bool(token),
        rows=[match_row(m) for m in got.matches],
        newest=newest,
        older=older,
    )


@dataclass(frozen=True)
class SeatRow:
    seat: int
    side: int
    bot_name: str
    version: int
    outcome: str
    points: str
    mu_after: str
    fault: str


def seat_rows(m: ladder_pb2.LadderMatch) -> list[SeatRow]:
    return [
        SeatRow(
            s.seat,
            s.side,
            s.bot_name,
            s.version,
            s.outcome,
            str(s.points) if s.HasField("points") else "",
            f"{s.mu_after:.2f}" if s.HasField("mu_after") else "",
            s.fault,
        )
        for s in m.seats
    ]


async def match_page(reader: LadderReader, request: Request) -> Response:
    m = await reader.match(request.path_params["match_id"])
    status = STATUSES.get(m.status, "unknown")
    shows, error = "", ""
    records: list[str] = []
    if m.withheld:
        shows = "withheld"
    elif m.server_match_id and status == "finished":
        try:
            records = await reader.records_of(m)
            shows = "records" if records else "no records"
        except grpc.aio.AioRpcError as exc:
            shows, error = "no answer", rpc_error(exc)
    elif m.server_match_id and status == "running":
        shows = "live"
    return templating.page(
        "ladder/match.html",
        title=f"Ladder match {m.match_id}",
        m=m,
        queue=QUEUE_NAMES.get(m.queue, "?"),
        status=status,
        outcome=result_of(m),
        created=when(m.create_time),
        started=when(m.start_time),
        finished=when(m.finish_time),
        shows=shows,
        records=records,
        error=error,
        seats=seat_rows(m),
    )


def routes(reader: LadderReader) -> list[Route]:
    async def every(request: Request) -> Response:
        return await every_match(reader, request)

    async def one(request: Request) -> Response:
        return await match_page(reader, request)

    return [
        Route("/ladder/matches", guarded("Ladder matches", every)),
        Route("/ladder/matches/{match_id}", guarded("Ladder match", one)),
    ]
