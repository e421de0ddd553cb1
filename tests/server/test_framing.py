"""The hand-written bytes of a move's messages (``convert.framing``) are protobuf's own.

Whole random games of 2, 3 and 4 players, every decision (the mover's view and legal
actions, with and without a clock), every acceptance, every played card, hand dealt and
round dealt: the bytes
``framing`` writes must equal what protobuf serializes from the message built field by
field (``convert.live``), and parse back to the same message.
"""

from __future__ import annotations

import random

import pytest

from cirulla.rules import Game, Options
from cirulla.rules.events import CardPlayed
from cirulla.server.convert import framing
from cirulla.server.convert.live import _play_response, play_response_bytes, play_responses
from cirulla.server.messages import (
    AcceptedMsg,
    ClockState,
    DecisionMsg,
    EventMsg,
    SeatPublic,
    ViewMsg,
)
from cirulla.v1 import match_service_pb2

CLOCKS = (
    None,
    ClockState(None, None),
    ClockState(0, 0, 0),
    ClockState(2500, 60_000, 100),
    ClockState(123_456_789, None),
)


def _seats(players: int, rng: random.Random, longest: int = 64) -> tuple[SeatPublic, ...]:
    """Random public seats: names empty, short, not ASCII, or ``longest`` characters."""
    names = ("", "ann", "Bé ☃", "x" * longest)
    return tuple(
        SeatPublic(
            s, s % (2 if players == 4 else players), rng.choice(names), "v1", rng.random() < 0.8
        )
        for s in range(players)
    )


def _slow(msg: object, players: int) -> bytes:
    return _play_response(msg, players).SerializeToString()


@pytest.mark.parametrize("players", [2, 3, 4])
def test_framing_writes_protobufs_bytes_for_whole_games(players: int) -> None:
    rng = random.Random(players)
    checked = {"decision": 0, "accepted": 0, "card_played": 0}
    for game_number in range(1, 4):
        options = Options.preset("standard", players=players, target=21)
        game = Game(options, seed=rng.randrange(1 << 30))
        seats = _seats(players, rng)
        sequence = decision_id = 0
        while not game.is_over:
            seat = game.to_move
            assert seat is not None
            codes = tuple(game.legal_codes())
            decision_id += rng.randrange(1, 400)
            view = ViewMsg(game.view(seat), game_number, sequence, seats)
            decision = DecisionMsg(
                decision_id, view, codes, rng.choice(CLOCKS), rng.randrange(len(codes))
            )
            fast = framing.decision_response(decision)
            assert fast == _slow(decision, players)
            parsed = match_service_pb2.PlayResponse.FromString(fast)
            assert list(parsed.decision_request.legal_actions)[-1].index == len(codes) - 1
            checked["decision"] += 1
            code = rng.choice(codes)
            accepted = AcceptedMsg(decision_id, codes.index(code), rng.choice((0, 7, 90_000)))
            assert framing.accepted_response(accepted) == _slow(accepted, players)
            checked["accepted"] += 1
            for event in game.apply(code, seat):
                sequence += rng.randrange(1, 3)
                private = rng.choice((None, 0, players - 1))
                if not isinstance(event, CardPlayed):
                    other = EventMsg(sequence, game_number, rng.randrange(0, 9), event, private)
                    framed = framing.event_response(other)
                    if framed is not None:
                        assert framed == _slow(other, players)
                        assert play_response_bytes(other, players) == framed
                        checked[type(event).__name__] = checked.get(type(event).__name__, 0) + 1
                    continue
                extras = {"notation": f"n{code}", "by_timeout": rng.random() < 0.1}
                msg = EventMsg(sequence, game_number, rng.randrange(1, 9), event, private, extras)
                fast_event = framing.card_played_response(msg)
                assert fast_event == _slow(msg, players)
                assert play_response_bytes(msg, players) == fast_event
                assert framing.event_response(msg) == fast_event
                checked["card_played"] += 1
                for flag in ("scopa", "ace_sweep"):
                    if getattr(event, flag):
                        checked[flag] = checked.get(flag, 0) + 1
    assert min(v for k, v in checked.items() if k != "ace_sweep") > 10, checked
    assert {"HandDealt", "RoundDealt", "scopa", "ace_sweep"} <= set(checked), checked


def test_a_batch_of_framed_messages_parses_as_the_messages_in_order() -> None:
    game = Game(Options.preset("standard", players=2, target=11), seed=5)
    seats = _seats(2, random.Random(1))
    codes = tuple(game.legal_codes())
    decision = DecisionMsg(9, ViewMsg(game.view(0), 1, 4, seats), codes, ClockState(10, 20), 0)
    accepted = AcceptedMsg(8, 1, 12)
    batch = match_service_pb2.PlayResponse.FromString(play_responses([accepted, decision], 2))
    kinds = [r.WhichOneof("body") for r in batch.batch.responses]
    assert kinds == ["action_accepted", "decision_request"]
    assert batch.batch.responses[1].SerializeToString() == _slow(decision, 2)


def test_framing_refuses_nothing_it_does_not_know_and_leaves_other_events_to_protobuf() -> None:
    game = Game(Options.preset("standard", players=2, target=11), seed=3)
    events = game.apply(game.legal_codes()[0], game.to_move or 0)
    others = [e for e in events if not isinstance(e, CardPlayed)]
    for event in others:
        assert framing.card_played_response(EventMsg(1, 1, 1, event)) is None
    framed = {type(e).__name__ for e in others if framing.event_response(EventMsg(1, 1, 1, e))}
    assert framed <= {"HandDealt", "RoundDealt"}
    assert framing.varint(300) == b"\xac\x02"
    assert framing.varint(1 << 20) == b"\x80\x80\x40"


def test_every_legal_action_is_written_as_protobuf_writes_it() -> None:
    """Each code's LegalAction fields, written by hand (``framing._legal_body``), over the
    legal actions of many random positions: declarations (with and without a value named
    for 7H) included."""
    from cirulla.rules import Action
    from cirulla.server.convert.settings import legal_parts
    from cirulla.v1 import game_pb2

    rng = random.Random(11)
    seen: set[int] = set()
    for players in (2, 3, 4):
        for _ in range(12):
            game = Game(
                Options.preset("standard", players=players, target=21), seed=rng.randrange(1 << 30)
            )
            while not game.is_over:
                codes = game.legal_codes()
                seen.update(codes)
                declaring = [c for c in codes if Action.from_int(c).declaration is not None]
                game.apply(rng.choice(declaring or codes), game.to_move)
    declared = [Action.from_int(c).declaration for c in seen]
    assert sum(d is not None for d in declared) > 10
    assert any(d is not None and d.wild_value is not None for d in declared)
    for code in seen:
        action, text = legal_parts(code)
        for index in (0, 1, 300):
            slow = game_pb2.LegalAction(index=index, action=action, notation=text)
            fast = framing._legal_actions([code] * (index + 1))
            entry = match_service_pb2.PlayResponse.FromString(
                framing.message_field(6, framing.message_field(2, b"") + fast)
            ).decision_request.legal_actions[index]
            assert entry == slow
        assert (
            framing._legal_body(code)
            == game_pb2.LegalAction(action=action, notation=text).SerializeToString()
        )
