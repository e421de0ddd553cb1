"""A record's event entries (``documents.event_entry``) are ``Event.to_dict()`` with the
event's sequence, deal, receiver and extras: the fast path for played cards writes the
same dict, key for key and in the same order, over whole games."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from cirulla.rules import Game, Options
from cirulla.rules.events import CardPlayed
from cirulla.server.documents import event_entry, record_events
from cirulla.server.messages import EventMsg


def _general(msg: EventMsg) -> dict[str, Any]:
    return {
        "sequence": msg.sequence,
        "deal": msg.deal_number,
        "private_to": msg.private_to,
        **msg.extras,
        **msg.event.to_dict(),
    }


@pytest.mark.parametrize("players", [2, 3, 4])
def test_event_entries_equal_the_general_form_for_whole_games(players: int) -> None:
    rng = random.Random(players)
    played = 0
    for _ in range(3):
        game = Game(
            Options.preset("standard", players=players, target=21), seed=rng.randrange(1 << 30)
        )
        sequence = 0
        entries = []
        events = []
        while not game.is_over:
            seat = game.to_move
            assert seat is not None
            code = rng.choice(game.legal_codes())
            for event in game.apply(code, seat):
                sequence += 1
                extras: Any = {}
                if isinstance(event, CardPlayed):
                    extras = {"by_timeout": rng.random() < 0.1, "notation": f"n{code}"}
                    played += 1
                private = rng.choice((None, seat))
                msg = EventMsg(sequence, 1, rng.randrange(1, 9), event, private, extras)
                entry = event_entry(msg)
                assert entry == _general(msg)
                assert list(entry) == list(_general(msg))
                assert json.dumps(entry) == json.dumps(_general(msg))
                entries.append(entry)
                events.append(event)
        # and they read back as the events they were
        back = record_events({"game_number": 1, "events": entries})  # type: ignore[typeddict-item]
        assert [m.event for m in back] == events
    assert played > 100
