"""The replay page's parts for one step: board (last action, table, scores), controls and
the timeline of every move grouped by deal. Rendered on the server for the page's first
state and, all steps at once, for the script that steps through them.

Also the replay page itself as read from *a* match server's MatchService (``record_page``,
``boards``; the live view is ``live``): the web view's own server (``/records/ID``) and
the server hosting a ladder match, which may be another worker's
(``/ladder/matches/ID/records/...``), are drawn by the same code. Each is a public client
call without the admin token, so a record the match server refuses (a withheld duplicate
twin's) is refused on the page too. The markup is ``templates/replay*.html``.
"""

from __future__ import annotations

import collections
from dataclasses import dataclass
from urllib.parse import quote

import grpc
from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response

from cirulla.rules.scoring import SCORE_ITEMS
from cirulla.server.web import table, templating
from cirulla.server.web.steps import Replay, ScoreInfo, SeatInfo, replay_steps
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


@dataclass(frozen=True)
class ScoreRow:
    side: int
    names: str
    cells: list[int]
    total: int


@dataclass(frozen=True)
class DealScoreView:
    deal: int
    rows: list[ScoreRow]
    totals: list[int]


def score_view(score: ScoreInfo, seats: list[SeatInfo]) -> DealScoreView:
    rows = []
    for side, s in enumerate(score["sides"]):
        names = ", ".join(
            f"seat {q['seat']}" + (f" {q['name']}" if q["name"] else "")
            for q in seats
            if q["side"] == side
        )
        cells = [s[k] for k in SCORE_ITEMS]
        rows.append(ScoreRow(side, names, cells, s["total"]))
    return DealScoreView(score["deal"], rows, score["totals"])


def board(data: Replay, k: int) -> Markup:
    """Step ``k``'s board (``replay_board.html``)."""
    steps = data["steps"]
    st = steps[k]
    return templating.render(
        "replay_board.html",
        action=st["action"] if k else "Opening table of deal 1",
        log=st["log"],
        table=table.render(table.from_step(st, data["seats"])),
        items=SCORE_ITEMS,
        scores=[score_view(s["score"], data["seats"]) for s in steps[: k + 1] if s["score"]],
        result=data["result"] if k == len(steps) - 1 else None,
    )


def controls(data: Replay, k: int) -> Markup:
    n = len(data["steps"]) - 1
    return templating.render(
        "replay_controls.html",
        step=k,
        prev=max(k - 1, 0),
        next=min(k + 1, n),
        last=n,
        deal=data["steps"][k]["deal"],
    )


@dataclass(frozen=True)
class TimelineRow:
    """One deal's steps (index and action), and the step of its opening table."""

    deal: int
    at: int
    steps: list[tuple[int, str]]


def timeline(data: Replay, k: int) -> Markup:
    """Every step as a link (its action as the hover title), one row per deal."""
    rows: dict[int, list[tuple[int, str]]] = {}
    for i, st in enumerate(data["steps"]):
        rows.setdefault(st["move_deal"], []).append((i, st["action"] or "opening table"))
    # a deal's label jumps to its opening table: the first step showing that deal
    first: dict[int, int] = {}
    for i, st in enumerate(data["steps"]):
        first.setdefault(st["deal"], i)
    view = [TimelineRow(deal, first.get(deal, 0), steps) for deal, steps in sorted(rows.items())]
    return templating.render("replay_timeline.html", rows=view, step=k)


# -------------------------------------------------------------------- pages of a server


class StepsCache:
    """The replay steps of records already served, newest used kept, keyed by the match
    server that served them and the record id."""

    def __init__(self, kept: int = STEPS_KEPT) -> None:
        self.kept = kept
        self._steps: collections.OrderedDict[tuple[str, str], Replay] = collections.OrderedDict()

    async def get(self, stub: Stub, record_id: str, server: str = "") -> Replay:
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


def rpc_error(exc: grpc.aio.AioRpcError) -> str:
    """An rpc's refusal in one line: its status code's name and its details."""
    return f"{exc.code().name}: {exc.details() or ''}"


def error_json(exc: grpc.aio.AioRpcError) -> JSONResponse:
    return JSONResponse(
        {"error": f"{exc.code().name}: {exc.details()}"}, status_code=HTTP_OF.get(exc.code(), 502)
    )


def message_page(
    title: str,
    heading: str,
    line: str,
    status_code: int,
    *,
    back: tuple[str, str] | None = None,
    line_id: str = "",
    error: bool = True,
) -> HTMLResponse:
    """A page of one line (``message.html``; an error unless ``error`` is false) under
    ``heading`` (none when empty), linking ``back``."""
    return templating.page(
        "message.html",
        status_code,
        title=title,
        heading=heading,
        back=back,
        line=line,
        line_id=line_id,
        error=error,
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
    loads every step's board from ``boards_url`` (by default this server's own)."""
    try:
        data = await cache.get(stub, record_id, server)
    except grpc.aio.AioRpcError as exc:
        status = HTTP_OF.get(exc.code(), 502)
        heading = f"Replay: {record_id}"
        return message_page(
            "Cirulla replay", heading, rpc_error(exc), status, back=back, line_id="action"
        )
    k = _step(request, len(data["steps"]))
    return templating.page(
        "replay.html",
        title="Cirulla replay",
        record_id=record_id,
        back=back,
        step=k,
        steps=len(data["steps"]),
        controls=controls(data, k),
        board=board(data, k),
        timeline=timeline(data, k),
        boards_url=boards_url or f"/api/records/{quote(record_id, safe='')}/boards",
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
