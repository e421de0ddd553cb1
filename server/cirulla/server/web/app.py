"""Routes of the web view, and running it beside the gRPC server on one event loop.

Every route is a call of the public MatchService on the server's own port, without the
admin token: what the server would not show a spectator, the web view cannot show.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

import grpc
import uvicorn
from google.protobuf import json_format
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from cirulla.server.web import pages
from cirulla.server.web.steps import replay_steps
from cirulla.v1 import match_pb2, match_service_pb2, match_service_pb2_grpc

log = logging.getLogger("cirulla.server.web")
RPC_TIMEOUT = 10.0
_STATUS = {
    match_pb2.MATCH_STATUS_WAITING: "waiting",
    match_pb2.MATCH_STATUS_IN_PROGRESS: "in progress",
    match_pb2.MATCH_STATUS_FINISHED: "finished",
    match_pb2.MATCH_STATUS_ABORTED: "aborted",
}
_HTTP = {
    grpc.StatusCode.NOT_FOUND: 404,
    grpc.StatusCode.FAILED_PRECONDITION: 409,
    grpc.StatusCode.INVALID_ARGUMENT: 400,
    grpc.StatusCode.PERMISSION_DENIED: 403,
}


def as_dict(message: Any) -> dict[str, Any]:
    return json_format.MessageToDict(
        message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )


def _error(exc: grpc.aio.AioRpcError) -> JSONResponse:
    return JSONResponse(
        {"error": f"{exc.code().name}: {exc.details()}"}, status_code=_HTTP.get(exc.code(), 502)
    )


def build_app(grpc_target: str, ladder_db: str | None = None) -> Starlette:
    """The ASGI app; ``grpc_target`` is the match server to ask (its own port).

    With ``ladder_db`` (a ladder database URL or file) the /ladder page is added.
    """
    channel: grpc.aio.Channel | None = None

    def stub() -> match_service_pb2_grpc.MatchServiceStub:
        nonlocal channel
        if channel is None:
            channel = grpc.aio.insecure_channel(grpc_target)
        return match_service_pb2_grpc.MatchServiceStub(channel)

    async def index(_request: Request) -> Response:
        return HTMLResponse(pages.INDEX)

    async def match_page(_request: Request) -> Response:
        return HTMLResponse(pages.LIVE)

    async def record_page(_request: Request) -> Response:
        return HTMLResponse(pages.REPLAY)

    async def api_matches(_request: Request) -> Response:
        try:
            listed = await stub().ListMatches(
                match_service_pb2.ListMatchesRequest(page_size=100), timeout=RPC_TIMEOUT
            )
            recs = await stub().ListRecords(
                match_service_pb2.ListRecordsRequest(page_size=200), timeout=RPC_TIMEOUT
            )
        except grpc.aio.AioRpcError as exc:
            return _error(exc)
        by_match: dict[str, list[str]] = {}
        for r in recs.records:
            by_match.setdefault(r.match_id, []).append(r.record_id)
        out = []
        for m in listed.matches:
            games_won = "-".join(str(n) for n in m.result.games_won)
            out.append(
                {
                    "match_id": m.match_id,
                    "status": _STATUS.get(m.status, "unknown"),
                    "players": [s.name or f"seat {s.seat}" for s in m.seats],
                    "current_game": m.current_game,
                    "games_won": games_won,
                    "created": m.create_time.ToJsonString() if m.HasField("create_time") else "",
                    "records": sorted(by_match.get(m.match_id, [])),
                }
            )
        return JSONResponse({"matches": out})

    async def api_steps(request: Request) -> Response:
        record_id = request.path_params["record_id"]
        try:
            got = await stub().GetRecord(
                match_service_pb2.GetRecordRequest(record_id=record_id), timeout=RPC_TIMEOUT
            )
        except grpc.aio.AioRpcError as exc:
            return _error(exc)
        try:
            return JSONResponse(replay_steps(got.record))
        except ValueError as exc:
            return JSONResponse({"error": f"record {record_id}: {exc}"}, status_code=500)

    async def api_stream(request: Request) -> Response:
        """Server-Sent Events: every SpectateResponse of the match, as JSON."""
        match_id = request.path_params["match_id"]
        call = stub().Spectate(match_service_pb2.SpectateRequest(match_id=match_id))

        async def events() -> AsyncIterator[str]:
            try:
                async for msg in call:
                    yield f"data: {json.dumps(as_dict(msg), separators=(',', ':'))}\n\n"
            except grpc.aio.AioRpcError as exc:
                if exc.code() != grpc.StatusCode.CANCELLED:
                    err = {"error": f"{exc.code().name}: {exc.details()}"}
                    yield f"data: {json.dumps(err)}\n\n"
            finally:
                call.cancel()
            yield 'data: {"end": true}\n\n'

        return StreamingResponse(
            events(),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        )

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        yield
        if channel is not None:
            await channel.close(grace=None)

    extra: list[Route] = []
    if ladder_db:
        from cirulla.server.web.ladder import ladder_routes

        extra = ladder_routes(ladder_db)
    return Starlette(
        routes=[
            *extra,
            Route("/", index),
            Route("/matches/{match_id}", match_page),
            Route("/records/{record_id}", record_page),
            Route("/api/matches", api_matches),
            Route("/api/matches/{match_id}/stream", api_stream),
            Route("/api/records/{record_id}/steps", api_steps),
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
    listen: str, grpc_target: str, ladder_db: str | None = None, *, ladder: str | None = None
) -> WebServer:
    """Serve the web view on ``listen`` (port 0 picks one) in the running event loop."""
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
        build_app(grpc_target, ladder_db), log_level="warning", access_log=False, lifespan="on"
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
