"""Protocol conformance found by a client written from the docs alone (issue 9): what a
client in another language relies on, checked against a real server on a real port."""

from __future__ import annotations

import asyncio
import random
import re
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format

from cirulla.rules import Game, Options, card_name
from cirulla.rules.errors import ILLEGAL_RULES
from cirulla.server.client import ManualSeat, hello, submit_index
from cirulla.v1 import cards_pb2, match_settings_pb2, play_pb2
from cirulla.v1 import match_service_pb2 as ms
from tests.server.test_play import play_match, settings
from tests.server_harness import serving


async def answer_one(seats: list[ManualSeat], timeout: float = 10) -> ManualSeat | None:
    """Wait for whichever seat gets a decision, answer it with index 0 (None: none came)."""
    tasks = {asyncio.ensure_future(s.next("decision_request", timeout=timeout)): s for s in seats}
    done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    task = done.pop()
    if isinstance(task.exception(), TimeoutError):
        return None
    seat = tasks[task]
    request = task.result().decision_request
    seat.send(submit_index(request.decision_id, 0))
    return seat


def events(msgs: list[Any]) -> list[Any]:
    return [m.event for m in msgs if m.WhichOneof("body") == "event"]


def test_resume_sends_welcome_new_game_then_the_missed_events_once_in_order() -> None:
    async def main() -> None:
        async with serving() as (stub, _srv, _ch):
            created = await stub.CreateMatch(
                ms.CreateMatchRequest(settings=settings(2, 11, seed=5, disconnect_grace_ms=60_000))
            )
            mid = created.match.match_id
            tokens = [t.token for t in created.seat_tokens]
            seats = [ManualSeat(stub), ManualSeat(stub)]
            for seat, token in zip(seats, tokens, strict=True):
                seat.send(hello(mid, token))
            for _ in range(5):
                await answer_one(seats)
            await asyncio.sleep(0.2)
            dropped = seats[1]
            while not dropped.inbox.empty():  # what seat 1 processed before dropping
                await dropped.next(timeout=1)
            last = max(e.sequence for e in events(dropped.received))
            dropped.close()
            # Seat 0 plays on while seat 1 is away (until it is seat 1's turn).
            await seats[0].next_event("player_disconnected")
            for _ in range(3):
                if await answer_one([seats[0]], timeout=1.0) is None:
                    break

            back = ManualSeat(stub)
            back.send(hello(mid, tokens[1], resume=last))
            await back.next("view", timeout=10)
            kinds = [m.WhichOneof("body") for m in back.received]
            assert kinds[:2] == ["welcome", "new_game"], kinds
            assert back.received[0].welcome.resumed
            assert kinds[-1] == "view"
            assert set(kinds[2:-1]) == {"event"}, kinds
            missed = events(back.received)
            seqs = [e.sequence for e in missed]
            assert seqs == sorted(set(seqs)), seqs  # increasing, no duplicates
            assert seqs[0] > last
            bodies = [e.WhichOneof("body") for e in missed]
            assert bodies.count("player_disconnected") == 1
            assert bodies.count("player_reconnected") == 1
            assert bodies[-1] == "player_reconnected"
            # The view reflects the last event sent.
            assert back.received[-1].view.event_sequence == seqs[-1]
            # Seat 0 sees the reconnection once, live.
            reconnected = await seats[0].next_event("player_reconnected")
            assert reconnected.sequence == seqs[-1]
            for seat in (seats[0], back):
                seat.close()

    asyncio.run(main())


