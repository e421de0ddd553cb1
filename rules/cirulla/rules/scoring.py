"""Deal scoring: cards, coins, settebello, primiera, scope, grande, piccola, cappotto."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, TypedDict, get_args

from cirulla.rules.cards import (
    COINS_MASK,
    DIAMONDS,
    GRANDE_MASK,
    PRIMIERA_POINTS,
    SETTEBELLO,
    SUIT_MASKS,
    make_card,
)
from cirulla.rules.options import Options

#: A side's score items in a deal, in the order the records, the pages and the
#: environments' info list them (``total`` is their sum).
ScoreItem = Literal["cards", "coins", "settebello", "primiera", "scope", "grande", "piccola"]
SCORE_ITEMS: tuple[ScoreItem, ...] = get_args(ScoreItem)


class SideScoreDoc(TypedDict):
    """One side's points in a deal, item by item, as JSON (``SideScore.to_dict()``): the
    records', the rule cases' and the live view's shape."""

    cards: int
    coins: int
    settebello: int
    primiera: int
    scope: int
    grande: int
    piccola: int
    total: int


class DealScoreDoc(TypedDict):
    """A deal's score as JSON (``DealScore.to_dict()``): each side's, and who made cappotto."""

    sides: list[SideScoreDoc]
    cappotto: int | None


@dataclass(frozen=True, slots=True)
class SideScore:
    """Points one side made in one deal, item by item (RULES.md, "Scoring")."""

    cards: int
    coins: int
    settebello: int
    primiera: int
    scope: int
    grande: int
    piccola: int

    @property
    def total(self) -> int:
        return (
            self.cards
            + self.coins
            + self.settebello
            + self.primiera
            + self.scope
            + self.grande
            + self.piccola
        )

    def to_dict(self) -> SideScoreDoc:
        return {
            "cards": self.cards,
            "coins": self.coins,
            "settebello": self.settebello,
            "primiera": self.primiera,
            "scope": self.scope,
            "grande": self.grande,
            "piccola": self.piccola,
            "total": self.total,
        }


@dataclass(frozen=True, slots=True)
class DealScore:
    sides: tuple[SideScore, ...]
    cappotto: int | None  # the side that took all ten coins, if any
    #: Each side's captured cards (masks) as scored; not part of the score's value.
    captured: tuple[int, ...] = field(default=(), compare=False)

    def counts(self) -> list[tuple[int, int, int]]:
        """Per side: cards, coins and primiera value captured (empty if unknown)."""
        return [capture_counts(m) for m in self.captured]

    @property
    def totals(self) -> tuple[int, ...]:
        return tuple(s.total for s in self.sides)

    def to_dict(self) -> DealScoreDoc:
        return {"sides": [s.to_dict() for s in self.sides], "cappotto": self.cappotto}


def capture_counts(captured: int) -> tuple[int, int, int]:
    """Cards, coins and primiera value (best card per suit, summed) of one side's pile."""
    return captured.bit_count(), (captured & COINS_MASK).bit_count(), primiera_value(captured)[0]


def primiera_value(captured: int) -> tuple[int, bool]:
    """Sum of the best primiera card per suit, and whether every suit is present."""
    total = 0
    complete = True
    for suit_mask, order in zip(SUIT_MASKS, _PRIMIERA_ORDER, strict=True):
        if captured & suit_mask:
            total += next(PRIMIERA_POINTS[c] for c in order if captured >> c & 1)
        else:
            complete = False
    return total, complete


# Each suit's cards from the best primiera card down (7, 6, A, 5, 4, 3, 2, J, Q, K).
_PRIMIERA_ORDER = tuple(
    tuple(sorted((make_card(v, s) for v in range(1, 11)), key=lambda c: -PRIMIERA_POINTS[c]))
    for s in range(4)
)


def piccola_points(captured: int, piccola_max: int) -> int:
    """3 for A-2-3 of coins, +1 per further coin in unbroken sequence up to ``piccola_max``."""
    run = 0
    for value in range(1, piccola_max + 1):
        if not captured >> make_card(value, DIAMONDS) & 1:
            break
        run = value
    return run if run >= 3 else 0


def _unique_top(values: Sequence[int]) -> int | None:
    best = max(values)
    return values.index(best) if values.count(best) == 1 else None


def score_deal(options: Options, captured: Sequence[int], scope: Sequence[int]) -> DealScore:
    """Score one deal from each side's captured cards (masks) and scope."""
    n_cards = [m.bit_count() for m in captured]
    n_coins = [(m & COINS_MASK).bit_count() for m in captured]
    prim = [primiera_value(m) for m in captured]
    prim_values = [
        value if complete or not options.primiera_needs_all_suits else -1
        for value, complete in prim
    ]
    cards_winner = _unique_top(n_cards)
    coins_winner = _unique_top(n_coins)
    prim_winner = _unique_top(prim_values)
    if prim_winner is not None and prim_values[prim_winner] < 0:
        prim_winner = None
    sides = tuple(
        SideScore(
            cards=int(cards_winner == i),
            coins=int(coins_winner == i),
            settebello=int(bool(m >> SETTEBELLO & 1)),
            primiera=int(prim_winner == i),
            scope=scope[i],
            grande=5 if m & GRANDE_MASK == GRANDE_MASK else 0,
            piccola=piccola_points(m, options.piccola_max),
        )
        for i, m in enumerate(captured)
    )
    cappotto = next((i for i, c in enumerate(n_coins) if c == 10), None)
    return DealScore(sides, cappotto if options.cappotto else None, tuple(captured))
