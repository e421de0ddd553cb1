# ruff: noqa: E501  (HTML written inline)
"""The bot author's page (``/ladder/author``): a bot's state changes and its own logs,
read with the bot's key.

The key is typed into a form and POSTed; it never appears in a URL (which browsers keep
in their history, servers in their access logs, and pages send on as a Referer), it is
never written back into the page, and the answer is marked ``Cache-Control: no-store``
and ``Referrer-Policy: no-referrer``. The page is a client of the LadderService's author
rpcs (``ListBotEvents``, ``GetBotLogs``) with the key as ``authorization: Bearer``
metadata, so it shows exactly what those show the key's holder: their bot, nothing of
another bot, no game withheld. Each game links its public match page (and its replay).
"""

from __future__ import annotations

from html import escape
from typing import Any
from urllib.parse import parse_qs

import grpc
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from cirulla.server.web.pages import page
from cirulla.v1 import ladder_pb2

RPC_TIMEOUT = 10.0
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


def form(name: str = "", error: str = "") -> str:
    """The form: the bot's name and its key (a password field, POSTed)."""
    said = f'<p class="error" id="autherror">{escape(error)}</p>' if error else ""
    return (
        f"{said}"
        '<form class="box" id="authorform" method="post" action="/ladder/author" autocomplete="off">'
        f'<label>bot <input name="bot" required maxlength="40" value="{escape(name)}"></label> '
        '<label>key <input name="key" type="password" required maxlength="200"></label> '
        '<button type="submit">read</button>'
        '<p class="muted">the key <code>cirulla ladder add</code> printed for the bot (or '
        "<code>rotate-key</code>); it is sent in this form only, never in a link</p></form>"
    )


def events_table(events: Any) -> str:
    rows = []
    for e in events:
        kind = ladder_pb2.BotEventKind.Name(e.kind).removeprefix("BOT_EVENT_KIND_").lower()
        at = e.time.ToDatetime().strftime("%Y-%m-%d %H:%M:%S") if e.HasField("time") else ""
        rows.append(
            f'<tr class="event" data-kind="{escape(kind)}"><td>{escape(at)}</td><td>v{e.version}</td>'
            f"<td>{escape(kind.replace('_', ' '))}</td><td>{escape(e.reason)}</td></tr>"
        )
    body = "".join(rows) or '<tr><td colspan=4 class="muted">no state change yet</td></tr>'
    return (
        '<table id="events"><thead><tr><th>time (UTC)</th><th>version</th><th>change</th>'
        f"<th>reason</th></tr></thead><tbody>{body}</tbody></table>"
    )


def logs_html(logs: Any) -> str:
    if not logs:
        return '<p class="muted">no finished game yet</p>'
    parts = []
    for entry in logs:
        mid = escape(entry.match_id)
        text = (
            escape(entry.text)
            if entry.text
            else f'<span class="muted">{escape(entry.note or "empty")}</span>'
        )
        parts.append(
            f'<div class="botlog" data-match="{mid}"><p><a href="/ladder/matches/{mid}">{mid}</a> '
            f'seat {entry.seat}</p><pre class="log">{text}</pre></div>'
        )
    return "".join(parts)


async def author_page(stub: Any, request: Request) -> Response:
    """GET: the form. POST: the bot's state changes and logs, read with the typed key."""
    title = "Bot author"
    if request.method != "POST":
        body = f"<h1>{title}</h1>{form()}"
        return HTMLResponse(page(title, body), headers=_PRIVATE)
    raw = await request.body()
    if len(raw) > MAX_FORM:
        return HTMLResponse(
            page(title, f"<h1>{title}</h1>{form('', 'form: too large')}"), 413, headers=_PRIVATE
        )
    fields = parse_qs(raw.decode("utf-8", "replace"), max_num_fields=10)
    name = (fields.get("bot") or [""])[0].strip()
    key = (fields.get("key") or [""])[0].strip()
    if not name or not key:
        missing = "bot" if not name else "key"
        body = f"<h1>{title}</h1>{form(name, f'{missing}: required')}"
        return HTMLResponse(page(title, body), 400, headers=_PRIVATE)
    metadata = (("authorization", f"Bearer {key}"),)
    try:
        events = await stub.ListBotEvents(
            ladder_pb2.ListBotEventsRequest(bot_name=name, page_size=100),
            timeout=RPC_TIMEOUT,
            metadata=metadata,
        )
        logs = await stub.GetBotLogs(
            ladder_pb2.GetBotLogsRequest(bot_name=name, page_size=LOG_GAMES),
            timeout=RPC_TIMEOUT,
            metadata=metadata,
        )
    except grpc.aio.AioRpcError as exc:
        line = f"{exc.code().name}: {exc.details() or ''}"
        body = f"<h1>{title}</h1>{form(name, line)}"
        return HTMLResponse(page(title, body), _HTTP.get(exc.code(), 502), headers=_PRIVATE)
    bot = events.bot
    state = ladder_pb2.BotState.Name(bot.state).removeprefix("BOT_STATE_").lower()
    reason = f": {escape(bot.state_reason)}" if bot.state_reason else ""
    body = (
        f'<h1>{title}: <span id="authorbot">{escape(bot.name)}</span></h1>'
        f'<div class="box"><p>state: <b id="authorstate">{escape(state)}</b>{reason} · version '
        f'v{bot.version} · <a href="/ladder/bots/{escape(bot.name)}">public page</a></p></div>'
        f'<div class="box"><div class="big">State changes</div>{events_table(events.events)}</div>'
        f'<div class="box"><div class="big">Its output in its last games</div>'
        '<p class="muted">finished games only; the first game of a duplicate pair shows once '
        f"its twin is over</p>{logs_html(logs.logs)}</div>"
        f"{form(name)}"
    )
    return HTMLResponse(page(f"{title}: {bot.name}", body), headers=_PRIVATE)
