"""The gRPC servicer: thin async methods named as in ``MatchService``.

Each method decodes the request (``convert``), calls the hub or a session, and encodes
the answer; errors become a status through ``errors.status_for``, the one mapping.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

import grpc
from google.protobuf.message import DecodeError, Message
from google.protobuf.message_factory import GetMessageClass

from cirulla.rules import CirullaError
from cirulla.rules.cards import NUM_CARDS
from cirulla.server.connections import Connection, Mailbox
from cirulla.server.convert import framing
from cirulla.server.convert.live import CAPABILITIES, play_responses, spectate_response
from cirulla.server.convert.recordframing import record_response
from cirulla.server.convert.records import game_summary_pb, match_pb, record_pb, room_pb
from cirulla.server.convert.settings import choice_from_pb, config_from_pb
from cirulla.server.decisions import ByIndex, Choice, Unreadable
from cirulla.server.documents import record_summary
from cirulla.server.errors import (
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    ServerError,
)
from cirulla.server.errors import status_for as status_for
from cirulla.server.hub import Hub
from cirulla.server.limits import (
    MAX_BATCH,
    MAX_ID,
    MAX_NOTATION,
    MAX_QUIT_REASON,
    check_text,
    page_offset,
)
from cirulla.server.messages import CommandListMsg, GoodbyeMsg
from cirulla.server.recordkeeping import finished_run
from cirulla.v1 import match_pb2, match_service_pb2, match_service_pb2_grpc, play_pb2
from cirulla.v1 import match_service_pb2 as ms

#: A servicer method's context, typed by its request and response (grpc's stubs).
Context = grpc.aio.ServicerContext

log = logging.getLogger("cirulla.server")
#: A unary method's request and response messages.
Req = TypeVar("Req", bound=Message)
Resp = TypeVar("Resp", bound=Message)
#: What a unary method returns: its response message, or that message serialized
#: (``_serializer`` sends bytes as they are: GetRecord's ``record_response``).
Out = TypeVar("Out")
#: Any call's request and response (a stream's responses are bytes: ``_serializer``).
Q = TypeVar("Q")
R = TypeVar("R")
SERVICE = match_service_pb2.DESCRIPTOR.services_by_name["MatchService"]


@dataclass(frozen=True, slots=True)
class Undecodable:
    """A request frame that is not a valid message of its type (bad wire data or UTF-8).

    gRPC's own answer to a frame its deserializer cannot read is UNKNOWN on a unary call
    and a silently dropped message on a stream; decoding into this marker lets the
    servicer answer INVALID_ARGUMENT, and end a Play stream with a status.
    """

    type_name: str
    size: int

    def message(self) -> str:
        return f"a {self.size}-byte request frame is not a valid {self.type_name}"


def _lenient(cls: type[Req]) -> Callable[[bytes], Req | Undecodable]:
    def parse(data: bytes) -> Req | Undecodable:
        try:
            return cls.FromString(data)
        except DecodeError:
            return Undecodable(cls.DESCRIPTOR.full_name, len(data))

    return parse


def _serializer(cls: type[Message]) -> Callable[[Message | bytes], bytes]:
    """Messages are serialized here; bytes were serialized already. (Play, whose messages
    are all bytes, whose shared parts are encoded once for every seat, has no
    serializer: gRPC sends them as they are.)"""

    def serialize(message: Message | bytes) -> bytes:
        return message if isinstance(message, bytes) else cls.SerializeToString(message)

    return serialize


#: A Play stream's request: a PlayRequest, an undecodable frame, or a SubmitAction by
#: index read without protobuf (``_play_request``): (decision_id, legal_action_index).
PlayIn = ms.PlayRequest | Undecodable | tuple[int, int]


def _play_request(data: bytes) -> PlayIn:
    """A Play request frame: the SubmitAction by index a bot sends at every decision read
    natively as (decision_id, index) (``framing.submit_index``: no protobuf objects, two
    fields and two WhichOneof fewer to read), any other frame by protobuf (``_lenient``)."""
    fast = framing.submit_index(data)
    return _read_play_request(data) if fast is None else fast


_read_play_request = _lenient(ms.PlayRequest)

#: Play's request deserializer: ``_play_request`` in one native call when the writer is
#: built (no Python frame for the frame a bot sends at every decision).
_play_deserializer = framing.play_deserializer(_read_play_request)


def add_to_server(servicer: MatchService, server: grpc.aio.Server) -> None:
    """Register the servicer like the generated ``add_..._to_server``, with lenient
    request decoding (``Undecodable``)."""
    factories = {
        (False, False): grpc.unary_unary_rpc_method_handler,
        (False, True): grpc.unary_stream_rpc_method_handler,
        (True, False): grpc.stream_unary_rpc_method_handler,
        (True, True): grpc.stream_stream_rpc_method_handler,
    }
    handlers = {}
    for method in SERVICE.methods:
        factory = factories[(method.client_streaming, method.server_streaming)]
        play = method.name == "Play"
        read = _lenient(GetMessageClass(method.input_type))
        handlers[method.name] = factory(
            getattr(servicer, method.name),
            request_deserializer=_play_deserializer if play else read,
            # Play yields bytes only (``play_responses``): gRPC sends them as they are
            response_serializer=None if play else _serializer(GetMessageClass(method.output_type)),
        )
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(SERVICE.full_name, handlers),)
    )


def _observe(task: asyncio.Future[PlayIn]) -> None:
    """Mark ``task``'s exception as seen (whoever still awaits it gets it all the same)."""
    if not task.cancelled():
        task.exception()


