"""The replay page's parts for one step: board (last action, table, scores), controls and
the timeline of every move grouped by deal. Rendered on the server for the page's first
state and, all steps at once, for the script that steps through them.

Also the replay and live pages themselves as read from *a* match server's MatchService
(``record_page``, ``boards``, ``live_page``, ``live_stream``): the web view's own server
(``/records/ID``, ``/matches/ID``) and the server hosting a ladder match, which may be
another worker's (``/ladder/matches/ID/...``), are drawn by the same code. Each is a
public client call without the admin token, so a record or stream the match server
refuses (a withheld duplicate twin's) is refused on the page too.
"""

from __future__ import annotations

import asyncio
import collections
import json
from collections.abc import AsyncIterator, Callable
from html import escape
from typing import Any

import grpc
from google.protobuf import json_format
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse

from cirulla.server import records
from cirulla.server.web import pages, table
from cirulla.server.web.steps import replay_steps
from cirulla.v1 import match_service_pb2, match_service_pb2_grpc

RPC_TIMEOUT = 10.0
#: replay steps kept per web view (a served record never changes)
STEPS_KEPT = 32
#: HTTP status of a page for the gRPC error behind it (else 502)
HTTP_OF = {
    grpc.StatusCode.NOT_FOUND: 404,
    grpc.StatusCode.FAILED_PRECONDITION: 409,
    grpc.StatusCode.INVALID_ARGUMENT: 400,
    grpc.StatusCode.PERMISSION_DENIED: 403,
}
Stub = match_service_pb2_grpc.MatchServiceStub


def score_table(score: dict[str, Any], seats: list[dict[str, Any]]) -> str:
    head = "".join(f"<th>{i}</th>" for i in records.SCORE_ITEMS)
    rows = []
    for side, s in enumerate(score["sides"]):
        names = ", ".join(
            f"seat {q['seat']}" + (f" {q['name']}" if q["name"] else "")
            for q in seats
            if q["side"] == side
        )
        cells = "".join(f"<td>{int(s.get(k, 0))}</td>" for k in records.SCORE_ITEMS)
        rows.append(
            f"<tr><td>side {side} ({escape(names)})</td>{cells}<td><b>{int(s.get('total', 0))}"
            "</b></td></tr>"
        )
    return (
        f"<div><b>Deal {score['deal']}</b><table><tr><th></th>{head}<th>total</th></tr>"
        + "".join(rows)
        + f"</table>game: {' - '.join(str(t) for t in score['totals'])}</div>"
    )


def board(data: dict[str, Any], k: int) -> str:
    steps = data["steps"]
    st = steps[k]
    action = escape(st["action"]) if k else "Opening table of deal 1"
    log = "<br>".join(escape(line) for line in st["log"])
    scores = [s["score"] for s in steps[: k + 1] if s["score"]]
    score_html = (
        "".join(score_table(sc, data["seats"]) for sc in scores)
        if scores
        else '<span class="muted">no deal scored yet</span>'
    )
    last = k == len(steps) - 1
    result = (
        f'<div class="box" id="resultbox"><div id="result" class="big">{escape(data["result"])}'
        "</div></div>"
        if last
        else ""
    )
    return (
        f'<div class="box"><div id="action" class="big">{action}</div>'
        f'<div id="events" class="muted">{log}</div></div>'
        + table.render(table.from_step(st, data["seats"]))
        + f'<div class="box"><div class="big">Deal scores</div><div id="score">{score_html}'
        f"</div></div>{result}"
    )


def _link(k: int, label: str, ident: str) -> str:
    return f'<a id="{ident}" href="?step={k}" data-step="{k}">{label}</a>'


def controls(data: dict[str, Any], k: int) -> str:
    n = len(data["steps"]) - 1
    st = data["steps"][k]
    return (
        "<p>"
        + " ".join(
            (
                _link(0, "\u00ab first", "first"),
                _link(max(k - 1, 0), "\u25c0 back", "prev"),
                _link(min(k + 1, n), "next \u25b6", "next"),
                _link(n, "last \u00bb", "last"),
            )
        )
        + f' <span id="pos" class="big">move {k} of {n} \u00b7 deal {st["deal"]}</span></p>'
    )


def timeline(data: dict[str, Any], k: int) -> str:
    """Every step as a link (its action as the hover title), one row per deal."""
    rows: dict[int, list[str]] = {}
    for i, st in enumerate(data["steps"]):
        deal = st["move_deal"]
        title = escape(st["action"] or "opening table", quote=True)
        cur = ' class="cur"' if i == k else ""
        rows.setdefault(deal, []).append(
            f'<a href="?step={i}" data-step="{i}" title="{title}"{cur}>{i}</a>'
        )
    # a deal's label jumps to its opening table: the first step showing that deal
    first: dict[int, int] = {}
    for i, st in enumerate(data["steps"]):
        first.setdefault(st["deal"], i)
    out = []
    for deal, links in sorted(rows.items()):
        at = first.get(deal, 0)
        jump = (
            f'<a class="dealjump" href="?step={at}" data-step="{at}" '
            f'title="the opening table of deal {deal}"><b>deal {deal}</b></a>'
        )
        out.append(f'<div class="deal" data-deal="{deal}">{jump} {"".join(links)}</div>')
    return "".join(out)


# -------------------------------------------------------------------- pages of a server


