# ruff: noqa: E501  (HTML written inline)
"""The ladder's pages: standings, every bot's page, every match, each match's page.

Everything is read through the ladder's public ``LadderService`` (proto/cirulla/v1/
ladder.proto), without the admin token, exactly as any client reads it: the first game of
a duplicate pair whose twin is still in play comes back ``withheld`` (no result, points,
outcomes or rating points), and its record and live stream are refused by the match
server too, so no page can show more than the rpc does. The server area never imports
the ladder; it only speaks its protocol.

A ladder match is played on the match server of whichever ladder process claimed it
(``LadderMatch.server_address``): its replay and live view are read from that server,
the web view's own when the address is one of its own (``local``), else another worker's,
dialled on demand (a few channels kept, keyed by address; plaintext, or TLS checked
against the CA the ladder process was given). The routes take the *ladder* match id, so
the web view only ever dials an address the ladder itself reports.

Pages are rendered on the server (they read without JavaScript); the standings page's
script only refreshes itself every few seconds.
"""

from __future__ import annotations

import asyncio
import collections
import time
from collections.abc import Callable, Collection, Coroutine
from html import escape
from typing import Any
from urllib.parse import quote, urlencode

import grpc
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from cirulla.server.web import author as author_view
from cirulla.server.web import replay as replay_view
from cirulla.server.web.chart import Point, rating_chart, utc
from cirulla.server.web.end_reason import end_text
from cirulla.server.web.pages import page
from cirulla.v1 import ladder_pb2, ladder_pb2_grpc, match_service_pb2, match_service_pb2_grpc

RPC_TIMEOUT = 10.0
QUEUES = {
    "2p": ladder_pb2.LADDER_QUEUE_TWO_PLAYERS,
    "3p": ladder_pb2.LADDER_QUEUE_THREE_PLAYERS,
    "4p": ladder_pb2.LADDER_QUEUE_FOUR_PLAYERS,
}
QUEUE_NAMES = {v: k for k, v in QUEUES.items()}
STATES = {
    ladder_pb2.BOT_STATE_ACTIVE: "active",
    ladder_pb2.BOT_STATE_PAUSED: "paused",
    ladder_pb2.BOT_STATE_DEACTIVATED: "deactivated",
    ladder_pb2.BOT_STATE_REMOVED: "removed",
}
STATUSES = {
    ladder_pb2.LADDER_MATCH_STATUS_SCHEDULED: "scheduled",
    ladder_pb2.LADDER_MATCH_STATUS_CLAIMED: "claimed",
    ladder_pb2.LADDER_MATCH_STATUS_RUNNING: "running",
    ladder_pb2.LADDER_MATCH_STATUS_FINISHED: "finished",
    ladder_pb2.LADDER_MATCH_STATUS_CANCELLED: "cancelled",
}
STATUS_VALUES = {v: k for k, v in STATUSES.items()}
#: a bot's history page size (the rpc's maximum)
PAGE = 1000
#: matches listed on a bot's page (its chart has every rated game)
BOT_PAGE_MATCHES = 100
#: matches on one page of every match (ListLadderMatches' page_size)
LIST_MATCHES = 100
#: channels kept to other workers' match servers (the least recently used is closed)
REMOTE_CHANNELS = 8
#: server match ids remembered as hosted here or not
KNOWN_HOSTS = 1024
_HTTP = replay_view.HTTP_OF


def seconds(ts: Any) -> float | None:
    if ts is None or (ts.seconds == 0 and ts.nanos == 0):
        return None
    return float(ts.seconds) + float(ts.nanos) / 1e9


def when(ts: Any) -> str:
    at = seconds(ts)
    return utc(at) if at is not None else ""


def bot_link(name: str) -> str:
    return f'<a class="botlink" href="/ladder/bots/{quote(name, safe="")}">{escape(name)}</a>'


