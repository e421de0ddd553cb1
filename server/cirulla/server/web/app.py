"""Routes of the web view, and running it beside the gRPC server on one event loop.

Every route is a call of the public MatchService on the server's own port, without the
admin token: what the server would not show a spectator, the web view cannot show. The
match list is ``templates/index.html``; the replay and live pages are ``replay`` and
``live``, the ladder's pages ``ladder/``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import AsyncIterator, Collection, Iterator
from dataclasses import dataclass
from typing import TypedDict

import grpc
import uvicorn
from markupsafe import Markup
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from cirulla.server.web import live as live_view
from cirulla.server.web import replay as replay_view
from cirulla.server.web import templating
from cirulla.server.web.ladder.reader import LadderReader
from cirulla.server.web.ladder.routes import ladder_routes
from cirulla.v1 import match_pb2, match_service_pb2, match_service_pb2_grpc

log = logging.getLogger("cirulla.server.web")
RPC_TIMEOUT = 10.0
_STATUS = {
    match_pb2.MATCH_STATUS_WAITING: "waiting",
    match_pb2.MATCH_STATUS_IN_PROGRESS: "in progress",
    match_pb2.MATCH_STATUS_FINISHED: "finished",
    match_pb2.MATCH_STATUS_ABORTED: "aborted",
}
#: one mapping of gRPC errors to HTTP statuses and JSON errors (``replay``'s)
_error = replay_view.error_json


class MatchRow(TypedDict):
    """One match of the list, as /api/matches gives it and index_rows.html draws it."""

    match_id: str
    status: str
    players: list[str]
    current_game: int
    games_won: str
    created: str
    records: list[str]


def _index_rows(matches: list[MatchRow], error: str = "") -> Markup:
    """The match list's rows (the same markup the page's script refreshes them with)."""
    return templating.render("index_rows.html", matches=matches, error=error)


def build_app(
    grpc_target: str,
    ladder: str | None = None,
    *,
    ladder_local: Collection[str] = (),
    ladder_tls_ca: bytes | None = None,
) -> Starlette:
    """The ASGI app; ``grpc_target`` is the match server to ask (its own port).

    With ``ladder`` (the address of a LadderService, e.g. the ladder's own port) the
    ladder's pages are added under /ladder (``cirulla.server.web.ladder``). A ladder
    match hosted at an address in ``ladder_local`` is read from ``grpc_target``; one
    hosted elsewhere (another worker's match server) from that server, over TLS checked
    against ``ladder_tls_ca`` when given, else plaintext.
    """
    channel: grpc.aio.Channel | None = None
    #: replay steps of records already served (a served record never changes)
    steps_cache = replay_view.StepsCache()

    def stub() -> match_service_pb2_grpc.MatchServiceStub:
        nonlocal channel
        if channel is None:
            channel = grpc.aio.insecure_channel(grpc_target)
        return match_service_pb2_grpc.MatchServiceStub(channel)

    async def list_matches() -> list[MatchRow]:
        listed = await stub().ListMatches(
            match_service_pb2.ListMatchesRequest(page_size=100), timeout=RPC_TIMEOUT
        )
        recs = await stub().ListRecords(
            match_service_pb2.ListRecordsRequest(page_size=200), timeout=RPC_TIMEOUT
        )
        by_match: dict[str, list[str]] = {}
        for r in recs.records:
            by_match.setdefault(r.match_id, []).append(r.record_id)
        out: list[MatchRow] = []
        for m in listed.matches:
            out.append(
                {
                    "match_id": m.match_id,
                    "status": _STATUS.get(m.status, "unknown"),
                    "players": [s.name or f"seat {s.seat}" for s in m.seats],
                    "current_game": m.current_game,
                    "games_won": "-".join(str(n) for n in m.result.games_won),
                    "created": m.create_time.ToJsonString() if m.HasField("create_time") else "",
                    "records": sorted(by_match.get(m.match_id, [])),
                }
            )
        return out

    async def index(_request: Request) -> Response:
        try:
            rows = _index_rows(await list_matches())
        except grpc.aio.AioRpcError as exc:
            rows = _index_rows([], f"{exc.code().name}: {exc.details()}")
        return templating.page("index.html", title="Cirulla matches", rows=rows, ladder=ladder)

    async def match_page(request: Request) -> Response:
        return await live_view.live_page(stub(), request.path_params["match_id"])

    async def record_page(request: Request) -> Response:
        record_id = request.path_params["record_id"]
        return await replay_view.record_page(request, stub(), record_id, steps_cache)

    async def api_matches(_request: Request) -> Response:
        try:
            out = await list_matches()
        except grpc.aio.AioRpcError as exc:
            return _error(exc)
        return JSONResponse({"matches": out, "rows_html": _index_rows(out)})

    async def api_steps(request: Request) -> Response:
        record_id = request.path_params["record_id"]
        try:
            return JSONResponse(await steps_cache.get(stub(), record_id))
        except grpc.aio.AioRpcError as exc:
            return _error(exc)
        except ValueError as exc:
            return JSONResponse({"error": f"record {record_id}: {exc}"}, status_code=500)

    async def api_boards(request: Request) -> Response:
        """Every step's board and controls, for the replay page's script."""
        return await replay_view.boards(stub(), request.path_params["record_id"], steps_cache)

    async def api_stream(request: Request) -> Response:
        """Server-Sent Events of the match's Spectate stream (``live.live_stream``)."""
        return live_view.live_stream(stub(), request.path_params["match_id"])

    reader = None
    extra: list[Route] = []
    if ladder:
        reader = LadderReader(ladder, grpc_target, local=ladder_local, tls_ca=ladder_tls_ca)
        extra = ladder_routes(reader)

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        yield
        if channel is not None:
            await channel.close(grace=None)
        if reader is not None:
            await reader.close()

    return Starlette(
        routes=[
            *extra,
            Route("/", index),
            Route("/matches/{match_id}", match_page),
            Route("/records/{record_id}", record_page),
            Route("/api/matches", api_matches),
            Route("/api/matches/{match_id}/stream", api_stream),
            Route("/api/records/{record_id}/steps", api_steps),
            Route("/api/records/{record_id}/boards", api_boards),
        ],
        lifespan=lifespan,
    )


class _Uvicorn(uvicorn.Server):
    """uvicorn without its own signal handling: the gRPC server's ``serve`` owns SIGINT
    and SIGTERM and stops both servers."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield

    def install_signal_handlers(self) -> None:
        return None


@dataclass
class WebServer:
    server: _Uvicorn
    task: asyncio.Task[None]
    port: int

    async def stop(self) -> None:
        self.server.should_exit = True
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait_for(self.task, 5)


def parse_listen(listen: str) -> tuple[str, int]:
    host, sep, port = listen.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ValueError(f"--http: {listen!r} is not HOST:PORT")
    return host.strip("[]"), int(port)


async def start_web(
    listen: str,
    grpc_target: str,
    ladder: str | None = None,
    *,
    ladder_local: Collection[str] = (),
    ladder_tls_ca: bytes | None = None,
) -> WebServer:
    """Serve the web view on ``listen`` (port 0 picks one) in the running event loop
    (the ladder's arguments: ``build_app``)."""
    host, port = parse_listen(listen)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise OSError(f"--http: cannot listen on {listen}: {exc.strerror}") from None
    sock.listen(128)
    sock.setblocking(False)
    config = uvicorn.Config(
        build_app(grpc_target, ladder, ladder_local=ladder_local, ladder_tls_ca=ladder_tls_ca),
        log_level="warning",
        access_log=False,
        lifespan="on",
    )
    server = _Uvicorn(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started and not task.done():
        await asyncio.sleep(0.01)
    if task.done():
        task.result()
        raise OSError(f"--http: the web server did not start on {listen}")
    bound = sock.getsockname()[1]
    log.info("web_started listen=%s port=%d", listen, bound)
    return WebServer(server, task, bound)
