"""A finished game as a list of steps for the replay viewer.

The record's decks and actions are run through the rules core (as ``cirulla replay``
does), and after every action the whole table is written down: hands, table, what each
side took, scope, totals, the last card played and what it took, and at the end of each
deal its score breakdown. A record is
public once the server serves it, hands included, so the replay shows every hand.
"""

from __future__ import annotations

from typing import TypedDict

from cirulla.rules import Game, Options
from cirulla.rules.cards import names_of
from cirulla.rules.events import CardPlayed, DealerBonus, DealScored, Declared, Event, LastTake
from cirulla.rules.scoring import SCORE_ITEMS, SideScoreDoc
from cirulla.server import records
from cirulla.v1 import match_pb2


class SeatInfo(TypedDict):
    seat: int
    side: int
    name: str


class PlayedInfo(TypedDict):
    """The last card played in the deal: who, what, what it took (``table.Played``)."""

    seat: int
    card: str
    captured: list[str]
    scopa: bool
    ace_sweep: bool


class ScoreInfo(TypedDict):
    """A deal's score: each side's items (``SCORE_ITEMS`` and ``total``)."""

    deal: int
    sides: list[SideScoreDoc]
    cappotto: int | None
    totals: list[int]


class Table(TypedDict):
    """The whole table after a step (every hand: a record is public)."""

    deal: int
    dealer: int
    to_move: int | None
    hands: list[list[str]]
    table: list[str]
    captured: list[list[str]]
    scope: list[int]
    totals: list[int]
    wild: int | None
    stock: int


class Step(Table):
    #: the action in words ("" for the opening table), and the events it made
    action: str
    log: list[str]
    score: ScoreInfo | None
    played: PlayedInfo | None
    #: the deal the action was played in (``deal`` is the one on the table after it)
    move_deal: int


class Replay(TypedDict):
    record_id: str
    match_id: str
    seats: list[SeatInfo]
    score_items: list[str]
    steps: list[Step]
    result: str


def _seat_label(names: dict[int, str], seat: int) -> str:
    return f"seat {seat} {names.get(seat, '')}".rstrip()


def _step(
    game: Game,
    action: str,
    log: list[str],
    score: ScoreInfo | None,
    played: PlayedInfo | None,
    move_deal: int,
) -> Step:
    return {
        "action": action,
        "log": log,
        "score": score,
        "played": played,
        "move_deal": move_deal,
        "deal": game.deal_no,
        "dealer": game.dealer,
        "to_move": game.to_move,
        "hands": [names_of(h) for h in game.hands],
        "table": names_of(game.table),
        "captured": [names_of(c) for c in game.captured],
        "scope": list(game.scope),
        "totals": list(game.totals),
        "wild": game.wild or None,
        "stock": game.stock_count,
    }


def _describe(event: Event, names: dict[int, str]) -> str:
    if isinstance(event, CardPlayed):
        took = f" takes {' '.join(names_of(event.captured))}" if event.captured else ""
        flags = " ACE SWEEP" if event.ace_sweep else ""
        flags += " SCOPA" if event.scopa else ""
        return f"{_seat_label(names, event.seat)} plays {names_of(1 << event.card)[0]}{took}{flags}"
    if isinstance(event, Declared):
        return (
            f"{_seat_label(names, event.seat)} declares {event.kind.label.replace('_', ' ')} "
            f"{' '.join(names_of(event.cards))} (+{event.points} scope)"
        )
    if isinstance(event, DealerBonus):
        return f"dealer's bonus: side {event.side} +{event.scope} scope"
    if isinstance(event, LastTake) and event.side is not None and event.cards:
        return f"last take: side {event.side} gets {' '.join(names_of(event.cards))}"
    if isinstance(event, DealScored):
        return f"deal {event.deal} scored: game {' - '.join(map(str, event.totals))}"
    return ""


def replay_steps(record: match_pb2.Record) -> Replay:
    """Every step of the game: step 0 is the first deal's opening table."""
    data = records.replay_input(record)
    game = Game(Options(**data["options"]), decks=data["decks"], first_dealer=data["first_dealer"])
    names = {s.seat: s.name for s in record.seats}
    steps = [_step(game, "", [], None, None, 1)]
    played: PlayedInfo | None = None
    for act in data["actions"]:
        deal = game.deal_no
        events = game.apply(act["code"], act["seat"])
        score: ScoreInfo | None = None
        for e in events:
            if isinstance(e, CardPlayed):
                played = {
                    "seat": e.seat,
                    "card": names_of(1 << e.card)[0],
                    "captured": names_of(e.captured),
                    "scopa": e.scopa,
                    "ace_sweep": e.ace_sweep,
                }
            if isinstance(e, DealScored):
                score = {
                    "deal": e.deal,
                    "sides": [s.to_dict() for s in e.score.sides],
                    "cappotto": e.score.cappotto,
                    "totals": list(e.totals),
                }
        log = [line for line in (_describe(e, names) for e in events) if line]
        action = f"{_seat_label(names, act['seat'])}: {act['notation']}"
        if game.deal_no != deal:  # a new deal is on the table: nothing played in it yet
            played = None
        steps.append(_step(game, action, log, score, played, deal))
    return {
        "record_id": record.record_id,
        "match_id": record.match_id,
        "seats": [{"seat": s.seat, "side": s.side, "name": s.name} for s in record.seats],
        "score_items": list(SCORE_ITEMS),
        "steps": steps,
        "result": records.result_line(record.result, record),
    }
