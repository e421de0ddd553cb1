"""Issue 12, item 7: the protocol's ``MatchResult`` may have no ``winner_side`` (no side
won); the bot kit reports that as no winner, never as "side 0".

Our server always finishes a match with a winner (best-of is a majority), so the peer here
is a second, minimal implementation of the protocol on a real gRPC server: it welcomes the
seat, reports a 1-1 match with no winner and says goodbye, as another server may.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from typing import Any

import grpc

from cirulla.bots.kit import run_bot
from cirulla.v1 import match_pb2, match_service_pb2, match_service_pb2_grpc, play_pb2
from cirulla.version import PROTOCOL_VERSION


class TiedMatchServer(match_service_pb2_grpc.MatchServiceServicer):
    async def Play(
        self, requests: AsyncIterator[match_service_pb2.PlayRequest], context: Any
    ) -> AsyncIterator[match_service_pb2.PlayResponse]:
        first = await requests.__anext__()
        match_id = first.hello.match_id
        welcome = play_pb2.Welcome(protocol_version=PROTOCOL_VERSION, match_id=match_id)
        welcome.seat, welcome.side = 1, 1
        yield match_service_pb2.PlayResponse(welcome=welcome)
        result = match_pb2.MatchResult(match_id=match_id, games_won=[1, 1])  # no winner_side
        yield match_service_pb2.PlayResponse(match_result=result)
        goodbye = play_pb2.Goodbye(reason=play_pb2.GOODBYE_REASON_MATCH_FINISHED)
        yield match_service_pb2.PlayResponse(goodbye=goodbye)


def test_a_match_result_without_a_winner_is_no_winner_not_side_0() -> None:
    ready = threading.Event()
    port: list[int] = []
    stop: list[asyncio.Event] = []

    async def serve() -> None:
        server = grpc.aio.server()
        match_service_pb2_grpc.add_MatchServiceServicer_to_server(TiedMatchServer(), server)
        port.append(server.add_insecure_port("127.0.0.1:0"))
        await server.start()
        stop.append(asyncio.Event())
        ready.set()
        await stop[0].wait()
        await server.stop(None)

    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_until_complete, args=(serve(),))
    thread.start()
    try:
        assert ready.wait(30)
        outcome = run_bot(
            lambda view, legal, time_left: 0,
            server=f"127.0.0.1:{port[0]}",
            match_id="m-tie",
            token="t",
            retries=0,
        )
    finally:
        if stop:
            loop.call_soon_threadsafe(stop[0].set)
        thread.join(30)
        loop.close()
    assert outcome.games_won == [1, 1]  # the result was read...
    assert outcome.winner_side is None  # ...and names no winner
