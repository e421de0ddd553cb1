"""The test/benchmark seat client: waiting for a message must never lose one."""

from __future__ import annotations

import asyncio

from cirulla.server.client import ManualSeat, hello
from cirulla.v1 import events_pb2, match_settings_pb2, rules_pb2
from cirulla.v1 import match_service_pb2 as ms
from tests.server_harness import serving


def test_a_cancelled_wait_leaves_its_message_for_the_next_reader() -> None:
    """Cancel ``next`` in the very loop step its message arrives (the old flake's race).

    With ``asyncio.wait_for`` on Python 3.11 the cancelled waiter kept the message and
    kept reading, so the next caller never saw it.
    """

    async def main() -> None:
        async with serving() as (stub, _srv, _ch):
            settings = match_settings_pb2.MatchSettings(
                rules=rules_pb2.Rules(overrides=rules_pb2.RuleOptions(players=2))
            )
            m = await stub.CreateMatch(ms.CreateMatchRequest(settings=settings))
            seat = ManualSeat(stub)
            seat.send(hello(m.match.match_id, m.seat_tokens[0].token))
            assert (await seat.next("welcome")).welcome.seat == 0
            waiter = asyncio.ensure_future(seat.next("decision_request"))
            await asyncio.sleep(0)  # the waiter is now blocked on the inbox
            sent = ms.PlayResponse(
                event=events_pb2.Event(sequence=77, timeout=events_pb2.Timeout(seat=1))
            )
            seat.inbox.put_nowait(sent)
            waiter.cancel()
            await asyncio.gather(waiter, return_exceptions=True)
            assert waiter.cancelled()
            got = await seat.next("event", timeout=1.0)
            assert got.event.sequence == 77
            seat.close()

    asyncio.run(main())
