"""Hidden information stays hidden: every card in every message each seat and a spectator
receive must be one that receiver legitimately knows at that point.

What a receiver knows is computed from the server-side truth (the game record, which holds
every event including the private ones): the cards of every event up to the message's
sequence number that the receiver may see. Explicit deck orders are used so a leaked deck
source (in Welcome or GetMatch settings) would show up as unknown cards too.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest
from google.protobuf.message import Message

from cirulla.rules import CARD_NAMES, parse_card
from cirulla.server.client import play_seat, random_choice
from cirulla.v1 import cards_pb2, match_settings_pb2, rules_pb2
from cirulla.v1 import match_service_pb2 as ms
from tests.server_harness import serving


def card_codes(msg: Message) -> list[str]:
    """Every Card anywhere inside ``msg``."""
    out: list[str] = []
    if isinstance(msg, cards_pb2.Card):
        return [msg.code]
    for field, value in msg.ListFields():
        if field.message_type is None:
            continue
        items = value if field.is_repeated else [value]
        for item in items:
            if isinstance(item, Message):
                out.extend(card_codes(item))
    return out


def known_cards(record: dict[str, Any], receiver: int | None, upto: int) -> set[str]:
    known: set[str] = set()
    for ev in record["events"]:
        if ev["sequence"] > upto:
            break
        if ev["private_to"] is not None and ev["private_to"] != receiver:
            continue
        for key in ("table", "cards", "captured", "hand"):
            known.update(ev.get(key) or [])
        if "card" in ev and isinstance(ev["card"], str):
            known.add(ev["card"])
    return known


def check_stream(messages: list[Any], record: dict[str, Any], receiver: int | None) -> int:
    seq = 0
    checked = 0
    for msg in messages:
        body = getattr(msg, msg.WhichOneof("body"))
        if msg.WhichOneof("body") == "event":
            seq = msg.event.sequence
            if msg.event.HasField("private_to_seat"):
                assert msg.event.private_to_seat == receiver
        elif msg.WhichOneof("body") == "view":
            seq = max(seq, msg.view.event_sequence)
        elif msg.WhichOneof("body") == "decision_request":
            assert receiver is not None and msg.decision_request.view.seat == receiver
            seq = max(seq, msg.decision_request.view.event_sequence)
        codes = card_codes(body)
        if not codes:
            continue
        known = known_cards(record, receiver, seq)
        leaked = set(codes) - known
        assert not leaked, f"receiver {receiver} got {sorted(leaked)} in {msg}"
        checked += len(codes)
    return checked


@pytest.mark.parametrize("players", [2, 4])
def test_no_message_reveals_a_hidden_card(players: int) -> None:
    rng = random.Random(players)
    decks = []
    for _ in range(30):
        deck = list(range(40))
        rng.shuffle(deck)
        decks.append(
            match_settings_pb2.DeckOrder(cards=[cards_pb2.Card(code=CARD_NAMES[c]) for c in deck])
        )

    async def main() -> None:
        async with serving(":memory:") as (stub, srv, _ch):
            settings = match_settings_pb2.MatchSettings(
                rules=rules_pb2.Rules(overrides=rules_pb2.RuleOptions(players=players, target=11)),
                deck_orders=match_settings_pb2.DeckOrders(decks=decks),
            )
            m = await stub.CreateMatch(ms.CreateMatchRequest(settings=settings))
            assert not card_codes(m.match)
            mid = m.match.match_id
            spectator: list[Any] = []

            async def spectate() -> None:
                async for msg in stub.Spectate(ms.SpectateRequest(match_id=mid)):
                    spectator.append(msg)
                    if msg.WhichOneof("body") == "goodbye":
                        return

            spec_task = asyncio.create_task(spectate())
            await asyncio.sleep(0.05)
            logs = await asyncio.gather(
                *[
                    play_seat(stub, mid, t.token, random_choice(random.Random(i)))
                    for i, t in enumerate(m.seat_tokens)
                ]
            )
            await asyncio.wait_for(spec_task, 5)
            match = (await stub.GetMatch(ms.GetMatchRequest(match_id=mid))).match
            assert not card_codes(match)
            await srv.hub.records_written()  # written on the hub's writer thread
            record = srv.hub.store.get_record(f"{mid}-g1")
            assert record is not None
            total = 0
            for seat, log in enumerate(logs):
                total += check_stream(log, record, seat)
                own = {
                    CARD_NAMES[parse_card(c)]
                    for m_ in log
                    if m_.WhichOneof("body") == "event"
                    and m_.event.WhichOneof("body") == "hand_dealt"
                    for c in [x.code for x in m_.event.hand_dealt.cards]
                }
                assert own, "a seat must at least see its own hands"
            kinds = {m_.WhichOneof("body") for m_ in spectator}
            assert {"welcome", "new_game", "event", "view", "match_result"} <= kinds
            assert "decision_request" not in kinds
            assert not any(
                m_.WhichOneof("body") == "event" and m_.event.WhichOneof("body") == "hand_dealt"
                for m_ in spectator
            )
            assert all(not m_.view.hand for m_ in spectator if m_.WhichOneof("body") == "view")
            total += check_stream(spectator, record, None)
            assert total > 1000  # the check really looked at cards

    asyncio.run(main())