@pytest.mark.parametrize("players", [2, 4])
def test_deal_scored_fills_card_coin_and_primiera_counts(players: int) -> None:
    async def main() -> None:
        async with serving() as (stub, _srv, _ch):
            resp, logs = await play_match(stub, settings(players, 21, seed=11), 3)
            scored = [
                e.deal_scored for e in events(logs[0]) if e.WhichOneof("body") == "deal_scored"
            ]
            assert scored
            for deal in scored:
                sides = list(deal.scores)
                # Every card ends in a side's pile at the end of a deal.
                assert sum(s.card_count for s in sides) == 40
                assert sum(s.coin_count for s in sides) == 10
                for s in sides:
                    assert 0 <= s.primiera_value <= 84
                    # The point for most cards / coins / primiera goes to the unique top.
                    if s.cards:
                        assert s.card_count == max(o.card_count for o in sides)
                    if s.coins:
                        assert s.coin_count > max(o.coin_count for o in sides if o is not s)
                    if s.primiera:
                        assert s.primiera_value > max(o.primiera_value for o in sides if o is not s)
            records = await stub.ListRecords(ms.ListRecordsRequest(match_id=resp.match.match_id))
            full = await stub.GetRecord(ms.GetRecordRequest(record_id=records.records[0].record_id))
            assert [d.result for d in full.record.deals if d.HasField("result")] == scored

    asyncio.run(main())


def proto_rule_names() -> list[str]:
    """The names listed in play.proto's comment on ActionRejected.rule."""
    text = (Path(__file__).parents[2] / "proto/cirulla/v1/play.proto").read_text()
    block = text[text.index("message ActionRejected") :]
    block = block[: block.index("string rule = 3;")]
    return re.findall(r'^\s*//\s+"([a-z_]+)"', block, flags=re.M)


def test_the_reject_rule_list_is_one_list() -> None:
    assert proto_rule_names() == list(ILLEGAL_RULES)
    protocol = (Path(__file__).parents[2] / "docs/protocol.md").read_text()
    for stale in ("card_not_in_hand", "capture_sum", "declaration_not_allowed"):
        assert stale not in protocol


def test_the_server_sends_only_listed_rule_names_and_only_for_illegal() -> None:
    """Hundreds of wrong submissions of every kind; each rejection is checked."""
    rng = random.Random(4)
    deck = [c + s for c in "A234567JQK" for s in "DHCS"]

    async def main() -> None:
        async with serving() as (stub, _srv, _ch):
            created = await stub.CreateMatch(
                ms.CreateMatchRequest(settings=settings(2, 11, seed=8))
            )
            mid = created.match.match_id
            seats = [ManualSeat(stub), ManualSeat(stub)]
            for seat, token in zip(seats, created.seat_tokens, strict=True):
                seat.send(hello(mid, token.token))
            rules_seen: set[str] = set()
            reasons_seen: set[int] = set()
            for _ in range(12):
                # Whoever is to move gets a volley of wrong answers, then a legal one.
                tasks = {
                    asyncio.ensure_future(s.next("decision_request", timeout=10)): s for s in seats
                }
                done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
                for task in pending:
                    task.cancel()
                await asyncio.gather(*pending, return_exceptions=True)
                task = done.pop()
                active = tasks[task]
                idle = seats[1 - seats.index(active)]
                req = task.result().decision_request
                did = req.decision_id
                hand = [c.code for c in req.view.hand]
                table = [c.code for c in req.view.table]
                wrong = [
                    (idle, submit_index(did, 0)),
                    (active, submit_index(did + 1, 0)),
                    (active, submit_index(did, len(req.legal_actions) + 3)),
                    (active, notation(did, "ZZ")),
                    (active, notation(did, "")),
                    (active, notation(did, "low")),
                ]
                for _ in range(25):
                    card = rng.choice(hand + deck)
                    caps = rng.sample(table + deck, rng.randint(0, 3))
                    decl = rng.choice(["", "", "low ", "three ", "low:7H=1 ", "three:7H=11 "])
                    text = decl + card + (":" + "+".join(caps) if caps else "")
                    wrong.append((active, notation(did, text)))
                legal_texts = {a.notation for a in req.legal_actions}
                for seat, request in wrong:
                    if request.submit_action.notation in legal_texts:
                        continue
                    seat.send(request)
                    msg = await seat.next("action_rejected", "action_accepted")
                    assert msg.WhichOneof("body") == "action_rejected", request
                    r = msg.action_rejected
                    reasons_seen.add(r.reason)
                    if r.reason == play_pb2.REJECT_REASON_ILLEGAL:
                        assert r.rule in ILLEGAL_RULES, (request, r)
                        rules_seen.add(r.rule)
                    else:
                        assert r.rule == "", (request, r)
                active.send(submit_index(did, rng.randrange(len(req.legal_actions))))
                # Read its acceptance now: left in the inbox, the next turn's wait for a
                # decision request could be cancelled before reaching it, and this seat,
                # idle then, would read it as the answer to its wrong submission.
                accepted = await active.next("action_accepted", "action_rejected")
                assert accepted.WhichOneof("body") == "action_accepted", accepted
            assert len(reasons_seen) == 5  # every reason was exercised
            assert {"card_in_hand", "capture_on_table"} <= rules_seen and len(rules_seen) >= 3
            for seat in seats:
                seat.close()

    asyncio.run(main())


