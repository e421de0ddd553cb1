"""One registry of event types (cirulla.rules.events): the rules core, the native core,
the server's conversion, records and the text protocol all name each type from it, and
every consumer knows every registered type (adding one fails here until each does)."""

from __future__ import annotations

import random

import pytest

import cirulla.server.messages  # noqa: F401 - registers the server's own event types
from cirulla.bots.text.protocol import event_text
from cirulla.rules import Game, Options
from cirulla.rules.core import CORE, event_of
from cirulla.rules.events import BY_CLASS, BY_NAME, BY_NATIVE, EVENT_TYPES, Event, HandDealt
from cirulla.server.convert.live import EVENT_BUILDERS, event_pb
from cirulla.server.messages import Disconnected, EventMsg, GameEnded, Reconnected, TimedOut
from cirulla.v1 import events_pb2


def played_events(seed: int, players: int) -> list[Event]:
    """Every event of a whole seeded game, random moves, on the running core."""
    events: list[Event] = []
    game = Game(Options.preset("standard", players=players), seed=seed, events=events)
    rng = random.Random(seed)
    while not game.is_over:
        events.extend(game.apply(rng.choice(game.legal_actions())))
    return events


SERVER_EVENTS: list[Event] = [
    GameEnded(1, 0, (51, 20), False, "target", None, 7, (1, 0)),
    TimedOut(1, "play_default_action"),
    Disconnected(0, 30_000),
    Reconnected(0),
]


def test_the_protocols_event_fields_are_the_registrys() -> None:
    body = events_pb2.Event.DESCRIPTOR.oneofs_by_name["body"]
    wire = {t.wire for t in EVENT_TYPES if t.wire}
    assert {f.name for f in body.fields} == wire
    assert set(EVENT_BUILDERS) == {t.cls for t in EVENT_TYPES if t.wire}


def test_names_and_codes_are_unique_and_complete() -> None:
    assert len(BY_NAME) == len(EVENT_TYPES) == len(BY_CLASS)
    assert sorted(BY_NATIVE) == list(range(1, len(BY_NATIVE) + 1))


@pytest.mark.parametrize("players", [2, 4])
def test_every_played_event_goes_through_every_consumer(players: int) -> None:
    rules_types = {t.cls for t in EVENT_TYPES if t.native}
    events: list[Event] = []
    for seed in range(1, 200):  # until every type the rules emit came up (redeals are rare)
        events += played_events(seed, players)
        if rules_types <= {type(e) for e in events}:
            break
    assert rules_types <= {type(e) for e in events}
    for n, event in enumerate(events + SERVER_EVENTS, 1):
        entry = BY_CLASS[type(event)]
        # records: the registry's name reads the event back
        assert BY_NAME[event.to_dict()["type"]].cls.from_dict(event.to_dict()) == event
        if not entry.wire:  # the rules' GameOver: the server sends GameEnded for it
            continue
        private = None if event.visible_to(None) else 0
        pb = event_pb(EventMsg(n, 1, 1, event, private), players)
        assert pb.WhichOneof("body") == entry.wire
        line = event_text(pb)
        if entry.text:
            assert line is not None and line.split()[0] == entry.text, (entry.name, line)
        else:
            assert line is None and isinstance(event, HandDealt)


def test_the_native_cores_codes_are_the_registrys() -> None:
    from cirulla.rules.core import native

    assert CORE == "native" and native is not None, "the native core was not built"
    game = native.Game((2, 51, 1, 0, 1, 1, 1, 6, 1), None, 5)
    codes = set()
    while True:
        raw = game.take_events()
        for item in raw:
            codes.add(item[0])
            assert type(event_of(tuple(item))) is BY_NATIVE[item[0]].cls
        legal = game.legal_codes()
        if not legal:
            break
        game.apply_code(legal[0])
    assert len(codes) >= 7 and codes <= set(BY_NATIVE)
    with pytest.raises(ValueError, match="unknown native event type 99"):
        event_of((99,))
