"""The gRPC servicer: thin async methods named as in ``MatchService``.

Each method decodes the request (``convert``), calls the hub or a session, and encodes
the answer; errors become a status through ``errors.status_for``, the one mapping.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import grpc

from cirulla.rules import CirullaError
from cirulla.server import convert
from cirulla.server.errors import FailedPrecondition, InvalidArgument, NotFound, ServerError
from cirulla.server.errors import status_for as status_for
from cirulla.server.hub import Hub, record_summary
from cirulla.server.messages import CommandListMsg, GoodbyeMsg
from cirulla.server.session import Connection
from cirulla.v1 import match_pb2, match_service_pb2, match_service_pb2_grpc

log = logging.getLogger("cirulla.server")
T = TypeVar("T")
DEFAULT_PAGE = 100


def _guard(
    method: Callable[..., Awaitable[T]],
) -> Callable[..., Awaitable[T]]:
    """Turn domain and rules errors into a gRPC status with a clear message."""

    @functools.wraps(method)
    async def wrapper(self: Any, request: Any, context: grpc.aio.ServicerContext) -> T:
        try:
            return await method(self, request, context)
        except (ServerError, CirullaError) as exc:
            await context.abort(status_for(exc), str(exc))
            raise  # unreachable: abort raises

    return wrapper


def _metadata(context: grpc.aio.ServicerContext) -> dict[str, str]:
    return {k.lower(): v for k, v in (context.invocation_metadata() or ()) if isinstance(v, str)}


def _page(token: str) -> int:
    if not token:
        return 0
    if not token.isdigit():
        raise InvalidArgument(f"page_token {token!r} is not one this server issued")
    return int(token)


class MatchService(match_service_pb2_grpc.MatchServiceServicer):
    def __init__(self, hub: Hub) -> None:
        self.hub = hub

    @_guard
    async def CreateMatch(self, request: Any, context: grpc.aio.ServicerContext) -> Any:
        self.hub.check_admin(_metadata(context))
        config = convert.config_from_pb(request.settings)
        session = self.hub.create_match(
            config, deal_group=request.deal_group, deal_group_size=request.deal_group_size
        )
        return match_service_pb2.CreateMatchResponse(
            match=convert.match_pb(session.summary()),
            seat_tokens=[
                match_pb2.SeatToken(seat=i, token=t) for i, t in enumerate(session.tokens)
            ],
        )

    @_guard
    async def CreateRoom(self, request: Any, context: grpc.aio.ServicerContext) -> Any:
        self.hub.check_admin(_metadata(context))
        config = convert.config_from_pb(request.settings)
        room = self.hub.create_room(request.display_name, config)
        return match_service_pb2.CreateRoomResponse(
            room=convert.room_pb(room.summary()),
            seat_tokens=[match_pb2.SeatToken(seat=i, token=t) for i, t in enumerate(room.tokens)],
        )

    @_guard
    async def GetMatch(self, request: Any, context: grpc.aio.ServicerContext) -> Any:
        return match_service_pb2.GetMatchResponse(
            match=convert.match_pb(self.hub.match_summary(request.match_id))
        )

    @_guard
    async def ListMatches(self, request: Any, context: grpc.aio.ServicerContext) -> Any:
        status = {1: "waiting", 2: "in_progress", 3: "finished", 4: "aborted"}.get(
            request.status, ""
        )
        size = request.page_size or DEFAULT_PAGE
        offset = _page(request.page_token)
        rows = self.hub.store.list_matches(status=status, limit=size + 1, offset=offset)
        more = len(rows) > size
        return match_service_pb2.ListMatchesResponse(
            matches=[convert.match_pb(r) for r in rows[:size]],
            next_page_token=str(offset + size) if more else "",
        )

    @_guard
    async def GetRoom(self, request: Any, context: grpc.aio.ServicerContext) -> Any:
        return match_service_pb2.GetRoomResponse(
            room=convert.room_pb(self.hub.room(request.room_id).summary())
        )

    @_guard
    async def ListRooms(self, request: Any, context: grpc.aio.ServicerContext) -> Any:
        size = request.page_size or DEFAULT_PAGE
        offset = _page(request.page_token)
        rooms = list(self.hub.rooms.values())[::-1]
        page = rooms[offset : offset + size]
        return match_service_pb2.ListRoomsResponse(
            rooms=[convert.room_pb(r.summary()) for r in page],
            next_page_token=str(offset + size) if offset + size < len(rooms) else "",
        )

    @_guard
    async def ListRecords(self, request: Any, context: grpc.aio.ServicerContext) -> Any:
        size = request.page_size or DEFAULT_PAGE
        offset = _page(request.page_token)
        rows = self.hub.store.list_records(
            match_id=request.match_id, room_id=request.room_id, limit=size + 1, offset=offset
        )
        # Records of an open deal group are left out (the page may come out short).
        admin = self.hub.is_admin(_metadata(context))
        shown = [r for r in rows[:size] if admin or not self.hub.record_withheld(r)]
        return match_service_pb2.ListRecordsResponse(
            records=[convert.game_summary_pb(record_summary(r)) for r in shown],
            next_page_token=str(offset + size) if len(rows) > size else "",
        )

    @_guard
    async def GetRecord(self, request: Any, context: grpc.aio.ServicerContext) -> Any:
        match_id, _, game = request.record_id.rpartition("-g")
        session = self.hub.matches.get(match_id)
        if session is not None:
            session.settle()  # a move still being delivered may finish the game
        record = self.hub.store.get_record(request.record_id)
        if record is None:
            if session is not None and game.isdigit() and int(game) <= len(session.runs):
                raise FailedPrecondition(
                    f"game {game} of match {match_id} is not finished; its record (which shows "
                    "every hand) is available once it is"
                )
            raise NotFound(f"no record {request.record_id!r}")
        self.hub.check_record_readable(record, _metadata(context))
        return match_service_pb2.GetRecordResponse(record=convert.record_pb(record))

    @_guard
    async def AbortMatch(self, request: Any, context: grpc.aio.ServicerContext) -> Any:
        self.hub.check_admin(_metadata(context))
        summary = self.hub.abort_match(request.match_id, request.reason)
        return match_service_pb2.AbortMatchResponse(match=convert.match_pb(summary))

    # ------------------------------------------------------------------ streams

    async def Play(
        self, request_iterator: AsyncIterator[Any], context: grpc.aio.ServicerContext
    ) -> AsyncIterator[Any]:
        requests = request_iterator.__aiter__()
        try:
            first = await requests.__anext__()
        except StopAsyncIteration:
            return
        if first.WhichOneof("body") != "hello":
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT,
                "the first PlayRequest must be hello (protocol_version, match_id or room_id, "
                f"seat_token); got {first.WhichOneof('body') or 'an empty body'}",
            )
        hello = first.hello
        conn = Connection()
        try:
            self.hub.join(
                conn,
                protocol_version=hello.protocol_version,
                match_id=hello.match_id,
                room_id=hello.room_id,
                token=hello.seat_token,
                name=hello.name,
                version=hello.version,
                resume=hello.resume.last_event_sequence if hello.HasField("resume") else None,
            )
        except (ServerError, CirullaError) as exc:
            await context.abort(status_for(exc), str(exc))
        reader = asyncio.create_task(self._read(requests, conn))
        protocol_error = ""
        try:
            while True:
                msg = await conn.queue.get()
                players = conn.session.options.players if conn.session is not None else 2
                yield convert.play_response(msg, players)
                if isinstance(msg, GoodbyeMsg):
                    if msg.reason == "protocol_error":
                        protocol_error = msg.message
                    break
        finally:
            reader.cancel()
            self.hub.leave(conn, quit=conn.quit)
        if protocol_error:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, protocol_error)

    async def _read(self, requests: AsyncIterator[Any], conn: Connection) -> None:
        with contextlib.suppress(asyncio.CancelledError, grpc.RpcError):
            async for req in requests:
                kind = req.WhichOneof("body")
                if kind == "submit_action":
                    sa = req.submit_action
                    session = conn.session
                    if session is not None:
                        session.submit(conn, sa.decision_id, convert.choice_from_pb(sa))
                elif kind == "list_commands":
                    conn.send(CommandListMsg(convert.CAPABILITIES))
                elif kind == "quit":
                    conn.quit = True
                    conn.close("client_quit", req.quit.reason or "client quit")
                    return
                elif kind == "hello":
                    conn.close("protocol_error", "a second hello on the same Play stream")
                    return
                else:
                    conn.close(
                        "protocol_error",
                        "PlayRequest.body is empty: set hello, submit_action, list_commands "
                        "or quit",
                    )
                    return

    async def Spectate(self, request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
        conn = Connection(None)
        target = request.WhichOneof("target")
        if target is None:
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT, "SpectateRequest needs match_id or room_id"
            )
        try:
            self.hub.spectate(
                conn,
                match_id=request.match_id,
                room_id=request.room_id,
                after=request.after_sequence,
                metadata=_metadata(context),
            )
        except ServerError as exc:
            await context.abort(status_for(exc), str(exc))
        try:
            while True:
                msg = await conn.queue.get()
                players = conn.session.options.players if conn.session is not None else 2
                out = convert.spectate_response(msg, players)
                if out is not None:
                    yield out
                if isinstance(msg, GoodbyeMsg):
                    break
        finally:
            self.hub.leave(conn)