def match_link(match_id: str) -> str:
    return f'<a class="matchlink" href="/ladder/matches/{quote(match_id, safe="")}">{escape(match_id)}</a>'


def state_text(bot: Any) -> str:
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


def limits_text(bot: Any) -> str:
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


def result_text(m: Any) -> str:
    """A match's result as the rpc gives it: withheld twins show nothing more."""
    status = STATUSES.get(m.status, "unknown")
    if m.withheld:
        return '<span class="withheld">withheld until its duplicate twin is over</span>'
    if status == "cancelled":
        return f"cancelled: {escape(m.cancel_reason)}"
    if status != "finished":
        return escape(status)
    if not m.HasField("winner_side"):
        return "no winner" + end_text(m) + ("" if m.rated else " (not rated)")
    winners = [s.bot_name for s in m.seats if s.side == m.winner_side]
    points = "-".join(str(p) for p in _side_points(m))
    return (
        f"side {m.winner_side} ({', '.join(escape(w) for w in winners)}) won"
        + (f" {points}" if points else "")
        + end_text(m)
        + ("" if m.rated else " (not rated)")
    )


def _side_points(m: Any) -> list[int]:
    by_side: dict[int, int] = {}
    for s in m.seats:
        if s.HasField("points"):
            by_side[s.side] = s.points
    return [by_side[k] for k in sorted(by_side)]


def matches_table(matches: list[Any], caption: str = "") -> str:
    if not matches:
        return '<p class="muted">no matches yet</p>'
    rows = []
    for m in matches:
        seats = " vs ".join(
            f"{bot_link(s.bot_name)}<span class=muted> v{s.version}</span>" for s in m.seats
        )
        status = STATUSES.get(m.status, "unknown")
        rows.append(
            f'<tr class="lmatch" data-match="{escape(m.match_id)}" data-status="{status}"'
            f"{' data-withheld=1' if m.withheld else ''}><td>{match_link(m.match_id)}</td>"
            f"<td>{escape(QUEUE_NAMES.get(m.queue, '?'))}</td><td>{seats}</td>"
            f"<td>{escape(status)}</td><td>{result_text(m)}</td>"
            f"<td>{escape(when(m.finish_time) or when(m.start_time) or when(m.create_time))}</td></tr>"
        )
    cap = f"<caption>{escape(caption)}</caption>" if caption else ""
    return (
        f'<table class="matches">{cap}<thead><tr><th>match</th><th>queue</th><th>seats</th>'
        "<th>status</th><th>result</th><th>time (UTC)</th></tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table>"
    )


def nav(active: str = "") -> str:
    items = [
        ("/ladder", "standings"),
        ("/ladder/matches", "matches"),
        ("/ladder/author", "bot authors"),
        ("/", "match server"),
    ]
    return (
        '<p class="nav">'
        + " · ".join(
            f"<b>{label}</b>" if href == active else f'<a href="{href}">{label}</a>'
            for href, label in items
        )
        + "</p>"
    )


