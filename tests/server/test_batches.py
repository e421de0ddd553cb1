"""Hello.accept_batches: the same stream, packed into fewer messages, only when asked."""

from __future__ import annotations

import asyncio

import pytest

from cirulla.server.client import play_seat
from cirulla.v1 import match_service_pb2 as ms
from cirulla.v1 import play_pb2
from tests.server.test_play import settings
from tests.server_harness import serving


def first_action(request: play_pb2.DecisionRequest) -> int:
    return 0


def shape(message: ms.PlayResponse) -> tuple[object, ...]:
    """What a message says, without the clock readings that differ from run to run."""
    kind = message.WhichOneof("body")
    if kind == "event":
        return (kind, message.event.sequence, message.event.WhichOneof("body"))
    if kind == "decision_request":
        request = message.decision_request
        return (kind, request.decision_id, len(request.legal_actions), list(request.view.hand))
    if kind == "action_accepted":
        return (kind, message.action_accepted.decision_id)
    return (kind,)


async def play(players: int, batches: bool) -> tuple[list[list[tuple[object, ...]]], list[int]]:
    async with serving(":memory:") as (stub, _srv, _ch):
        resp = await stub.CreateMatch(
            ms.CreateMatchRequest(settings=settings(players, target=21, seed=11))
        )
        counts: list[list[int]] = [[] for _ in resp.seat_tokens]
        logs = await asyncio.gather(
            *[
                play_seat(
                    stub,
                    resp.match.match_id,
                    t.token,
                    first_action,
                    batches=batches,
                    stream_messages=counts[i],
                )
                for i, t in enumerate(resp.seat_tokens)
            ]
        )
    return [[shape(m) for m in log] for log in logs], [len(c) for c in counts]


@pytest.mark.parametrize("players", [2, 4])
def test_batches_carry_the_same_messages_in_fewer_stream_messages(players: int) -> None:
    plain, plain_counts = asyncio.run(play(players, batches=False))
    packed, packed_counts = asyncio.run(play(players, batches=True))
    for seat in range(players):
        # seat by seat, the unpacked stream is the plain one, message for message
        assert packed[seat] == plain[seat]
        assert plain_counts[seat] == len(plain[seat])  # a plain client never gets a batch
        assert len(plain[seat]) > 100
        # an action's acceptance, its events and the next decision travel together
        assert packed_counts[seat] < 0.6 * plain_counts[seat]


def test_a_batch_is_never_nested_nor_single() -> None:
    async def main() -> list[ms.PlayResponse]:
        async with serving(":memory:") as (stub, _srv, _ch):
            resp = await stub.CreateMatch(
                ms.CreateMatchRequest(settings=settings(2, target=11, seed=3))
            )
            raw: list[ms.PlayResponse] = []
            seat0 = _RawLog(raw)
            await asyncio.gather(
                seat0.play(stub, resp.match.match_id, resp.seat_tokens[0].token),
                play_seat(stub, resp.match.match_id, resp.seat_tokens[1].token, first_action),
            )
            return raw

    raw = asyncio.run(main())
    batches = [m.batch for m in raw if m.WhichOneof("body") == "batch"]
    assert batches
    for batch in batches:
        assert len(batch.responses) >= 2
        assert all(r.WhichOneof("body") not in ("batch", None) for r in batch.responses)


class _RawLog:
    """A seat that keeps the stream messages as they came (batches not unpacked)."""

    def __init__(self, raw: list[ms.PlayResponse]) -> None:
        self.raw = raw

    async def play(self, stub: object, match_id: str, token: str) -> None:
        from cirulla.server.client import Outbox, hello, submit_index

        out = Outbox()
        out.send(hello(match_id, token, "raw", batches=True))
        call = stub.Play(out)  # type: ignore[attr-defined]
        async for message in call:
            self.raw.append(message)
            items = (
                list(message.batch.responses)
                if message.WhichOneof("body") == "batch"
                else [message]
            )
            kinds = [m.WhichOneof("body") for m in items]
            for m in items:
                if m.WhichOneof("body") == "decision_request":
                    out.send(submit_index(m.decision_request.decision_id, 0))
            if "goodbye" in kinds:
                break
        out.send(None)


def test_a_batch_written_from_bytes_is_the_protobuf_message() -> None:
    """The server writes a batch from its parts' serialized bytes: the same bytes as the
    PlayResponse protobuf builds, including parts longer than 127 bytes (multi-byte
    lengths)."""
    from cirulla.server.convert.live import (
        CAPABILITIES,
        play_response,
        play_response_bytes,
        play_responses,
    )
    from cirulla.server.messages import AcceptedMsg, CommandListMsg

    msgs = [AcceptedMsg(7, 2, 150), CommandListMsg(CAPABILITIES * 20)]
    packed = play_responses(msgs, 2)
    expected = ms.PlayResponse(
        batch=ms.PlayResponseBatch(responses=[play_response(m, 2) for m in msgs])
    )
    assert packed == expected.SerializeToString()
    assert ms.PlayResponse.FromString(packed) == expected
    assert len(play_response_bytes(msgs[1], 2)) > 127
    single = play_responses(msgs[:1], 2)
    assert ms.PlayResponse.FromString(single).action_accepted.decision_id == 7
