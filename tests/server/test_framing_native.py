"""A decision request written in one call from the game's state (``framing.decision_frame``,
the native writer ``convert/_framing.c`` when it is built) is protobuf's own bytes.

Whole random games of 2, 3 and 4 players (declarations, named values of 7H, last takers,
scope and the stock's end included): every decision is written by the native writer, by
the Python writer (``python=True``) and by protobuf from the message built field by field
(``convert.live``); the three must be equal.
"""

from __future__ import annotations

import itertools
import random

import pytest

from cirulla.rules import Action, Game, Options
from cirulla.rules.events import Event, HandDealt, RoundDealt
from cirulla.server.convert import framing
from cirulla.server.convert.live import _play_response, play_responses, python_play_responses
from cirulla.server.messages import (
    AcceptedMsg,
    ClockState,
    DecisionMsg,
    EventMsg,
    GoodbyeMsg,
    SeatPublic,
    ServerMsg,
    ViewMsg,
)
from cirulla.v1 import match_service_pb2
from tests.server.test_framing import _seats as framing_seats
from tests.server.test_framing import _slow

CLOCKS = (
    ClockState(None, None),
    ClockState(0, 0, 0),
    ClockState(2500, 60_000, 100),
    ClockState(123_456_789, None, None),
    ClockState(None, 1 << 40, 7),
)

needs_native = pytest.mark.skipif(framing.native is None, reason="the native writer is not built")


def _python_writer(monkeypatch: pytest.MonkeyPatch) -> None:
    """The server as it runs without the native writer (no C compiler at install): every
    native entry point of ``framing`` as it is then."""
    monkeypatch.setattr(framing, "native", None)
    monkeypatch.setattr(framing, "native_card_played", None)
    monkeypatch.setattr(framing, "batch", framing._no_batch)
    monkeypatch.setattr(framing, "accepted_frame", framing._accepted_frame)


def _seats(players: int, rng: random.Random) -> tuple[SeatPublic, ...]:
    """test_framing's seats, with names long enough for a two-byte length."""
    return framing_seats(players, rng, longest=200)


@needs_native
@pytest.mark.parametrize("players", [2, 3, 4])
def test_the_native_decision_is_protobufs_bytes_over_whole_games(players: int) -> None:
    rng = random.Random(100 + players)
    seen = {"wild": 0, "last_taker": 0, "declared": 0, "no_stock": 0, "decisions": 0}
    for game_number in (1, 2, 300):
        options = Options.preset("standard", players=players, target=21)
        game = Game(options, seed=rng.randrange(1 << 30))
        sequence = decision_id = 0
        while not game.is_over:
            seat = game.to_move
            assert seat is not None
            codes = game.legal_codes()
            seats = _seats(players, rng)
            clock = rng.choice(CLOCKS)
            decision_id += rng.randrange(1, 400)
            sequence += rng.randrange(0, 200)
            args = (game, seat, decision_id, codes, game_number, sequence, seats)
            fast = framing.decision_frame(*args, framing.seat_wire(seats), clock)
            python = framing.decision_frame(*args, framing.seat_wire(seats), clock, python=True)
            view = ViewMsg(game.view(seat), game_number, sequence, seats)
            slow = _slow(DecisionMsg(decision_id, view, tuple(codes), clock, 0), players)
            assert fast == python == slow
            seen["decisions"] += 1
            seen["wild"] += bool(game.wild)
            seen["last_taker"] += game.last_taker >= 0
            seen["declared"] += any(game.declared)
            seen["no_stock"] += not game.stock
            declaring = [c for c in codes if Action.from_int(c).declaration is not None]
            game.apply(rng.choice(declaring or codes), seat)
    assert min(seen.values()) > 0, seen


