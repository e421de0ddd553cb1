"""Hello.defer_events: a seat's events wait for its next decision, in one stream message,
and change nothing else; beside it, a client written from the protos alone (no flag set,
no helper of this project) plays the same match message by message."""

from __future__ import annotations

import asyncio
from typing import Any

from cirulla.server.client import play_seat
from cirulla.v1 import match_service_pb2 as ms
from cirulla.v1 import match_service_pb2_grpc, play_pb2
from tests.server.test_batches import first_action, shape
from tests.server.test_play import settings
from tests.server_harness import serving


async def raw_seat(
    stub: match_service_pb2_grpc.MatchServiceStub, match_id: str, token: str
) -> tuple[list[ms.PlayResponse], int]:
    """A client as a third party writes it from the .proto files: Hello with the four
    fields it knows, then the first legal action for every decision request."""
    requests: asyncio.Queue[ms.PlayRequest | None] = asyncio.Queue()

    async def outgoing() -> Any:
        while (request := await requests.get()) is not None:
            yield request

    requests.put_nowait(
        ms.PlayRequest(
            hello=play_pb2.Hello(
                protocol_version="cirulla.v1/1", name="raw", match_id=match_id, seat_token=token
            )
        )
    )
    received: list[ms.PlayResponse] = []
    frames = 0
    async for response in stub.Play(outgoing()):
        frames += 1
        received.append(response)
        kind = response.WhichOneof("body")
        if kind == "decision_request":
            request = response.decision_request
            requests.put_nowait(
                ms.PlayRequest(
                    submit_action=play_pb2.SubmitAction(
                        decision_id=request.decision_id, legal_action_index=0
                    )
                )
            )
        elif kind == "goodbye":
            break
    requests.put_nowait(None)
    return received, frames


async def play(defer: bool) -> tuple[list[list[tuple[object, ...]]], list[int], int]:
    """Seat 0: the raw client; seat 1: batches, with or without defer_events."""
    async with serving(":memory:") as (stub, _srv, _ch):
        resp = await stub.CreateMatch(
            ms.CreateMatchRequest(settings=settings(2, target=51, seed=23))
        )
        tokens = [t.token for t in resp.seat_tokens]
        counts: list[int] = []
        (raw, raw_frames), other = await asyncio.gather(
            raw_seat(stub, resp.match.match_id, tokens[0]),
            play_seat(
                stub,
                resp.match.match_id,
                tokens[1],
                first_action,
                batches=True,
                defer_events=defer,
                stream_messages=counts,
            ),
        )
    decisions = sum(1 for m in other if m.WhichOneof("body") == "decision_request")
    return (
        [[shape(m) for m in raw], [shape(m) for m in other]],
        [raw_frames, len(counts)],
        (decisions),
    )


def test_deferred_events_are_the_same_messages_about_one_stream_message_per_decision() -> None:
    eager, eager_frames, decisions = asyncio.run(play(defer=False))
    deferred, deferred_frames, again = asyncio.run(play(defer=True))
    assert decisions == again > 50
    # the same game, message for message, for both seats
    assert deferred == eager
    # the raw client never set a flag: every message came alone, and it played to the end
    raw = deferred[0]
    assert deferred_frames[0] == eager_frames[0] == len(raw)
    assert [m[0] for m in raw[-2:]] == ["match_result", "goodbye"]
    assert sum(1 for m in raw if m[0] == "action_accepted") > 50
    # the deferring seat: its events wait for its decisions
    assert deferred_frames[1] < eager_frames[1]
    assert deferred_frames[1] <= decisions + 8  # welcome, new games, the result, goodbye
