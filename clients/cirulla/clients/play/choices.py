"""The legal actions of a decision, arranged for a person choosing with the keyboard.

First a card to play (a declaration together with its card is a choice of its own:
"declare low hand, 7H counted as 1, then play 5C"), then, when that card can capture in
more than one way, which capture. Every choice keeps the protocol's legal action
indexes, so the answer is always one of the numbered legal actions.
"""

from __future__ import annotations

from dataclasses import dataclass

from cirulla.clients.play.table import DECLARATIONS, card, cards
from cirulla.v1 import game_pb2


@dataclass(frozen=True)
class CardChoice:
    """A card (with a declaration, if any) and every legal action that plays it so."""

    label: str
    actions: tuple[game_pb2.LegalAction, ...]


def declaration_text(a: game_pb2.Action) -> str:
    if not a.declaration:
        return ""
    wild = f", 7H counted as {a.wild_value}" if a.HasField("wild_value") else ""
    return f"declare {DECLARATIONS.get(a.declaration, '?')}{wild}"


def card_choices(legal: list[game_pb2.LegalAction]) -> list[CardChoice]:
    groups: dict[tuple[str, int, int], list[game_pb2.LegalAction]] = {}
    for la in legal:
        a = la.action
        key = (a.card.code, a.declaration, a.wild_value if a.HasField("wild_value") else 0)
        groups.setdefault(key, []).append(la)
    out = []
    for actions in groups.values():
        a = actions[0].action
        decl = declaration_text(a)
        label = f"{decl}, then play {card(a.card)}" if decl else f"play {card(a.card)}"
        if len(actions) > 1:
            label += f"  ({len(actions)} ways to capture)"
        elif actions[0].action.captures:
            label += f"  takes {cards(actions[0].action.captures)}"
        else:
            label += "  takes nothing: it stays on the table"
        out.append(CardChoice(label, tuple(actions)))
    return out


def capture_label(la: game_pb2.LegalAction) -> str:
    a = la.action
    if not a.captures:
        return f"{card(a.card)} takes nothing: it stays on the table"
    return f"{card(a.card)} takes {cards(a.captures)}"


def preview(la: game_pb2.LegalAction) -> str:
    """What confirming would do, in words, with the action's notation."""
    a = la.action
    decl = declaration_text(a)
    first = f"{decl[0].upper()}{decl[1:]}, then " if decl else ""
    return f"{first}{capture_label(la)}   [dim]({la.notation})[/]"