class LadderReader:
    """The LadderService, and the records and live streams of the match servers hosting
    its matches, read as a public client.

    ``match_target`` is the web view's own match server; a match whose
    ``server_address`` is in ``local`` is read there. Any other address is another
    ladder process's match server: dialled with ``tls_ca`` (PEM bytes) when given, in
    plaintext otherwise, its channel kept among the ``REMOTE_CHANNELS`` used last.
    """

    def __init__(
        self,
        ladder_target: str,
        match_target: str,
        *,
        local: Collection[str] = (),
        tls_ca: bytes | None = None,
    ) -> None:
        self.ladder_target = ladder_target
        self.match_target = match_target
        self.local = frozenset(local)
        self.tls_ca = tls_ca
        self._channels: dict[str, grpc.aio.Channel] = {}
        self._remote: collections.OrderedDict[str, grpc.aio.Channel] = collections.OrderedDict()
        self._closing: set[asyncio.Task[None]] = set()
        #: whether our own match server knows a server match id (it never changes)
        self._known: collections.OrderedDict[str, bool] = collections.OrderedDict()
        #: replay steps of the records served, by match server and record id
        self.steps = replay_view.StepsCache()

    def _channel(self, target: str) -> grpc.aio.Channel:
        if target not in self._channels:
            self._channels[target] = grpc.aio.insecure_channel(target)
        return self._channels[target]

    def dial(self, address: str) -> grpc.aio.Channel:
        """A new channel to another ladder process's match server."""
        if self.tls_ca is None:
            return grpc.aio.insecure_channel(address)
        credentials = grpc.ssl_channel_credentials(root_certificates=self.tls_ca)
        return grpc.aio.secure_channel(address, credentials)

    @property
    def ladder(self) -> ladder_pb2_grpc.LadderServiceStub:
        return ladder_pb2_grpc.LadderServiceStub(self._channel(self.ladder_target))

    @property
    def matches(self) -> match_service_pb2_grpc.MatchServiceStub:
        return match_service_pb2_grpc.MatchServiceStub(self._channel(self.match_target))

    async def hosted_here(self, m: Any) -> bool:
        """Whether the web view's own match server hosts ``m``: its address is one of
        ours, or our server knows the match (a ladder restarted on another port hosted
        it under an older address; match ids are unique, so a match we know is ours)."""
        if not m.server_address or m.server_address in self.local:
            return True
        if not m.server_match_id:
            return False
        known = self._known.get(m.server_match_id)
        if known is None:
            try:
                await self.matches.GetMatch(
                    match_service_pb2.GetMatchRequest(match_id=m.server_match_id), timeout=2.0
                )
                known = True
            except grpc.aio.AioRpcError as exc:
                if exc.code() == grpc.StatusCode.FAILED_PRECONDITION:
                    known = True  # a withheld duplicate twin: ours, not shown yet
                elif exc.code() != grpc.StatusCode.NOT_FOUND:
                    return False  # not known for sure: ask again next time
                else:
                    known = False
            self._known[m.server_match_id] = known
            while len(self._known) > KNOWN_HOSTS:
                self._known.popitem(last=False)
        return known

    async def server_of(self, m: Any) -> tuple[str, match_service_pb2_grpc.MatchServiceStub]:
        """The match server hosting ladder match ``m``: its address ("" for the web
        view's own) and a stub on a kept channel."""
        if await self.hosted_here(m):
            return "", self.matches
        address = m.server_address
        channel = self._remote.get(address)
        if channel is None:
            channel = self._remote[address] = self.dial(address)
            while len(self._remote) > REMOTE_CHANNELS:
                _, old = self._remote.popitem(last=False)
                closing = asyncio.get_running_loop().create_task(old.close(grace=RPC_TIMEOUT))
                self._closing.add(closing)
                closing.add_done_callback(self._closing.discard)
        else:
            self._remote.move_to_end(address)
        return address, match_service_pb2_grpc.MatchServiceStub(channel)

    async def stream_of(
        self, m: Any
    ) -> tuple[match_service_pb2_grpc.MatchServiceStub, Callable[[], Any] | None]:
        """A stub for a live stream of ``m``, and what to call when the stream ends: a
        stream from another worker's server has a channel of its own (a long stream
        never holds a kept channel open, nor is cut when it is let go)."""
        if await self.hosted_here(m):
            return self.matches, None
        channel = self.dial(m.server_address)
        return match_service_pb2_grpc.MatchServiceStub(channel), lambda: channel.close(grace=None)

    async def close(self) -> None:
        for channel in [*self._channels.values(), *self._remote.values()]:
            await channel.close(grace=None)
        self._remote.clear()
        if self._closing:
            await asyncio.gather(*self._closing, return_exceptions=True)

    async def standings(self, queue: str, include_inactive: bool = False) -> Any:
        return await self.ladder.GetStandings(
            ladder_pb2.GetStandingsRequest(queue=QUEUES[queue], include_inactive=include_inactive),
            timeout=RPC_TIMEOUT,
        )

    async def history(self, name: str) -> Any:
        return await self.ladder.GetBotHistory(
            ladder_pb2.GetBotHistoryRequest(bot_name=name, page_size=PAGE), timeout=RPC_TIMEOUT
        )

    async def match(self, match_id: str) -> Any:
        got = await self.ladder.GetLadderMatch(
            ladder_pb2.GetLadderMatchRequest(match_id=match_id), timeout=RPC_TIMEOUT
        )
        return got.match

    async def list_matches(
        self, queue: str = "", status: str = "", bot: str = "", token: str = ""
    ) -> Any:
        """One page of every ladder match, newest first (ListLadderMatches)."""
        return await self.ladder.ListLadderMatches(
            ladder_pb2.ListLadderMatchesRequest(
                queue=QUEUES[queue] if queue else ladder_pb2.LADDER_QUEUE_UNSPECIFIED,
                status=(
                    STATUS_VALUES[status] if status else ladder_pb2.LADDER_MATCH_STATUS_UNSPECIFIED
                ),
                bot_name=bot,
                page_size=LIST_MATCHES,
                page_token=token,
            ),
            timeout=RPC_TIMEOUT,
        )

    async def records_of(self, m: Any) -> list[str]:
        """The record ids the match server hosting ``m`` serves to anyone for it."""
        _, stub = await self.server_of(m)
        got = await stub.ListRecords(
            match_service_pb2.ListRecordsRequest(match_id=m.server_match_id, page_size=50),
            timeout=RPC_TIMEOUT,
        )
        return sorted(r.record_id for r in got.records)