#: ListMatchesRequest.status -> the stored status it selects ("" = any).
_LISTED_STATUS = {0: "", 1: "waiting", 2: "in_progress", 3: "finished", 4: "aborted"}


def _guard(
    method: Callable[[MatchService, Req, Context[Req, Resp]], Awaitable[Out]],
) -> Callable[[MatchService, Req | Undecodable, Context[Req, Resp]], Awaitable[Out]]:
    """Turn domain and rules errors into a gRPC status with a clear message."""

    @functools.wraps(method)
    async def wrapper(
        self: MatchService, request: Req | Undecodable, context: Context[Req, Resp]
    ) -> Out:
        try:
            if isinstance(request, Undecodable):
                self.hub.stats["undecodable_frames"] += 1
                raise InvalidArgument(request.message())
            return await method(self, request, context)
        except (ServerError, CirullaError) as exc:
            code, details = status_for(exc), str(exc)
        # Aborted out here, the request let go first: gRPC's abort error and the call's
        # state make a reference cycle, which the error raised in the handler (its
        # frames) would tie the request to, held until a full garbage collection (rare
        # in a server: app.tune_gc). Each refused 255 KB CreateMatch held ~0.5 MB.
        del request
        await context.abort(code, details)

    return wrapper


def _end(context: Context[Q, R], code: grpc.StatusCode, details: str) -> None:
    """End a streaming call with ``code`` and ``details`` (the handler returns next).
    Not with ``context.abort``: its error, the call's state and the handler's frames make
    a reference cycle, freed only by a full garbage collection (rare in a serving process:
    app.tune_gc): each refused or timed-out Play stream held ~11 KB until then (4,500
    took a server from 46 to 96 MiB)."""
    context.set_code(code)
    context.set_details(details)


def _choice(submit: play_pb2.SubmitAction) -> Choice:
    """The submitted choice; a notation over the limit is refused without decoding it."""
    kind = submit.WhichOneof("choice")
    if kind == "legal_action_index":  # what bots send: decoded here at once
        return ByIndex(submit.legal_action_index)
    if kind == "notation" and len(submit.notation) > MAX_NOTATION:
        return Unreadable(
            f"SubmitAction.notation has {len(submit.notation)} characters; "
            f"the limit is {MAX_NOTATION}"
        )
    return choice_from_pb(submit)


def _metadata(context: Context[Q, R]) -> dict[str, str]:
    return {k.lower(): v for k, v in (context.invocation_metadata() or ()) if isinstance(v, str)}