@needs_native
def test_the_native_decision_writes_long_lists_and_large_numbers() -> None:
    """Indexes past 127 (two-byte varints), numbers past 32 bits."""
    game = Game(Options.preset("standard", players=2, target=11), seed=9)
    seat = game.to_move
    assert seat is not None
    codes = game.legal_codes() * 100
    seats = _seats(2, random.Random(2))
    for decision_id, sequence, clock in (
        (0, 0, ClockState(None, None)),
        (1 << 33, (1 << 50) + 3, ClockState(1 << 35, 0, 1)),
    ):
        args = (game, seat, decision_id, codes, 1 << 20, sequence, seats, framing.seat_wire(seats))
        fast = framing.decision_frame(*args, clock)
        view = ViewMsg(game.view(seat), 1 << 20, sequence, seats)
        assert fast == _slow(DecisionMsg(decision_id, view, tuple(codes), clock, 0), 2)
        parsed = match_service_pb2.PlayResponse.FromString(fast).decision_request
        assert [a.index for a in parsed.legal_actions] == list(range(len(codes)))


@needs_native
def test_the_native_decision_refuses_what_it_cannot_write() -> None:
    game = Game(Options.preset("standard", players=2, target=11), seed=9)
    seats = _seats(2, random.Random(2))
    wire = framing.seat_wire(seats)
    codes = game.legal_codes()
    native = framing.native
    assert native is not None

    def call(**changes: object) -> bytes:
        args: dict[str, object] = {
            "game": game,
            "seat": 0,
            "decision_id": 1,
            "codes": codes,
            "game_number": 1,
            "sequence": 1,
            "seats": wire,
            "clock": None,
            "default_index": 0,
        }
        args.update(changes)
        return bytes(native.decision(*args.values()))

    assert call()  # the arguments above are right
    with pytest.raises(ValueError):
        call(seat=5)
    with pytest.raises(TypeError):
        call(seats=wire[:1])
    with pytest.raises(TypeError):
        call(clock=(1, 2))
    with pytest.raises(OverflowError):
        call(decision_id=-1)
    for bad in (40, 3 << 10 | 1, 1 << 52):  # no such card, declaration, capture
        with pytest.raises(ValueError):
            call(codes=[bad])
        with pytest.raises(ValueError):
            native.notation(bad)


@needs_native
def test_the_native_legal_actions_and_notation_are_the_rules_own() -> None:
    """Every legal code of many random games of 2-4 players (declarations, with and
    without a value named for 7H): its LegalAction as protobuf writes it, its notation as
    ``Action.__str__`` writes it."""
    from cirulla.server.convert.settings import legal_parts
    from cirulla.v1 import game_pb2

    native = framing.native
    assert native is not None
    rng = random.Random(12)
    seen: set[int] = set()
    for players in (2, 3, 4):
        for _ in range(10):
            options = Options.preset("standard", players=players, target=21)
            game = Game(options, seed=rng.randrange(1 << 30))
            while not game.is_over:
                codes = game.legal_codes()
                seen.update(codes)
                declaring = [c for c in codes if Action.from_int(c).declaration is not None]
                game.apply(rng.choice(declaring or codes), game.to_move)
    declared = [Action.from_int(c).declaration for c in seen]
    assert any(d is not None and d.wild_value is not None for d in declared)
    assert any(d is not None and d.wild_value is None for d in declared)
    game = Game(Options.preset("standard", players=2, target=11), seed=1)
    seats = _seats(2, rng)
    codes = sorted(seen)
    frame = framing.decision_frame(
        game, 0, 1, codes, 1, 1, seats, framing.seat_wire(seats), CLOCKS[0]
    )
    listed = match_service_pb2.PlayResponse.FromString(frame).decision_request.legal_actions
    for index, (code, entry) in enumerate(zip(codes, listed, strict=True)):
        action, text = legal_parts(code)
        assert entry == game_pb2.LegalAction(index=index, action=action, notation=text)
        assert native.notation(code) == str(Action.from_int(code)) == framing.notation(code)


