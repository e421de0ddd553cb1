"""The kit's native decision reader (``cirulla.bots._decode``) reads what the Python
reader reads, and leaves to it whatever it does not read as the server writes it.

Every decision of real games (2, 3 and 4 players, declarations with the wild card named)
is written by the server's framing and read by ``decision_from_proto``: the view and the
numbered actions come back as the referee had them, through the native reader. Messages
the native reader refuses (a card given by its code alone, a card listed twice, an index
repeated, a field repeated, a malformed message) come out as the Python reader's result
or its error naming the field.
"""

from __future__ import annotations

import random

import pytest

from cirulla.bots import convert
from cirulla.bots.convert import (
    ProtocolDataError,
    decision_from_proto,
    legal_from_proto,
    view_from_proto,
)
from cirulla.rules import Game, Options
from cirulla.server.convert import framing
from cirulla.server.messages import ClockState, SeatPublic
from cirulla.v1 import cards_pb2, match_service_pb2, play_pb2


def _native() -> object:
    native = convert._native
    if native is None:
        pytest.skip("cirulla.bots._decode is not built (no C compiler at install)")
    return native


def _requests(players: int, games: int = 2) -> list[tuple[play_pb2.DecisionRequest, Game, int]]:
    """(the request, a copy of the game it was written from, its seat) for every decision."""
    options = Options.preset("standard", players=players, target=16)
    seats = tuple(SeatPublic(s, options.side_of(s), f"p{s}", "1", True) for s in range(players))
    wire = framing.seat_wire(seats)
    rng = random.Random(players)
    out = []
    for seed in range(games):
        game = Game(options, seed=seed)
        number = 0
        while not game.is_over:
            seat = game.to_move
            codes = game.legal_codes()
            number += 1
            clock = ClockState(5000, None) if number % 2 else ClockState(None, 9000, 100)
            data = framing.decision_frame(game, seat, number, codes, 1, number, seats, wire, clock)
            request = match_service_pb2.PlayResponse.FromString(data).decision_request
            out.append((request, game.copy(), seat))
            declaring = [c for c in codes if c >> 6 & 63]  # the wild card's naming too
            game.apply_code(rng.choice(declaring or codes))
    return out


@pytest.mark.parametrize("players", [2, 3, 4])
def test_every_decision_is_read_natively_as_the_referee_had_it(players: int) -> None:
    native = _native()
    options = Options.preset("standard", players=players, target=16)
    for request, game, seat in _requests(players):
        assert native.decision(request.SerializeToString()) is not None  # type: ignore[attr-defined]
        view, legal = decision_from_proto(request, options)
        assert view == game.view(seat) == view_from_proto(request.view, options)
        assert [a.to_int() for a in legal] == game.legal_codes()
        assert legal == legal_from_proto(request.legal_actions)


def _one_request() -> play_pb2.DecisionRequest:
    return _requests(2, games=1)[5][0]


def test_what_the_native_reader_leaves_is_read_in_python() -> None:
    native = _native()
    options = Options.preset("standard", players=2, target=16)
    request = _one_request()
    expected = decision_from_proto(request, options)
    # a card by its code alone: valid, not as the server writes it
    by_code = play_pb2.DecisionRequest()
    by_code.CopyFrom(request)
    first = by_code.legal_actions[0].action.card
    first.CopyFrom(cards_pb2.Card(code=first.code))
    assert native.decision(by_code.SerializeToString()) is None  # type: ignore[attr-defined]
    assert decision_from_proto(by_code, options) == expected
    # an unknown field (a later protocol's) is skipped, as protobuf does
    extra = request.SerializeToString() + bytes([15 << 3 | 0, 7])  # field 15: unused
    assert native.decision(extra) is not None  # type: ignore[attr-defined]
    later = play_pb2.DecisionRequest.FromString(extra)
    assert decision_from_proto(later, options) == expected
    # malformed bytes: refused natively
    assert native.decision(request.SerializeToString()[:-3]) is None  # type: ignore[attr-defined]


def test_bad_decisions_are_named_by_the_python_reader() -> None:
    _native()
    options = Options.preset("standard", players=2, target=16)
    request = _one_request()

    twice = play_pb2.DecisionRequest()
    twice.CopyFrom(request)
    twice.view.hand.append(twice.view.hand[0])
    with pytest.raises(ProtocolDataError, match=r"view\.hand\[\d+\]: .* is listed twice"):
        decision_from_proto(twice, options)

    repeated = play_pb2.DecisionRequest()
    repeated.CopyFrom(request)
    repeated.legal_actions.append(repeated.legal_actions[0])
    with pytest.raises(ProtocolDataError, match=r"legal_actions\[\d+\]\.index"):
        decision_from_proto(repeated, options)

    empty = play_pb2.DecisionRequest()
    empty.CopyFrom(request)
    del empty.legal_actions[:]
    with pytest.raises(ProtocolDataError, match="legal_actions"):
        decision_from_proto(empty, options)

    with pytest.raises(ProtocolDataError, match=r"view\.players"):
        decision_from_proto(request, Options.preset("standard", players=3, target=16))

    self_capture = play_pb2.DecisionRequest()
    self_capture.CopyFrom(request)
    action = self_capture.legal_actions[0].action
    action.captures.append(action.card)
    with pytest.raises(ProtocolDataError, match=r"legal_actions\[0\]\.action"):
        decision_from_proto(self_capture, options)