class StepsCache:
    """The replay steps of records already served, newest used kept, keyed by the match
    server that served them and the record id."""

    def __init__(self, kept: int = STEPS_KEPT) -> None:
        self.kept = kept
        self._steps: collections.OrderedDict[tuple[str, str], dict[str, Any]] = (
            collections.OrderedDict()
        )

    async def get(self, stub: Stub, record_id: str, server: str = "") -> dict[str, Any]:
        key = (server, record_id)
        if key in self._steps:
            self._steps.move_to_end(key)
            return self._steps[key]
        got = await stub.GetRecord(
            match_service_pb2.GetRecordRequest(record_id=record_id), timeout=RPC_TIMEOUT
        )
        data = replay_steps(got.record)
        self._steps[key] = data
        while len(self._steps) > self.kept:
            self._steps.popitem(last=False)
        return data


def error_json(exc: grpc.aio.AioRpcError) -> JSONResponse:
    return JSONResponse(
        {"error": f"{exc.code().name}: {exc.details()}"}, status_code=HTTP_OF.get(exc.code(), 502)
    )


def _step(request: Request, total: int) -> int:
    raw = request.query_params.get("step", "0")
    k = int(raw) if raw.isdigit() else 0
    return min(k, total - 1)


async def record_page(
    request: Request,
    stub: Stub,
    record_id: str,
    cache: StepsCache,
    *,
    server: str = "",
    boards_url: str | None = None,
    back: tuple[str, str] = ("/", "all matches"),
) -> Response:
    """A record's replay at ``?step=K``, every part drawn on the server; its script
    loads every step's board from ``boards_url``."""
    try:
        data = await cache.get(stub, record_id, server)
    except grpc.aio.AioRpcError as exc:
        body = (
            f'<h1>Replay: {escape(record_id)}</h1><p><a href="{escape(back[0])}">'
            f"{escape(back[1])}</a></p>"
            f'<p class="error" id="action">{escape(exc.code().name)}: '
            f"{escape(exc.details() or '')}</p>"
        )
        return HTMLResponse(
            pages.page("Cirulla replay", body), status_code=HTTP_OF.get(exc.code(), 502)
        )
    k = _step(request, len(data["steps"]))
    return HTMLResponse(
        pages.replay_page(
            record_id,
            k,
            len(data["steps"]),
            board(data, k),
            controls(data, k),
            timeline(data, k),
            boards_url=boards_url,
            back=back,
        )
    )


async def boards(stub: Stub, record_id: str, cache: StepsCache, server: str = "") -> Response:
    """Every step's board and controls, for the replay page's script."""
    try:
        data = await cache.get(stub, record_id, server)
    except grpc.aio.AioRpcError as exc:
        return error_json(exc)
    n = len(data["steps"])
    return JSONResponse(
        {
            "boards": [board(data, k) for k in range(n)],
            "controls": [controls(data, k) for k in range(n)],
        }
    )


async def live_page(
    stub: Stub,
    match_id: str,
    *,
    stream_url: str | None = None,
    back: tuple[str, str] = ("/", "all matches"),
) -> Response:
    """The live view's first state: the Spectate stream read up to its first view."""
    call = stub.Spectate(match_service_pb2.SpectateRequest(match_id=match_id))
    played: table.Played | None = None
    drawn = '<p class="muted">waiting for the first deal</p>'
    status = "connecting…"
    try:
        async with asyncio.timeout(5):
            async for msg in call:
                kind = msg.WhichOneof("body")
                if kind == "event":
                    if msg.event.WhichOneof("body") == "deal_started":
                        played = None
                    played = table.played_from_event(msg.event) or played
                elif kind == "view":
                    drawn = table.render(table.from_view(msg.view, played))
                    status = "watching"
                    break
                elif kind in ("match_result", "goodbye"):
                    status = "the match is over"
                    break
    except TimeoutError:
        pass
    except grpc.aio.AioRpcError as exc:
        code = HTTP_OF.get(exc.code(), 502)
        body = (
            f'<h1>Live: {escape(match_id)}</h1><p><a href="{escape(back[0])}">'
            f"{escape(back[1])}</a></p>"
            f'<p class="error" id="status">{escape(exc.code().name)}: '
            f"{escape(exc.details() or '')}</p>"
        )
        return HTMLResponse(pages.page("Cirulla live", body), status_code=code)
    finally:
        call.cancel()
    return HTMLResponse(pages.live_page(match_id, drawn, status, stream_url=stream_url, back=back))


def as_dict(message: Any) -> dict[str, Any]:
    return json_format.MessageToDict(
        message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )


def live_stream(
    stub: Stub, match_id: str, on_end: Callable[[], Any] | None = None
) -> StreamingResponse:
    """Server-Sent Events: every SpectateResponse of the match, as JSON; each view also
    as the table the server draws of it (``table_html``). ``on_end`` runs when the
    stream ends (closes a channel opened for it)."""
    call = stub.Spectate(match_service_pb2.SpectateRequest(match_id=match_id))

    async def events() -> AsyncIterator[str]:
        played: table.Played | None = None
        try:
            async for msg in call:
                out = as_dict(msg)
                kind = msg.WhichOneof("body")
                if kind == "event":
                    if msg.event.WhichOneof("body") == "deal_started":
                        played = None
                    played = table.played_from_event(msg.event) or played
                elif kind == "view":
                    out["table_html"] = table.render(table.from_view(msg.view, played))
                yield f"data: {json.dumps(out, separators=(',', ':'))}\n\n"
        except grpc.aio.AioRpcError as exc:
            if exc.code() != grpc.StatusCode.CANCELLED:
                err = {"error": f"{exc.code().name}: {exc.details()}"}
                yield f"data: {json.dumps(err)}\n\n"
        finally:
            call.cancel()
            if on_end is not None:
                done = on_end()
                if asyncio.iscoroutine(done):
                    await done
        yield 'data: {"end": true}\n\n'

    return StreamingResponse(
        events(),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )
