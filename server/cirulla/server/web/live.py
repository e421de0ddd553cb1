"""The live view of a match as read from *a* match server's MatchService (``live_page``,
``live_stream``): the web view's own server (``/matches/ID``) and the server hosting a
ladder match, which may be another worker's (``/ladder/matches/ID/live``), are drawn by
the same code. Each is a public Spectate stream without the admin token: no hand is ever
in it, and a stream the match server refuses (a withheld duplicate twin's) is refused on
the page too. The markup is ``templates/live.html`` (its script ``live.js``).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any
from urllib.parse import quote

import grpc
from google.protobuf import json_format
from google.protobuf.message import Message
from markupsafe import Markup
from starlette.responses import Response, StreamingResponse

from cirulla.server.web import table, templating
from cirulla.server.web.replay import HTTP_OF, Stub, message_page, rpc_error
from cirulla.v1 import match_service_pb2

#: how long the page waits for the stream's first view before it is drawn without one
FIRST_VIEW = 5.0


async def live_page(
    stub: Stub,
    match_id: str,
    *,
    stream_url: str | None = None,
    back: tuple[str, str] = ("/", "all matches"),
) -> Response:
    """The live view's first state: the Spectate stream read up to its first view; the
    page's script then follows the stream at ``stream_url`` (by default this server's)."""
    call = stub.Spectate(match_service_pb2.SpectateRequest(match_id=match_id))
    played: table.Played | None = None
    drawn = Markup('<p class="muted">waiting for the first deal</p>')
    status = "connecting…"
    try:
        async with asyncio.timeout(FIRST_VIEW):
            async for msg in call:
                kind = msg.WhichOneof("body")
                if kind == "event":
                    played = table.last_played(msg.event, played)
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
        heading = f"Live: {match_id}"
        return message_page(
            "Cirulla live", heading, rpc_error(exc), code, back=back, line_id="status"
        )
    finally:
        call.cancel()
    return templating.page(
        "live.html",
        title="Cirulla live",
        match_id=match_id,
        back=back,
        status=status,
        board=drawn,
        stream_url=stream_url or f"/api/matches/{quote(match_id, safe='')}/stream",
    )


def as_dict(message: Message) -> dict[str, Any]:
    """A protobuf message as the JSON document the page's script reads."""
    return json_format.MessageToDict(
        message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )


def live_stream(
    stub: Stub, match_id: str, on_end: Callable[[], Awaitable[None]] | None = None
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
                    played = table.last_played(msg.event, played)
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
                await on_end()
        yield 'data: {"end": true}\n\n'

    return StreamingResponse(
        events(),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )
