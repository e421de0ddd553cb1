"""A ladder match's replays and live view (``/ladder/matches/ID/records/RECORD``,
``/ladder/matches/ID/live``), read from the match server hosting it, which may be another
worker's (``LadderReader.server_of``): the replay and live pages of ``replay`` and
``live``, with a link back to the ladder match. A withheld duplicate twin's are refused
here before its match server is asked (which refuses them too)."""

from __future__ import annotations

from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from cirulla.server.web import live as live_view
from cirulla.server.web import replay as replay_view
from cirulla.server.web.ladder.reader import LadderReader, Match
from cirulla.server.web.ladder.views import guarded


def refused(m: Match, what: str, record_id: str = "") -> tuple[int, str] | None:
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


def back_to(m: Match) -> tuple[str, str]:
    return f"/ladder/matches/{quote(m.match_id, safe='')}", f"ladder match {m.match_id}"


def refusal_page(title: str, code: int, line: str, m: Match) -> Response:
    return replay_view.message_page(title, title, line, code, back=back_to(m), line_id="action")


def routes(reader: LadderReader) -> list[Route]:
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
        return await live_view.live_page(
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
        return live_view.live_stream(stub, m.server_match_id, on_end)

    return [
        Route("/ladder/matches/{match_id}/records/{record_id}", guarded("Replay", replay)),
        Route(
            "/ladder/matches/{match_id}/records/{record_id}/boards",
            guarded("Replay", replay_boards),
        ),
        Route("/ladder/matches/{match_id}/live", guarded("Live", live)),
        Route("/ladder/matches/{match_id}/live/stream", guarded("Live", live_stream)),
    ]