def notation(decision_id: int, text: str) -> ms.PlayRequest:
    return ms.PlayRequest(
        submit_action=play_pb2.SubmitAction(decision_id=decision_id, notation=text)
    )


def test_finished_records_verify_every_deal_and_reveal_no_seed() -> None:
    """Records show every deck order used (void deals included), enough to replay each
    deal; they never show the seed, and one game's decks are not the continuation of a
    generator whose output they reveal (the old shared stream predicted the next game)."""
    seed = 987_654_321_123

    async def main() -> None:
        async with serving() as (stub, _srv, _ch):
            resp, _logs = await play_match(stub, settings(2, 11, best_of=3, seed=seed), 1)
            mid = resp.match.match_id
            listed = await stub.ListRecords(ms.ListRecordsRequest(match_id=mid))
            records = [
                (await stub.GetRecord(ms.GetRecordRequest(record_id=r.record_id))).record
                for r in sorted(listed.records, key=lambda r: r.game_number)
            ]
            match = (await stub.GetMatch(ms.GetMatchRequest(match_id=mid))).match
            assert len(records) >= 2
            for message in [*records, match, listed]:
                assert str(seed) not in json_format.MessageToJson(message)
            decks_by_game = []
            for record in records:
                assert not record.settings.WhichOneof("deck_source")
                redeals = sum(1 for e in record.events if e.WhichOneof("body") == "redeal")
                decks = [[c.code for c in d.cards] for deal in record.deals for d in deal.decks]
                assert len(decks) == len(record.deals) + redeals
                assert all(len(set(d)) == 40 for d in decks)
                # Every deal is verifiable: replaying the actions on these decks gives
                # back every deal score and the result.
                game = Game(
                    Options(**{**Options().to_dict(), "target": 11}),
                    decks=decks,
                    first_dealer=record.deals[0].dealer,
                )
                for deal in record.deals:
                    for action in deal.actions:
                        game.apply(action.notation, action.seat)
                assert list(game.totals) == list(record.result.totals)
                decks_by_game.append(decks)
            # The first deck of game 2 is not what one generator continuing after
            # game 1's decks would have dealt.
            stream = random.Random(seed)
            for _ in decks_by_game[0]:
                sorted(range(40), key=lambda _c, r=stream.random: r())
            continued = sorted(range(40), key=lambda _c, r=stream.random: r())
            assert [card_name(c) for c in continued] != decks_by_game[1][0]

    asyncio.run(main())


def test_running_out_of_deck_orders_aborts_the_match_with_a_clear_reason() -> None:
    """Before, the deal that needed a missing deck order left the match hanging."""
    deck = list(range(40))
    random.Random(1).shuffle(deck)
    order = match_settings_pb2.DeckOrder(cards=[cards_pb2.Card(code=card_name(c)) for c in deck])

    async def main() -> None:
        async with serving() as (stub, _srv, _ch):
            request_settings = settings(2, 101)
            request_settings.deck_orders.decks.append(order)  # one deal's worth only
            resp, logs = await asyncio.wait_for(play_match(stub, request_settings, 2), 60)
            for log in logs:
                goodbye = log[-1].goodbye
                assert goodbye.reason == play_pb2.GOODBYE_REASON_ABORTED
                assert goodbye.message.startswith("MatchSettings.deck_orders ran out: deal 2")
            match = (await stub.GetMatch(ms.GetMatchRequest(match_id=resp.match.match_id))).match
            assert match.status == 4  # ABORTED
            assert "deck order #2" in match.abort_reason

    asyncio.run(main())
