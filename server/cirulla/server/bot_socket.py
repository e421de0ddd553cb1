"""The match server's listener for sandboxed bots: ``cirulla.v1.MatchService/Play`` only.

A sandboxed bot is untrusted code that may know a hand (its own), and its other process
may be playing the duplicate twin: whatever the bot can write where another process of
its can read is a channel for hidden cards, and whatever it can read beyond its own seat
is a leak. Its relay (``cirulla.clients.matches.relay``) forwarded it to the server's TCP
port, where every other rpc of every service is served (ListMatches, GetMatch, Spectate,
a ladder's LadderService with AddBot under ``--insecure-open``, RequestMatch with an
author key built into the bot...). So the server gets one more listener, a unix socket
given before it starts (``start_server(bot_socket=...)``, ``cirulla server
--bot-socket``), served by a second ``grpc.aio`` server object of the same process and
the same servicer, and an interceptor there (``PlayOnly``) refuses everything but Play
(PERMISSION_DENIED, one line: ``REFUSED``) before any handler is looked up, whatever the
service (MatchService, LadderService, health, reflection).

What the processes that run in a sandbox call was checked: the kit
(``cirulla.bots.kit``, which ``cirulla.bots.loop``, the text-engine bridge
``cirulla.bots.text.served`` and ``cirulla bot`` use) opens one Play stream per match
and calls nothing else; ``cirulla match`` (CreateMatch), ``cirulla engine check``
(CreateMatch, AbortMatch) and a connect-in bot's Enroll run outside any sandbox. One
more process runs sandboxed: a ladder's stand-in for a connect-in seat
(``cirulla.ladder.await_join``) polls GetMatch of its own match with that seat's token
until the remote bot joined. So GetMatch is let through too, for exactly that: a call
whose ``authorization: Bearer TOKEN`` is a seat token of the match it names, live on
this server; any other GetMatch is refused like the rest. It tells a bot nothing its own
Play stream does not (the summary of the match it sits in).

The socket is plaintext, on purpose: it is a file of the host, mode 0600, which the
ladder and the tournament runner make in a 0700 folder of their own (an operator giving
``--bot-socket`` picks a folder only the server's user reaches); the relay that forwards
a sandbox's connections to it runs as that user. The bots dialled plaintext before too
(the ladder's relay pointed at its plaintext loopback port, the tournament's at its
local server's). TLS stays on ``--listen``.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TypeVar, cast

import grpc

from cirulla.server.connections import token_seat
from cirulla.server.hub import Hub
from cirulla.server.service import MatchService, add_to_server

#: The one method served on the bot socket.
PLAY_METHOD = "/cirulla.v1.MatchService/Play"
#: Served only for a seat token of the match it names (the connect-in stand-in's poll).
GET_MATCH_METHOD = "/cirulla.v1.MatchService/GetMatch"
#: Streams (calls) one connection of the bot socket may hold open at once. A sandboxed
#: bot needs one a match (its Play; the connect-in stand-in's GetMatch poll one at a
#: time), and its relay holds at most 16 connections a process; without a bound a bot
#: opened thousands of Play streams without a Hello, each held (a call, its task, about
#: 20 KB) until the hello timeout, in the server's process: a ladder's own
#: (tests/confinement/test_hostile_sandbox.py). gRPC's HTTP/2 settings tell the client;
#: a client that opens more anyway has them refused (REFUSED_STREAM).
MAX_STREAMS_PER_CONNECTION = 8
#: What every other call gets there (with PERMISSION_DENIED).
REFUSED = (
    "this socket serves sandboxed bots: only cirulla.v1.MatchService/Play "
    "(and GetMatch of the caller's own match, with its seat token)"
)


async def _refuse(request: object, context: grpc.aio.ServicerContext[object, object]) -> None:
    await context.abort(grpc.StatusCode.PERMISSION_DENIED, REFUSED)


#: A stream-stream handler answers any kind of call (unary or streaming) at once with
#: the refusal, without reading a request.
_REFUSAL: grpc.RpcMethodHandler[object, object] = grpc.stream_stream_rpc_method_handler(_refuse)

#: A call's request and response (the interceptor passes every method's handler on).
Q = TypeVar("Q")
R = TypeVar("R")


class PlayOnly(grpc.aio.ServerInterceptor):
    """Lets ``PLAY_METHOD`` through, and ``GET_MATCH_METHOD`` for a seat token of the
    match it names (``hub``'s live matches); every other call, of any service, is
    refused."""

    def __init__(self, hub: Hub) -> None:
        self.hub = hub

    async def intercept_service(
        self,
        continuation: Callable[
            [grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler[Q, R] | None]
        ],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[Q, R] | None:
        method = handler_call_details.method
        if method == PLAY_METHOD:
            return await continuation(handler_call_details)
        if method == GET_MATCH_METHOD:
            handler = await continuation(handler_call_details)
            if handler is not None and handler.unary_unary is not None:
                return self._own_match_only(handler)
        return cast("grpc.RpcMethodHandler[Q, R]", _REFUSAL)

    def _own_match_only(self, handler: grpc.RpcMethodHandler[Q, R]) -> grpc.RpcMethodHandler[Q, R]:
        # grpc's stubs type a handler's behaviour as a blocking call; on an aio server it
        # is a coroutine function, awaited here
        inner = cast(
            "Callable[[Q, grpc.aio.ServicerContext[Q, R]], Awaitable[R]]", handler.unary_unary
        )

        async def get_match(request: Q, context: grpc.aio.ServicerContext[Q, R]) -> R:
            if not self._seat_of(getattr(request, "match_id", ""), context):
                await context.abort(grpc.StatusCode.PERMISSION_DENIED, REFUSED)
            return await inner(request, context)

        return cast(
            "grpc.RpcMethodHandler[Q, R]",
            grpc.unary_unary_rpc_method_handler(
                get_match,
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            ),
        )

    def _seat_of(self, match_id: str, context: grpc.aio.ServicerContext[Q, R]) -> bool:
        """Whether the call's bearer token is a seat token of live match ``match_id``."""
        session = self.hub.matches.get(match_id) if isinstance(match_id, str) else None
        if session is None:
            return False
        metadata = {k: v for k, v in context.invocation_metadata() or () if isinstance(v, str)}
        scheme, _, token = metadata.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return False
        return token_seat(session.tokens, token.strip()) is not None


def check_bot_socket(path: str | Path) -> Path:
    """``--bot-socket`` is a path whose folder exists and which is not something other
    than a socket (a stale socket file is replaced); a unix socket's path is at most 107
    bytes."""
    path = Path(path)
    if len(os.fsencode(str(path))) > 107:
        raise ValueError(f"--bot-socket {path}: a unix socket's path is at most 107 bytes")
    if not path.parent.is_dir():
        raise ValueError(f"--bot-socket {path}: no folder {path.parent}")
    if path.exists() and not path.is_socket():
        raise ValueError(f"--bot-socket {path}: exists and is not a socket")
    return path


async def start_bot_server(
    path: str | Path, servicer: MatchService, options: Sequence[tuple[str, int | str]]
) -> grpc.aio.Server:
    """A started server on unix socket ``path`` serving ``servicer``'s Play only."""
    path = check_bot_socket(path)
    with contextlib.suppress(FileNotFoundError):
        path.unlink()  # a stale socket of an earlier run (checked: a socket)
    bounded = [
        *(option for option in options if option[0] != "grpc.max_concurrent_streams"),
        ("grpc.max_concurrent_streams", MAX_STREAMS_PER_CONNECTION),
    ]
    server = grpc.aio.server(interceptors=[PlayOnly(servicer.hub)], options=bounded)
    add_to_server(servicer, server)
    try:
        bound = server.add_insecure_port(f"unix:{path}")
    except RuntimeError:
        bound = 0
    if not bound:
        raise OSError(f"cannot listen on --bot-socket {path}")
    await server.start()
    os.chmod(path, 0o600)
    return server
