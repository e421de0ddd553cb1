"""The bot author's page (``/ladder/author``): a bot's state changes and its own logs,
read with the bot's key.

The key is typed into a form and POSTed; it never appears in a URL (which browsers keep
in their history, servers in their access logs, and pages send on as a Referer), it is
never written back into the page, and the answer is marked ``Cache-Control: no-store``
and ``Referrer-Policy: no-referrer``. The page is a client of the LadderService's author
rpcs (``ListBotEvents``, ``GetBotLogs``) with the key as ``authorization: Bearer``
metadata, so it shows exactly what those show the key's holder: their bot, nothing of
another bot, no game withheld. Each game links its public match page (and its replay).
The markup is ``templates/ladder/author.html``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import parse_qs

import grpc
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from cirulla.server.web import templating
from cirulla.server.web.ladder.reader import LadderReader
from cirulla.server.web.ladder.views import guarded
from cirulla.v1 import ladder_pb2, ladder_pb2_grpc

RPC_TIMEOUT = 10.0
TITLE = "Bot author"
#: games whose logs the page shows
LOG_GAMES = 10
#: a form body larger than this is refused (a name and a key are a few dozen bytes)
MAX_FORM = 4096
_PRIVATE = {"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"}
_HTTP = {
    grpc.StatusCode.UNAUTHENTICATED: 401,
    grpc.StatusCode.PERMISSION_DENIED: 403,
    grpc.StatusCode.NOT_FOUND: 404,
    grpc.StatusCode.INVALID_ARGUMENT: 400,
}


@dataclass(frozen=True)
class EventRow:
    kind: str
    at: str
    version: int
    reason: str


def event_rows(events: Iterable[ladder_pb2.BotEvent]) -> list[EventRow]:
    rows = []
    for e in events:
        kind = ladder_pb2.BotEventKind.Name(e.kind).removeprefix("BOT_EVENT_KIND_").lower()
        at = e.time.ToDatetime().strftime("%Y-%m-%d %H:%M:%S") if e.HasField("time") else ""
        rows.append(EventRow(kind, at, e.version, e.reason))
    return rows


def _page(
    status_code: int = 200,
    *,
    name: str = "",
    error: str = "",
    title: str = TITLE,
    bot: ladder_pb2.LadderBot | None = None,
    state: str = "",
    events: list[EventRow] | None = None,
    logs: Iterable[ladder_pb2.BotLog] = (),
) -> Response:
    return templating.page(
        "ladder/author.html",
        status_code,
        _PRIVATE,
        title=title,
        heading=TITLE,
        name=name,
        error=error,
        bot=bot,
        state=state,
        events=events or [],
        logs=list(logs),
    )


async def author_page(stub: ladder_pb2_grpc.LadderServiceStub, request: Request) -> Response:
    """GET: the form. POST: the bot's state changes and logs, read with the typed key."""
    if request.method != "POST":
        return _page()
    raw = await request.body()
    if len(raw) > MAX_FORM:
        return _page(413, error="form: too large")
    fields = parse_qs(raw.decode("utf-8", "replace"), max_num_fields=10)
    name = (fields.get("bot") or [""])[0].strip()
    key = (fields.get("key") or [""])[0].strip()
    if not name or not key:
        missing = "bot" if not name else "key"
        return _page(400, name=name, error=f"{missing}: required")
    metadata = (("authorization", f"Bearer {key}"),)
    try:
        events: ladder_pb2.ListBotEventsResponse = await stub.ListBotEvents(
            ladder_pb2.ListBotEventsRequest(bot_name=name, page_size=100),
            timeout=RPC_TIMEOUT,
            metadata=metadata,
        )
        logs: ladder_pb2.GetBotLogsResponse = await stub.GetBotLogs(
            ladder_pb2.GetBotLogsRequest(bot_name=name, page_size=LOG_GAMES),
            timeout=RPC_TIMEOUT,
            metadata=metadata,
        )
    except grpc.aio.AioRpcError as exc:
        line = f"{exc.code().name}: {exc.details() or ''}"
        return _page(_HTTP.get(exc.code(), 502), name=name, error=line)
    bot = events.bot
    return _page(
        name=name,
        title=f"{TITLE}: {bot.name}",
        bot=bot,
        state=ladder_pb2.BotState.Name(bot.state).removeprefix("BOT_STATE_").lower(),
        events=event_rows(events.events),
        logs=logs.logs,
    )


def routes(reader: LadderReader) -> list[Route]:
    async def page(request: Request) -> Response:
        return await author_page(reader.ladder, request)

    return [Route("/ladder/author", guarded("Bot author", page), methods=["GET", "POST"])]
