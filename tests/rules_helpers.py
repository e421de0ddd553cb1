"""Helpers to build positions and decks from card codes in tests."""

from __future__ import annotations

import random

from cirulla.rules import Game, Options, parse_cards, parse_mask
from cirulla.rules.cards import ALL_CARDS_MASK, cards_of


def deck(*parts: str) -> list[int]:
    """A 40-card deck order starting with the given cards, the rest in card order."""
    head = [c for part in parts for c in parse_cards(part)]
    rest = [c for c in range(40) if c not in head]
    return head + rest


def deal_deck(hands: list[str], table: str, rest: str = "", players: int = 2) -> list[int]:
    """Deck for a first deal (dealer = last seat): cards go round-robin from seat 0."""
    per_seat = [parse_cards(h) for h in hands]
    head = [per_seat[k % players][k // players] for k in range(3 * players)]
    head += parse_cards(table) + parse_cards(rest)
    return head + [c for c in range(40) if c not in head]


def position(
    hands: list[str],
    table: str = "",
    stock: str = "",
    options: Options | None = None,
    **kwargs,
) -> Game:
    """A mid-deal position; every card not placed elsewhere is in side 0's captured pile,
    unless ``captured`` is given."""
    options = options or Options(players=len(hands))
    hand_masks = [parse_mask(h) for h in hands]
    table_mask = parse_mask(table)
    stock_cards = parse_cards(stock)
    if "captured" not in kwargs:
        used = table_mask | sum(1 << c for c in stock_cards)
        for m in hand_masks:
            used |= m
        captured = [0] * options.sides
        captured[0] = ALL_CARDS_MASK & ~used
        kwargs["captured"] = captured
    return Game.setup(options, hands=hand_masks, table=table_mask, stock=stock_cards, **kwargs)


def names(mask: int) -> list[str]:
    from cirulla.rules import card_name

    return [card_name(c) for c in cards_of(mask)]


def deal_positions(players: int, seed: int) -> list[Game]:
    """Copies of every decision of one random deal-only game (all shapes of positions)."""
    rng = random.Random(seed)
    game = Game(Options(players=players), seed=seed, deal_only=True)
    out = []
    while not game.deal_over:
        out.append(game.copy())
        game.apply_code(rng.choice(game.legal_codes()))
    return out