@pytest.mark.parametrize(
    ("players", "writer"),
    [(2, "native"), (3, "native"), (4, "native"), (2, "python"), (4, "python")],
)
def test_the_events_and_decisions_a_session_sends_are_protobufs_bytes(
    players: int, writer: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A whole match through the session, seats reading batches with deferred events and
    forced moves played for them (the bot kit's flags): every event the publisher wrote
    once (``EventMsg.framed``) and every decision request is what protobuf writes from
    the message's fields, and each stream's messages parse back in order; with the
    native writer and with the Python one (an install without a C compiler)."""
    if writer == "python":
        _python_writer(monkeypatch)
    elif framing.native is None:
        pytest.skip("the native writer is not built")
    import asyncio

    from cirulla.server.connections import Connection
    from cirulla.server.convert.live import play_responses
    from cirulla.server.decisions import ByIndex
    from cirulla.server.match_config import MatchConfig
    from cirulla.server.messages import AcceptedMsg, EventMsg
    from cirulla.server.session import MatchSession

    async def main() -> dict[str, int]:
        options = Options.preset("standard", players=players, target=21)
        session = MatchSession("m-framed", MatchConfig(options=options, seed=players, best_of=2))
        conns = [Connection() for _ in range(players)]
        for seat, conn in enumerate(conns):
            conn.batches = conn.defer = conn.auto_play_forced = True
            session.attach(seat, conn, name=f"p{seat}é", version="t")
        rng = random.Random(players)
        seen = {"events": 0, "framed": 0, "decisions": 0, "accepted": 0}
        while session.settled_status() == "in_progress":
            for conn in conns:
                msgs = []
                while not conn.queue.empty():
                    msgs.append(conn.queue.get_nowait())
                if not msgs:
                    continue
                batch = match_service_pb2.PlayResponse.FromString(play_responses(msgs, players))
                parsed = list(batch.batch.responses) if len(msgs) > 1 else [batch]
                for msg, got in zip(msgs, parsed, strict=True):
                    if isinstance(msg, EventMsg):
                        seen["events"] += 1
                        seen["framed"] += msg.framed is not None
                        plain = EventMsg(*(getattr(msg, f) for f in EventMsg.__slots__[:6]))
                        assert (
                            got.SerializeToString()
                            == _play_response(plain, players).SerializeToString()
                        )
                    if isinstance(msg, AcceptedMsg):
                        seen["accepted"] += 1
                        plain_accepted = AcceptedMsg(msg.decision_id, msg.index, msg.elapsed_ms)
                        assert msg.framed is not None
                        assert got.SerializeToString() == msg.framed
                        assert (
                            msg.framed
                            == _play_response(plain_accepted, players).SerializeToString()
                        )
                    if isinstance(msg, DecisionMsg):
                        seen["decisions"] += 1
                        assert msg.framed is not None and msg.view is None
                        assert got.SerializeToString() == msg.framed
                decision = session.decision
                last = msgs[-1]
                if isinstance(last, DecisionMsg) and decision is not None:
                    assert decision.id == last.decision_id
                    assert got.decision_request.decision_id == decision.id
                    assert len(got.decision_request.legal_actions) == len(decision.codes)
                    pick = rng.randrange(len(decision.codes))
                    session.submit(conn, decision.id, ByIndex(pick))
            await asyncio.sleep(0)
        return seen

    seen = asyncio.run(main())
    assert seen["framed"] > 100 and seen["decisions"] > 50 and seen["accepted"] > 50, seen
    assert seen["events"] > seen["framed"], seen  # the rarer ones protobuf writes


@needs_native
def test_the_native_played_card_is_protobufs_bytes() -> None:
    """Every card played in random games of 2-4 players (scope, an ace's sweep, 7H counted
    as another value included), private or not, played by the timeout policy or not."""
    from cirulla.rules.cards import WILD
    from cirulla.rules.events import CardPlayed
    from cirulla.server.messages import EventMsg

    native = framing.native
    assert native is not None
    rng = random.Random(5)
    seen = {"played": 0, "scopa": 0, "ace_sweep": 0, "wild_value": 0}
    for players in (2, 3, 4):
        for _ in range(6):
            game = Game(Options.preset("standard", players=players), seed=rng.randrange(1 << 30))
            while not game.is_over:
                code = rng.choice(game.legal_codes())
                for event in game.apply(code, game.to_move):
                    if not isinstance(event, CardPlayed):
                        continue
                    extras = {
                        "notation": rng.choice(("", framing.notation(code), "é☃")),
                        "by_timeout": rng.random() < 0.2,
                    }
                    head = (rng.randrange(1 << 34), rng.randrange(300), rng.randrange(20))
                    private = rng.choice((None, 0, 3))
                    msg = EventMsg(*head, event, private, extras)  # type: ignore[arg-type]
                    slow = _play_response(msg, players).SerializeToString()
                    fast = native.card_played(
                        event, *head, private, extras["notation"], extras["by_timeout"]
                    )
                    assert fast == slow == framing.card_played_response(msg)
                    seen["played"] += 1
                    seen["scopa"] += event.scopa
                    seen["ace_sweep"] += event.ace_sweep
                    seen["wild_value"] += event.card == WILD and event.value != 7
    assert min(seen.values()) > 0, seen


def _round_events(seed: int, players: int) -> list[Event]:
    """Every event of a random game of ``players``."""
    events: list[Event] = []
    game = Game(Options.preset("standard", players=players), seed=seed, events=events)
    rng = random.Random(seed)
    while not game.is_over:
        seat = game.to_move
        events += game.apply(rng.choice(game.legal_codes()), seat)
    return events


@needs_native
@pytest.mark.parametrize("players", [2, 3, 4])
def test_the_events_of_every_round_natively_are_protobufs_bytes(players: int) -> None:
    """A hand dealt and a round dealt (``framing.event_frame``: the publisher's native
    writers), with large numbers and either privacy, as the Python writer and protobuf
    write them."""
    seen = {HandDealt: 0, RoundDealt: 0}
    for event in _round_events(players, players):
        if type(event) not in seen:
            continue
        seen[type(event)] += 1
        for sequence, game_number, deal, private in (
            (1, 1, 1, None),
            (200, 3, 17, 1),
            (1 << 40, 0, 0, 0),
        ):
            native = framing.event_frame(sequence, game_number, deal, event, private, {})
            python = framing.event_frame(
                sequence, game_number, deal, event, private, {}, python=True
            )
            msg = EventMsg(sequence, game_number, deal, event, private, {})
            assert native == python == _play_response(msg, players).SerializeToString()
    assert all(seen.values()), seen


@needs_native
def test_an_acceptance_natively_is_protobufs_bytes() -> None:
    for decision_id, index, elapsed in itertools.product(
        (0, 1, 127, 128, 1 << 35), (0, 5, 300), (0, 1, 16384, 1 << 33)
    ):
        native = framing.accepted_frame(decision_id, index, elapsed)
        assert native == framing._accepted_frame(decision_id, index, elapsed)
        plain = AcceptedMsg(decision_id, index, elapsed)
        assert native == _play_response(plain, 2).SerializeToString()


@needs_native
def test_a_batch_natively_is_the_python_writers() -> None:
    """``framing.batch``: the messages framed when made, as one stream message, byte for
    byte ``live.python_play_responses``; None when one was not framed (the Python writer
    writes that stream message)."""
    rng = random.Random(11)
    framed: list[ServerMsg] = [
        AcceptedMsg(i, i % 7, i * 300, framing.accepted_frame(i, i % 7, i * 300))
        for i in range(200)
    ]
    long_decision = DecisionMsg(1, None, (1,), ClockState(None, None), 0, b"\x32" + b"x" * 20000)
    for count in (1, 2, 3, 9, 64, 100):
        msgs = [rng.choice(framed) for _ in range(count)]
        if count == 9:
            msgs[4] = long_decision  # an entry of a three-byte length
        assert framing.batch(msgs) == python_play_responses(msgs, 2)
        assert play_responses(msgs, 2) == python_play_responses(msgs, 2)
        unframed = [*msgs, GoodbyeMsg("match_finished", "")]
        assert framing.batch(unframed) is None
        assert play_responses(unframed, 2) == python_play_responses(unframed, 2)
        plain = [*msgs[:-1], AcceptedMsg(1, 2, 3)]  # framed=None
        assert framing.batch(plain) is None
    assert framing.batch([]) is None


@needs_native
def test_the_native_writer_is_used_only_whole() -> None:
    """``framing.NATIVE_NAMES`` is everything the built writer offers: a build missing
    one of them (older than the Python files) is not used at all."""
    offered = {name for name in dir(framing.native) if not name.startswith("_")}
    assert offered == set(framing.NATIVE_NAMES)