class MatchService(match_service_pb2_grpc.MatchServiceServicer):
    def __init__(self, hub: Hub) -> None:
        self.hub = hub

    @_guard
    async def CreateMatch(
        self,
        request: ms.CreateMatchRequest,
        context: Context[ms.CreateMatchRequest, ms.CreateMatchResponse],
    ) -> ms.CreateMatchResponse:
        self.hub.check_create(_metadata(context), context.peer())
        # over the deck budget: refused before the decks are decoded (create_match checks
        # the decoded ones again)
        self.hub.check_deck_cards(NUM_CARDS * len(request.settings.deck_orders.decks))
        config = config_from_pb(request.settings)
        session = self.hub.create_match(
            config, deal_group=request.deal_group, deal_group_size=request.deal_group_size
        )
        return match_service_pb2.CreateMatchResponse(
            match=match_pb(session.summary()),
            seat_tokens=[
                match_pb2.SeatToken(seat=i, token=t) for i, t in enumerate(session.tokens)
            ],
        )

    @_guard
    async def CreateRoom(
        self,
        request: ms.CreateRoomRequest,
        context: Context[ms.CreateRoomRequest, ms.CreateRoomResponse],
    ) -> ms.CreateRoomResponse:
        self.hub.check_create(_metadata(context), context.peer())
        config = config_from_pb(request.settings)
        room = self.hub.create_room(request.display_name, config)
        return match_service_pb2.CreateRoomResponse(
            room=room_pb(room.summary()),
            seat_tokens=[match_pb2.SeatToken(seat=i, token=t) for i, t in enumerate(room.tokens)],
        )

    @_guard
    async def GetMatch(
        self, request: ms.GetMatchRequest, context: Context[ms.GetMatchRequest, ms.GetMatchResponse]
    ) -> ms.GetMatchResponse:
        summary = self.hub.match_summary(request.match_id)
        self.hub.check_match_readable(_metadata(context), request.match_id, summary)
        return match_service_pb2.GetMatchResponse(match=match_pb(summary))

    @_guard
    async def ListMatches(
        self,
        request: ms.ListMatchesRequest,
        context: Context[ms.ListMatchesRequest, ms.ListMatchesResponse],
    ) -> ms.ListMatchesResponse:
        status = _LISTED_STATUS.get(request.status)
        if status is None:
            raise InvalidArgument(
                f"ListMatchesRequest.status: {request.status} is unknown (0 = any, "
                "1 = MATCH_STATUS_WAITING, 2 = IN_PROGRESS, 3 = FINISHED, 4 = ABORTED)"
            )
        size = self.hub.limits.page_size(request.page_size)
        offset = page_offset(request.page_token, "ListMatchesRequest.page_token")
        rows = self.hub.store.list_matches(status=status, limit=size + 1, offset=offset)
        more = len(rows) > size
        # Withheld twins are left out (the page may come out short), as in ListRecords.
        admin = self.hub.auth.is_admin(_metadata(context))
        shown = [r for r in rows[:size] if admin or not self.hub.auth.match_withheld(r)]
        return match_service_pb2.ListMatchesResponse(
            matches=[match_pb(r) for r in shown],
            next_page_token=str(offset + size) if more else "",
        )

    @_guard
    async def GetRoom(
        self, request: ms.GetRoomRequest, context: Context[ms.GetRoomRequest, ms.GetRoomResponse]
    ) -> ms.GetRoomResponse:
        await self.hub.records_written()  # the room's history lists written games
        return match_service_pb2.GetRoomResponse(
            room=room_pb(self.hub.room(request.room_id, "GetRoomRequest.room_id").summary())
        )

    @_guard
    async def ListRooms(
        self,
        request: ms.ListRoomsRequest,
        context: Context[ms.ListRoomsRequest, ms.ListRoomsResponse],
    ) -> ms.ListRoomsResponse:
        await self.hub.records_written()
        size = self.hub.limits.page_size(request.page_size)
        offset = page_offset(request.page_token, "ListRoomsRequest.page_token")
        rooms = list(self.hub.rooms.values())[::-1]
        page = rooms[offset : offset + size]
        return match_service_pb2.ListRoomsResponse(
            rooms=[room_pb(r.summary()) for r in page],
            next_page_token=str(offset + size) if offset + size < len(rooms) else "",
        )

    @_guard
    async def ListRecords(
        self,
        request: ms.ListRecordsRequest,
        context: Context[ms.ListRecordsRequest, ms.ListRecordsResponse],
    ) -> ms.ListRecordsResponse:
        size = self.hub.limits.page_size(request.page_size)
        offset = page_offset(request.page_token, "ListRecordsRequest.page_token")
        check_text(request.match_id, "ListRecordsRequest.match_id", MAX_ID)
        check_text(request.room_id, "ListRecordsRequest.room_id", MAX_ID)
        await self.hub.records_written()
        rows = self.hub.store.list_records(
            match_id=request.match_id,
            room_id=request.room_id,
            limit=size + 1,
            offset=offset,
            shells=True,  # a summary's fields: recent records' JSON not decoded
        )
        # Records of an open deal group are left out (the page may come out short).
        admin = self.hub.auth.is_admin(_metadata(context))
        shown = [r for r in rows[:size] if admin or not self.hub.auth.record_withheld(r)]
        return match_service_pb2.ListRecordsResponse(
            records=[game_summary_pb(record_summary(r)) for r in shown],
            next_page_token=str(offset + size) if len(rows) > size else "",
        )

    @_guard
    async def GetRecord(
        self,
        request: ms.GetRecordRequest,
        context: Context[ms.GetRecordRequest, ms.GetRecordResponse],
    ) -> ms.GetRecordResponse | bytes:
        check_text(request.record_id, "GetRecordRequest.record_id", MAX_ID)
        match_id, _, game = request.record_id.rpartition("-g")
        session = self.hub.matches.get(match_id)
        if session is not None:
            session.settle()  # a move still being delivered may finish the game
        await self.hub.records_written()
        run = finished_run(session.runs, request.record_id) if session is not None else None
        if run is not None:
            # The game is still in memory and the record is among those this process wrote
            # (recent): it is this run's, so its bytes are written from the run's events
            # as they were framed for the streams (``record_response``: the same bytes as
            # record_pb's), without decoding the record's JSON.
            shell = self.hub.store.record_shell(request.record_id)
            if shell is not None:
                self.hub.auth.check_record_readable(shell, _metadata(context))
                return record_response(shell, run.actions, run.events)
        record = self.hub.store.get_record(request.record_id)
        if record is None:
            # pruned first: a finished match stays in memory a while (--keep-finished), and
            # its pruned game is over, not "not finished"
            pruned = self.hub.store.pruned(request.record_id)
            if pruned:  # one line: gone by a retention policy, not never there
                raise NotFound(f"record {request.record_id!r}: {pruned}")
            if session is not None and game.isdigit() and int(game) <= len(session.runs):
                raise FailedPrecondition(
                    f"game {game} of match {match_id} is not finished; its record (which shows "
                    "every hand) is available once it is"
                )
            raise NotFound(f"no record {request.record_id!r}")
        self.hub.auth.check_record_readable(record, _metadata(context))
        return match_service_pb2.GetRecordResponse(record=record_pb(record))

    @_guard
    async def AbortMatch(
        self,
        request: ms.AbortMatchRequest,
        context: Context[ms.AbortMatchRequest, ms.AbortMatchResponse],
    ) -> ms.AbortMatchResponse:
        metadata = _metadata(context)
        self.hub.check_abort(metadata, request.match_id)
        self.hub.check_match_readable(metadata, request.match_id)  # its answer shows it
        summary = self.hub.abort_match(request.match_id, request.reason)
        return match_service_pb2.AbortMatchResponse(match=match_pb(summary))

    # ------------------------------------------------------------------ streams

    def _connection(self, seat: int | None = None) -> Connection:
        """A bounded stream whose overflow ends the call running this coroutine."""
        conn = Connection(seat, limit=self.hub.limits.stream_queue)
        task = asyncio.current_task()

        def overflow(conn: Connection) -> None:
            self.hub.stats["slow_consumers"] += 1
            session = conn.session
            log.warning(
                "slow_consumer match=%s seat=%s queued=%d: disconnected",
                session.match_id if session is not None else "-",
                conn.seat,
                conn.queue.qsize(),
            )
            conn.queue = Mailbox()  # drop what it never read
            if task is not None:
                task.cancel()

        conn.on_overflow = overflow
        return conn

    async def Play(
        self,
        request_iterator: AsyncIterator[PlayIn],
        context: Context[ms.PlayRequest, bytes],
    ) -> AsyncIterator[bytes]:
        requests = request_iterator.__aiter__()
        # Wait for hello without cancelling the read (a read cancelled inside gRPC may
        # end the call as CANCELLED instead of with the status below).
        read = asyncio.ensure_future(requests.__anext__())
        # A client that cancels before its hello cancels this coroutine, not the read,
        # which then fails unobserved (an ERROR log line per such stream): observe it.
        read.add_done_callback(_observe)
        done, _ = await asyncio.wait({read}, timeout=self.hub.limits.hello_timeout_s)
        if not done:
            self.hub.stats["hello_timeouts"] += 1
            log.info("hello_timeout peer=%s", context.peer())
            read.cancel()
            _end(
                context,
                grpc.StatusCode.DEADLINE_EXCEEDED,
                f"no hello within {self.hub.limits.hello_timeout_s:g} s of opening Play",
            )
            return
        try:
            first = read.result()
        except StopAsyncIteration:
            return
        if isinstance(first, Undecodable):
            self.hub.stats["undecodable_frames"] += 1
            _end(context, grpc.StatusCode.INVALID_ARGUMENT, first.message())
            return
        body = "submit_action" if isinstance(first, tuple) else first.WhichOneof("body")
        if body != "hello" or isinstance(first, tuple):
            _end(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                "the first PlayRequest must be hello (protocol_version, match_id or room_id, "
                f"seat_token); got {body or 'an empty body'}",
            )
            return
        hello = first.hello
        conn = self._connection()
        conn.batches = hello.accept_batches
        conn.defer = hello.accept_batches and hello.defer_events
        conn.auto_play_forced = hello.auto_play_forced
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
            _end(context, status_for(exc), str(exc))
            return
        reader = asyncio.create_task(self._read(requests, conn))
        protocol_error = ""
        try:
            while True:
                # What is ready now goes as one stream message (an action's acceptance,
                # its events, the next decision): each stream message costs far more
                # than its content. (A stream with defer_events has its events held
                # until such a message: ``Connection.send``.)
                msgs = await conn.queue.get_some(MAX_BATCH if conn.batches else 1)
                session = conn.session
                yield play_responses(msgs, session.options.players if session else 2)
                msg = msgs[-1]
                if type(msg) is GoodbyeMsg:
                    if msg.reason == "protocol_error":
                        protocol_error = msg.message
                    break
        finally:
            reader.cancel()
            self.hub.leave(conn, quit=conn.quit)
        if protocol_error:
            _end(context, grpc.StatusCode.INVALID_ARGUMENT, protocol_error)

    async def _read(self, requests: AsyncIterator[PlayIn], conn: Connection) -> None:
        try:
            async for req in requests:
                if isinstance(req, tuple):  # a SubmitAction by index (``_play_request``)
                    session = conn.session
                    if session is not None:
                        session.submit_index(conn, req[0], req[1])
                    continue
                if isinstance(req, Undecodable):
                    self._protocol_error(conn, req.message() + " (PlayRequest stream ended)")
                    self.hub.stats["undecodable_frames"] += 1
                    return
                kind = req.WhichOneof("body")
                if kind == "submit_action":
                    sa = req.submit_action
                    session = conn.session
                    if session is not None:
                        session.submit(conn, sa.decision_id, _choice(sa))
                elif kind == "list_commands":
                    conn.send(CommandListMsg(CAPABILITIES))
                elif kind == "quit":
                    conn.quit = True
                    reason = req.quit.reason[:MAX_QUIT_REASON]
                    conn.close("client_quit", reason or "client quit")
                    return
                elif kind == "hello":
                    self._protocol_error(conn, "a second hello on the same Play stream")
                    return
                else:
                    self._protocol_error(
                        conn,
                        "PlayRequest.body is empty: set hello, submit_action, list_commands "
                        "or quit",
                    )
                    return
        except asyncio.CancelledError:
            pass
        except grpc.RpcError:
            # the call broke (e.g. an oversized frame): let the writer leave too
            conn.close("protocol_error", "the request stream failed")

    def _protocol_error(self, conn: Connection, message: str) -> None:
        """End a Play stream for breaking the protocol; counted on its seat."""
        session = conn.session
        if session is not None and conn.seat is not None:
            session.seats[conn.seat].protocol_errors += 1
        log.info(
            "protocol_error match=%s seat=%s: %s",
            session.match_id if session is not None else "-",
            conn.seat,
            message,
        )
        conn.close("protocol_error", message)

    async def Spectate(
        self,
        request: ms.SpectateRequest | Undecodable,
        context: Context[ms.SpectateRequest, ms.SpectateResponse],
    ) -> AsyncIterator[ms.SpectateResponse]:
        if isinstance(request, Undecodable):
            self.hub.stats["undecodable_frames"] += 1
            _end(context, grpc.StatusCode.INVALID_ARGUMENT, request.message())
            return
        conn = self._connection()
        target = request.WhichOneof("target")
        if target is None:
            _end(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                "SpectateRequest needs match_id or room_id",
            )
            return
        try:
            self.hub.spectate(
                conn,
                match_id=request.match_id,
                room_id=request.room_id,
                after=request.after_sequence,
                metadata=_metadata(context),
            )
        except ServerError as exc:
            _end(context, status_for(exc), str(exc))
            return
        try:
            while True:
                msg = await conn.queue.get()
                players = conn.session.options.players if conn.session is not None else 2
                out = spectate_response(msg, players)
                if out is not None:
                    yield out
                if isinstance(msg, GoodbyeMsg):
                    break
        finally:
            self.hub.leave(conn)
