"""A player's name is text, never markup, on ``cirulla play``'s and ``cirulla watch``'s
screen: the screen is Rich markup (``table.TableState``), and a seat's name is whatever
its player sent in Hello. ``[/x]`` in it made ``Text.from_markup`` raise in the human's
terminal (the event log died), and ``[link=...]`` turned a name into a link."""

from __future__ import annotations

from rich.text import Text

from cirulla.clients.play.table import TableState
from cirulla.v1 import cards_pb2, events_pb2, game_pb2, match_pb2

HOSTILE = "[/x] [link=https://evil.example]click[/link] [b red]"


def state_with_a_hostile_opponent() -> TableState:
    state = TableState(seat=0, match_id="m-1")
    state.on_seats(
        [
            match_pb2.SeatInfo(seat=0, side=0, name="me"),
            match_pb2.SeatInfo(seat=1, side=1, name=HOSTILE),
        ]
    )
    return state


def rendered(markup: str) -> Text:
    """What the app does with every line and panel (``Text.from_markup``)."""
    return Text.from_markup(markup)


def test_a_name_with_markup_shows_as_typed_in_the_log_and_the_panels() -> None:
    state = state_with_a_hostile_opponent()
    state.on_event(
        events_pb2.Event(
            sequence=1,
            deal_started=events_pb2.DealStarted(deal_number=1, dealer=1),
        )
    )
    seven = cards_pb2.Card(code="7C", rank=7, suit=cards_pb2.SUIT_CLUBS)
    state.on_event(
        events_pb2.Event(
            sequence=2,
            card_played=events_pb2.CardPlayed(seat=1, side=1, card=seven),
        )
    )
    state.on_view(
        game_pb2.View(
            event_sequence=3,  # newer than the two events: it replaces their fold
            players=2,
            seats=[
                game_pb2.SeatState(seat=0, side=0, hand_count=3),
                game_pb2.SeatState(seat=1, side=1, hand_count=2),
            ],
            sides=[game_pb2.SideState(side=0), game_pb2.SideState(side=1)],
            dealer=1,
            to_move=1,
            deal_number=1,
        )
    )
    lines = list(state.log)
    assert len(lines) == 2, lines
    for markup in [*lines, state.status_text(), state.sides_text()]:
        text = rendered(markup)  # raised MarkupError before names were escaped
        assert HOSTILE in text.plain, (markup, text.plain)
        # no link and no style the name asked for: the spans are the screen's own
        assert not any("link" in str(span.style) for span in text.spans), text.spans
    assert f"seat 1 {HOSTILE} plays" in rendered(lines[1]).plain
    assert f"to move: seat 1 {HOSTILE}" in rendered(state.status_text()).plain