def _error_page(exc: grpc.aio.AioRpcError, what: str) -> Response:
    code = _HTTP.get(exc.code(), 502)
    body = f'<h1>{escape(what)}</h1>{nav()}<p class="error">{escape(exc.code().name)}: {escape(exc.details() or "")}</p>'
    return HTMLResponse(page(what, body), status_code=code)


def standings_table(got: Any) -> str:
    rows = []
    for e in got.entries:
        r = e.rating
        rows.append(
            f'<tr class="bot" data-bot="{escape(e.bot.name)}"><td>{e.rank}</td>'
            f"<td>{bot_link(e.bot.name)}{' <span class=muted>?</span>' if r.provisional else ''}</td>"
            f"<td>{r.score:.2f}</td><td>{r.mu:.2f}</td><td>{r.sigma:.2f}</td>"
            f"<td>{r.games}</td><td>{r.wins}</td><td>{r.draws}</td>"
            f"<td>{escape(state_text(e.bot))}</td><td>v{e.bot.version}</td></tr>"
        )
    body = "".join(rows) or '<tr><td colspan=10 class="muted">no bot in this queue yet</td></tr>'
    return (
        '<table id="standings"><thead><tr><th>#</th><th>bot</th><th>rating (\u03bc \u2212 3\u03c3)'
        "</th><th>\u03bc</th><th>\u03c3</th><th>games</th><th>wins</th><th>draws</th>"
        f"<th>state</th><th>version</th></tr></thead><tbody>{body}</tbody></table>"
        f'<p class="muted">{got.rated_games} rated games in this queue · ? provisional '
        "(fewer than 10 rated games)</p>"
    )


