"""The kit's protocol -> rules-core conversion, checked against the server's encoder.

Every decision of real games (all player counts, declarations with the wild card
included) is encoded by the server's converter and decoded by the kit's: the view and the
numbered actions must come back exactly as the referee had them.
"""

from __future__ import annotations

import random

import pytest

from cirulla.bots.convert import (
    ProtocolDataError,
    clock_seconds,
    legal_from_proto,
    view_from_proto,
)
from cirulla.bots.thinking import time_budget
from cirulla.rules import Action, Game, Options
from cirulla.server.convert.live import decision_pb
from cirulla.server.messages import ClockState, DecisionMsg, SeatPublic, ViewMsg
from cirulla.v1 import cards_pb2, game_pb2
from cirulla.wire import action_from_proto, action_to_proto, options_from_proto, options_to_proto


def seats(n: int, options: Options) -> tuple[SeatPublic, ...]:
    return tuple(SeatPublic(s, options.side_of(s), f"p{s}", "1", True) for s in range(n))


@pytest.mark.parametrize("players", [2, 3, 4])
def test_every_decision_round_trips_through_the_wire(players: int) -> None:
    options = Options.preset("standard", players=players, target=16)
    rng = random.Random(players)
    for seed in range(2):
        game = Game(options, seed=seed)
        decisions = 0
        while not game.is_over:
            seat = game.to_move
            codes = game.legal_codes()
            msg = DecisionMsg(
                decisions,
                ViewMsg(game.view(seat), 1, decisions, seats(players, options)),
                tuple(codes),
                ClockState(5000, None),
            )
            wire = decision_pb(msg)
            decoded_options = options_from_proto(options_to_proto(options))
            assert decoded_options == options
            assert view_from_proto(wire.view, decoded_options) == game.view(seat)
            assert [a.to_int() for a in legal_from_proto(wire.legal_actions)] == codes
            # Prefer declarations so the wild-card naming is exercised too.
            declaring = [c for c in codes if c >> 6 & 63]
            game.apply_code(rng.choice(declaring or codes))
            decisions += 1


def test_actions_round_trip_including_the_named_wild() -> None:
    for text in ("5H", "5H:2C+3S", "low:7H=1 AC:AS", "three:7H=2 2C"):
        action = Action.parse(text)
        assert action_from_proto(action_to_proto(action)) == action


def test_bad_wire_data_names_the_field() -> None:
    bad_card = game_pb2.Action(card=cards_pb2.Card(code="1X"))
    with pytest.raises(ProtocolDataError, match=r"action\.card: unknown card code '1X'"):
        action_from_proto(bad_card)
    twice = game_pb2.Action(
        card=cards_pb2.Card(code="5H"),
        captures=[cards_pb2.Card(code="2C"), cards_pb2.Card(code="2c")],
    )
    with pytest.raises(ProtocolDataError, match=r"action\.captures\[1\]: 2C is listed twice"):
        action_from_proto(twice)
    with pytest.raises(ProtocolDataError, match="legal_actions"):
        legal_from_proto([])


def test_clock_budget_keeps_a_margin_and_shares_the_bank() -> None:
    assert clock_seconds(game_pb2.Clock()) == (None, None)
    assert clock_seconds(game_pb2.Clock(move_time_left_ms=1500)) == (1.5, None)
    assert time_budget(None, None) is None
    assert time_budget(1.0, None) == pytest.approx(0.85)
    assert time_budget(0.3, None) == pytest.approx(0.2)
    assert time_budget(10.0, 60.0) == pytest.approx(60 / 30 - 0.05)
    assert time_budget(0.05, None) == 0.0