def ladder_routes(reader: LadderReader) -> list[Route]:
    Handler = Callable[[Request], Coroutine[Any, Any, Response]]

    def guarded(what: str, fn: Handler) -> Handler:
        async def run(request: Request) -> Response:
            try:
                return await fn(request)
            except grpc.aio.AioRpcError as exc:
                return _error_page(exc, what)

        return run

    def queue_of(request: Request) -> str | None:
        queue = request.query_params.get("queue", "2p")
        return queue if queue in QUEUES else None

    async def standings(request: Request) -> Response:
        queue = queue_of(request)
        if queue is None:
            return HTMLResponse(page("Ladder", "<p>queue: one of 2p, 3p, 4p</p>"), 400)
        got = await reader.standings(queue)
        tabs = " · ".join(
            f"<b>{q}</b>" if q == queue else f'<a href="/ladder?queue={q}">{q}</a>' for q in QUEUES
        )
        body = (
            f"<h1>Ladder standings</h1>{nav('/ladder')}<p>queue: {tabs}</p>"
            f'<div class="box" id="standings-box">{standings_table(got)}</div>'
            f'<p class="muted">read {escape(utc(time.time()))}; this page refreshes itself '
            "every 10 s while scripts run</p>"
            "<script>setInterval(async () => { const r = await fetch(location.href); "
            "if (!r.ok) return; const d = new DOMParser().parseFromString(await r.text(), "
            "'text/html'); const box = d.getElementById('standings-box'); if (box) "
            "document.getElementById('standings-box').innerHTML = box.innerHTML; }, 10000);"
            "</script>"
        )
        return HTMLResponse(page("Cirulla ladder", body))

    async def api_standings(request: Request) -> Response:
        queue = queue_of(request)
        if queue is None:
            return JSONResponse({"error": "queue: one of 2p, 3p, 4p"}, 400)
        got = await reader.standings(queue)
        return JSONResponse(
            {
                "queue": queue,
                "rated_games": got.rated_games,
                "standings": [
                    {
                        "rank": e.rank,
                        "bot": e.bot.name,
                        "version": e.bot.version,
                        "state": state_text(e.bot),
                        "score": round(e.rating.score, 2),
                        "mu": round(e.rating.mu, 2),
                        "sigma": round(e.rating.sigma, 2),
                        "games": e.rating.games,
                        "wins": e.rating.wins,
                        "provisional": e.rating.provisional,
                    }
                    for e in got.entries
                ],
            }
        )

    async def bot_page(request: Request) -> Response:
        name = request.path_params["name"]
        h = await reader.history(name)
        bot = h.bot
        points = [
            Point(
                seconds(p.time) or 0.0,
                p.mu,
                p.sigma,
                p.version,
                p.match_id,
                QUEUE_NAMES.get(p.queue, "?"),
            )
            for p in h.rating_history
        ]
        versions = "".join(
            f'<tr class="version"><td>v{v.version}</td><td><code>{escape(v.spec)}</code></td>'
            f"<td>{escape(', '.join(QUEUE_NAMES.get(q, '?') for q in v.queues))}</td>"
            f'<td class="limits">{escape(limits_text(v))}</td>'
            f"<td>{escape(when(v.create_time))}</td></tr>"
            for v in sorted(h.versions, key=lambda v: -v.version)
        )
        ratings = "".join(
            f'<tr class="rating"><td>{escape(QUEUE_NAMES.get(r.queue, "?"))}</td>'
            f"<td>{r.score:.2f}</td><td>{r.mu:.2f}</td><td>{r.sigma:.2f}</td><td>{r.games}</td>"
            f"<td>{r.wins}</td><td>{r.draws}</td><td>{'yes' if r.provisional else 'no'}</td></tr>"
            for r in h.ratings
        )
        state = escape(state_text(bot)) + (
            f" — {escape(bot.state_reason)}" if bot.state_reason else ""
        )
        failure = f"<p>last failure: {escape(bot.last_failure)}</p>" if bot.last_failure else ""
        log_tail = (
            f"<details><summary>last log</summary><pre>{escape(bot.last_log)}</pre></details>"
            if bot.last_log
            else ""
        )
        every = f"/ladder/matches?{urlencode({'bot': bot.name})}"
        shown_note = (
            f'<p class="muted">the newest {BOT_PAGE_MATCHES} of {len(h.matches)}; '
            f'<a id="botmatches" href="{escape(every)}">every match of {escape(bot.name)}</a></p>'
            if len(h.matches) > BOT_PAGE_MATCHES
            else ""
        )
        body = (
            f'<h1>Bot <span id="botname">{escape(bot.name)}</span></h1>{nav()}'
            f'<div class="box"><p>state: <b id="botstate">{state}</b> · version v{bot.version}'
            f"{' · connects in' if bot.connect_in else ''} · at most {bot.max_concurrency} "
            f"matches at once · {bot.consecutive_failures} failures in a row</p>"
            f'<p>limits in the sandbox: <span id="botlimits">{escape(limits_text(bot))}</span>'
            f"</p>{failure}"
            f"{log_tail}</div>"
            '<div class="box"><div class="big">Ratings</div><table id="ratings"><thead><tr>'
            "<th>queue</th><th>rating</th><th>\u03bc</th><th>\u03c3</th><th>games</th>"
            f"<th>wins</th><th>draws</th><th>provisional</th></tr></thead><tbody>{ratings}"
            "</tbody></table></div>"
            '<div class="box"><div class="big">Rating (\u03bc) over time</div>'
            f"{rating_chart(points, f'{bot.name}: rating over time')}"
            '<p class="muted">hover a point for its time, \u03bc, \u03c3 and match</p></div>'
            '<div class="box"><div class="big">Versions</div><table id="versions"><thead><tr>'
            "<th>version</th><th>spec</th><th>queues</th><th>limits</th><th>registered (UTC)</th>"
            "</tr></thead>"
            f"<tbody>{versions}</tbody></table></div>"
            f'<div class="box"><div class="big">Matches</div>{shown_note}'
            f"{matches_table(list(h.matches)[:BOT_PAGE_MATCHES])}</div>"
        )
        return HTMLResponse(page(f"Ladder bot {bot.name}", body))

    async def every_match(request: Request) -> Response:
        """Every ladder match, newest first, a page at a time: the filters are a plain
        form and the next page a plain link carrying the rpc's page token."""
        params = request.query_params
        queue, status = params.get("queue", ""), params.get("status", "")
        bot, token = params.get("bot", "").strip(), params.get("page_token", "")
        if queue and queue not in QUEUES:
            return HTMLResponse(page("Ladder matches", "<p>queue: one of 2p, 3p, 4p</p>"), 400)
        if status and status not in STATUS_VALUES:
            choices = ", ".join(STATUS_VALUES)
            return HTMLResponse(page("Ladder matches", f"<p>status: one of {choices}</p>"), 400)
        got = await reader.list_matches(queue, status, bot, token)
        filters = {k: v for k, v in (("queue", queue), ("status", status), ("bot", bot)) if v}

        def options(current: str, values: Collection[str]) -> str:
            return '<option value="">any</option>' + "".join(
                f"<option{' selected' if v == current else ''}>{escape(v)}</option>" for v in values
            )

        form = (
            '<form class="box" id="filters" method="get" action="/ladder/matches">'
            f'queue <select name="queue">{options(queue, QUEUES)}</select> '
            f'status <select name="status">{options(status, STATUS_VALUES)}</select> '
            f'bot <input name="bot" size="14" value="{escape(bot, quote=True)}"> '
            '<button type="submit">show</button></form>'
        )
        links = []
        if token:
            newest = "/ladder/matches" + (f"?{urlencode(filters)}" if filters else "")
            links.append(f'<a id="newest" href="{escape(newest)}">\u00ab newest matches</a>')
        if got.next_page_token:
            older = f"/ladder/matches?{urlencode({**filters, 'page_token': got.next_page_token})}"
            links.append(f'<a id="older" href="{escape(older)}">older matches \u00bb</a>')
        paging = f'<p class="paging">{" · ".join(links)}</p>' if links else ""
        shown = ", ".join(f"{k} {escape(v)}" for k, v in filters.items())
        body = (
            f"<h1>Ladder matches</h1>{nav('/ladder/matches')}{form}"
            f'<p class="muted">newest first{f" ({shown})" if shown else ""}, '
            f"{LIST_MATCHES} a page{'; an older page' if token else ''}</p>"
            f'<div class="box">{matches_table(list(got.matches))}</div>{paging}'
        )
        return HTMLResponse(page("Ladder matches", body))

    async def match_page(request: Request) -> Response:
        m = await reader.match(request.path_params["match_id"])
        status = STATUSES.get(m.status, "unknown")
        seats = "".join(
            f'<tr class="lseat"><td>{s.seat}</td><td>{s.side}</td><td>{bot_link(s.bot_name)}</td>'
            f"<td>v{s.version}</td><td>{escape(s.outcome)}</td>"
            f"<td>{s.points if s.HasField('points') else ''}</td>"
            f"<td>{f'{s.mu_after:.2f}' if s.HasField('mu_after') else ''}</td>"
            f"<td>{escape(s.fault)}</td></tr>"
            for s in m.seats
        )
        views = ""
        if m.withheld:
            views = (
                '<p class="withheld">This game is the first of a duplicate pair whose twin is '
                "still in play: its result, record and live view are withheld until the twin "
                "is over.</p>"
            )
        elif m.server_match_id and status == "finished":
            here = f"/ladder/matches/{quote(m.match_id, safe='')}"
            try:
                ids = await reader.records_of(m)
                views = (
                    "<p>"
                    + " · ".join(
                        f'<a class="replay" href="{here}/records/{quote(r, safe="")}">'
                        f"replay {escape(r)}</a>"
                        for r in ids
                    )
                    + "</p>"
                    if ids
                    else '<p class="muted">its match server has no record of it</p>'
                )
            except grpc.aio.AioRpcError as exc:
                views = (
                    f'<p class="error">its match server ({escape(m.server_address)}) did not '
                    f"answer: {escape(exc.code().name)}: {escape(exc.details() or '')}</p>"
                )
        elif m.server_match_id and status == "running":
            views = (
                f'<p><a class="live" href="/ladder/matches/{quote(m.match_id, safe="")}/live">'
                "watch live</a></p>"
            )
        notes = "".join(f"<li>{escape(n)}</li>" for n in m.notes)
        host = f'<span id="lserver">{escape(m.server_address)}</span>'
        body = (
            f'<h1>Ladder match <span id="lmatch">{escape(m.match_id)}</span></h1>{nav()}'
            f'<div class="box"><p>queue {escape(QUEUE_NAMES.get(m.queue, "?"))} · status '
            f'<b id="lstatus">{escape(status)}</b>'
            f"{' · duplicate pair ' + escape(m.pair_id) if m.pair_id else ''}"
            f"{' · server match ' + escape(m.server_match_id) if m.server_match_id else ''}"
            f"{' on ' + host if m.server_address else ''}</p>"
            f'<p id="lresult">{result_text(m)}</p>'
            f"<p class=muted>created {escape(when(m.create_time))} · started "
            f"{escape(when(m.start_time) or '-')} · finished {escape(when(m.finish_time) or '-')}"
            f"</p>{views}</div>"
            '<div class="box"><table id="lseats"><thead><tr><th>seat</th><th>side</th>'
            "<th>bot</th><th>version</th><th>outcome</th><th>points</th><th>\u03bc after</th>"
            f"<th>fault</th></tr></thead><tbody>{seats}</tbody></table>"
            f"{'<ul>' + notes + '</ul>' if notes else ''}</div>"
        )
        return HTMLResponse(page(f"Ladder match {m.match_id}", body))

    def refused(m: Any, what: str, record_id: str = "") -> tuple[int, str] | None:
        """Why the web view will not show a match's record or live view (HTTP status,
        one line), or None: a withheld twin (whose match server refuses it too), a
        match not on a match server yet, a record of another match."""
        if m.withheld:
            return 409, (
                f"{what} of {m.match_id} withheld: the other game of its duplicate pair "
                f"{m.pair_id} is still in play"
            )
        if not m.server_match_id:
            return 404, f"{m.match_id} has not started on a match server yet"
        if record_id and not record_id.startswith(f"{m.server_match_id}-g"):
            return 404, f"record {record_id} is not a game of ladder match {m.match_id}"
        return None

    def back_to(m: Any) -> tuple[str, str]:
        return f"/ladder/matches/{quote(m.match_id, safe='')}", f"ladder match {m.match_id}"

    def refusal_page(title: str, code: int, line: str, m: Any) -> Response:
        href, label = back_to(m)
        body = (
            f'<h1>{escape(title)}</h1><p><a href="{escape(href)}">{escape(label)}</a></p>'
            f'<p class="error" id="action">{escape(line)}</p>'
        )
        return HTMLResponse(page(title, body), status_code=code)

    async def replay(request: Request) -> Response:
        """A record of a ladder match, read from the match server hosting it."""
        m = await reader.match(request.path_params["match_id"])
        record_id = request.path_params["record_id"]
        no = refused(m, "the record", record_id)
        if no is not None:
            return refusal_page(f"Replay: {record_id}", *no, m)
        server, stub = await reader.server_of(m)
        here = f"{back_to(m)[0]}/records/{quote(record_id, safe='')}"
        return await replay_view.record_page(
            request,
            stub,
            record_id,
            reader.steps,
            server=server,
            boards_url=f"{here}/boards",
            back=back_to(m),
        )

    async def replay_boards(request: Request) -> Response:
        m = await reader.match(request.path_params["match_id"])
        record_id = request.path_params["record_id"]
        no = refused(m, "the record", record_id)
        if no is not None:
            return JSONResponse({"error": no[1]}, status_code=no[0])
        server, stub = await reader.server_of(m)
        return await replay_view.boards(stub, record_id, reader.steps, server)

    async def live(request: Request) -> Response:
        """A running ladder match as a spectator sees it, from the server hosting it."""
        m = await reader.match(request.path_params["match_id"])
        no = refused(m, "the live view")
        if no is not None:
            return refusal_page(f"Live: {m.match_id}", *no, m)
        _, stub = await reader.server_of(m)
        return await replay_view.live_page(
            stub,
            m.server_match_id,
            stream_url=f"{back_to(m)[0]}/live/stream",
            back=back_to(m),
        )

    async def live_stream(request: Request) -> Response:
        m = await reader.match(request.path_params["match_id"])
        no = refused(m, "the live view")
        if no is not None:
            return JSONResponse({"error": no[1]}, status_code=no[0])
        stub, on_end = await reader.stream_of(m)
        return replay_view.live_stream(stub, m.server_match_id, on_end)

    return [
        Route("/ladder", guarded("Ladder standings", standings)),
        Route("/api/ladder", guarded("Ladder standings", api_standings)),
        Route("/ladder/bots/{name}", guarded("Ladder bot", bot_page)),
        Route("/ladder/matches", guarded("Ladder matches", every_match)),
        Route(
            "/ladder/author",
            guarded("Bot author", lambda request: author_view.author_page(reader.ladder, request)),
            methods=["GET", "POST"],
        ),
        Route("/ladder/matches/{match_id}", guarded("Ladder match", match_page)),
        Route("/ladder/matches/{match_id}/records/{record_id}", guarded("Replay", replay)),
        Route(
            "/ladder/matches/{match_id}/records/{record_id}/boards",
            guarded("Replay", replay_boards),
        ),
        Route("/ladder/matches/{match_id}/live", guarded("Live", live)),
        Route("/ladder/matches/{match_id}/live/stream", guarded("Live", live_stream)),
    ]
