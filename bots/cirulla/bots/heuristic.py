"""What a card, a capture and a table are worth, in deal points, as a club player reckons.

One module serves two speeds. ``Appraiser`` is the careful version the greedy bot uses: it
knows the seat's view, so it can tell that the grande is already lost or that the next
player surely holds an ace. ``playout_code`` is the cheap version MCTS calls tens of
thousands of times a second: static card worth summed from byte tables, captures looked up
in the rules core's cache, no view objects.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from cirulla.rules.actions import DECLARATION_POINTS, declaration_codes, decode
from cirulla.rules.captures import captures_by_value, entry_captures, table_entry
from cirulla.rules.cards import (
    ACES_MASK,
    ALL_CARDS_MASK,
    COINS_MASK,
    GRANDE_MASK,
    NUM_CARDS,
    SETTEBELLO,
    SUIT_MASKS,
    VALUES,
    WILD,
    cards_of,
    make_card,
)
from cirulla.rules.game import Game
from cirulla.rules.views import View

# --------------------------------------------------------------------------- static worth

CARD_POINT = 0.06  # one point for most cards, spread over the ~21 cards it takes
COIN_POINT = 0.10  # one point for most coins, over ~6 coins
# Primiera worth by rank index (A..K): sevens decide it, sixes and aces back them up.
PRIMIERA_WORTH = (0.10, 0.02, 0.03, 0.04, 0.06, 0.18, 0.30, 0.01, 0.01, 0.01)
GRANDE_STATIC = 0.9  # JD QD KD: 5 points together, worthless apart
PICCOLA_STATIC = (0.6, 0.6, 0.6, 0.2, 0.2, 0.2, 0.1, 0.1, 0.1, 0.1)  # AD 2D 3D, then 4D..
SETTEBELLO_POINT = 1.0
SCOPA_POINT = 1.0
PICCOLA_CARDS = tuple(make_card(v, 0) for v in range(1, 11))
PICCOLA_BASE = sum(1 << c for c in PICCOLA_CARDS[:3])


def _static_worth(card: int) -> float:
    worth = CARD_POINT + PRIMIERA_WORTH[card >> 2]
    if COINS_MASK >> card & 1:
        worth += COIN_POINT + PICCOLA_STATIC[VALUES[card] - 1]
        if GRANDE_MASK >> card & 1:
            worth += GRANDE_STATIC - PICCOLA_STATIC[VALUES[card] - 1]
    if card == SETTEBELLO:
        worth += SETTEBELLO_POINT
    return worth


STATIC_WORTH: tuple[float, ...] = tuple(_static_worth(c) for c in range(NUM_CARDS))
# Worth of a mask = sum over its five bytes: five lookups instead of a loop over bits.
_BYTE_TABLES: tuple[tuple[float, ...], ...] = tuple(
    tuple(
        sum(STATIC_WORTH[8 * k + b] for b in range(8) if byte >> b & 1 and 8 * k + b < NUM_CARDS)
        for byte in range(256)
    )
    for k in range(5)
)
_T0, _T1, _T2, _T3, _T4 = _BYTE_TABLES


def static_worth(mask: int) -> float:
    """Context-free worth of a set of captured cards."""
    return (
        _T0[mask & 255]
        + _T1[mask >> 8 & 255]
        + _T2[mask >> 16 & 255]
        + _T3[mask >> 24 & 255]
        + _T4[mask >> 32 & 255]
    )


def table_value_sum(table: int, wild_value: int) -> int:
    total = 0
    for c in cards_of(table):
        total += wild_value if c == WILD and wild_value else VALUES[c]
    return total


def sweeping_values(table: int, wild_value: int) -> set[int]:
    """Values of a card that would take the whole (non-empty) ``table`` in one capture."""
    if not table:
        return set()
    s = table_value_sum(table, wild_value)
    values = set()
    if s <= 10:
        values.add(s)  # pairing (one card) or adding
    if 5 <= s <= 14:
        values.add(15 - s)
    ace_on_table = bool(table & ACES_MASK) or (wild_value == 1 and bool(table >> WILD & 1))
    if not ace_on_table:
        values.add(1)  # the ace sweep
    return values


# --------------------------------------------------------------------------- careful worth

GRANDE_BY_COUNT = (0.0, 0.9, 2.2, 5.0)
PICCOLA_BY_COUNT = (0.0, 0.6, 1.4, 3.0)
# Future worth of the wild 7H kept in hand, by the value named for it (0 = a plain 7).
WILD_NAMED_WORTH = {1: 0.45, 7: 0.15, 0: 0.15}


class Appraiser:
    """Scores each legal action of one decision from the seat's view (the greedy bot's eye).

    Built once per decision: the context (what each side holds, which cards are unseen,
    who plays next) is computed once and every action is scored against it.
    """

    def __init__(self, view: View) -> None:
        if view.seat is None:
            raise ValueError("a spectator view cannot be appraised: it has no hand")
        options = view.options
        self.view = view
        self.seat = seat = view.seat
        self.side = options.side_of(seat)
        self.mine = view.captured[self.side]
        self.others = 0
        for s, m in enumerate(view.captured):
            if s != self.side:
                self.others |= m
        self.unseen = view.unseen
        n = options.players
        self.next_seat = (seat + 1) % n
        self.next_declared = view.declared[self.next_seat]
        self.pp = options.pairing_precedence
        self.piccola_max = options.piccola_max
        hands_after = sum(view.hand_sizes) - 1
        self.last_card = hands_after == 0 and view.stock == 0
        next_size = view.hand_sizes[self.next_seat]
        if hands_after == 0 and view.stock:
            next_size = 3  # a new round is dealt before the next player moves
        self.next_size = next_size
        self.hidden_next = max(0, next_size - self.next_declared.bit_count())

    # --------------------------------------------------------------- parts

    def capture_worth(self, mask: int) -> float:
        """Worth of adding ``mask`` to this side's captures, given what each side already has."""
        worth = 0.0
        mine = self.mine
        for c in cards_of(mask):
            worth += CARD_POINT
            if COINS_MASK >> c & 1:
                worth += COIN_POINT
            if c == SETTEBELLO:
                worth += SETTEBELLO_POINT
            best_mine = max(
                (PRIMIERA_WORTH[x >> 2] for x in cards_of(mine & SUIT_MASKS[c & 3])), default=0.0
            )
            worth += max(0.0, PRIMIERA_WORTH[c >> 2] - best_mine)
        worth += self._set_worth(mask, GRANDE_MASK, GRANDE_BY_COUNT)
        worth += self._set_worth(mask, PICCOLA_BASE, PICCOLA_BY_COUNT)
        worth += self._piccola_tail(mask)
        return worth

    def _set_worth(self, mask: int, target: int, by_count: tuple[float, ...]) -> float:
        if not mask & target or self.others & target:
            return 0.0
        before = (self.mine & target).bit_count()
        after = ((self.mine | mask) & target).bit_count()
        return by_count[after] - by_count[before]

    def _piccola_tail(self, mask: int) -> float:
        """4D.. in sequence: each is a sure point once A-2-3D are home, a hope before."""
        worth = 0.0
        have = self.mine | mask
        for value in range(4, self.piccola_max + 1):
            card = PICCOLA_CARDS[value - 1]
            if self.others >> card & 1:
                break
            if mask >> card & 1:
                run = all(have >> PICCOLA_CARDS[v - 1] & 1 for v in range(1, value))
                worth += 1.0 if run else 0.15
        return worth

    def sweep_risk(self, table: int, wild_value: int) -> float:
        """Expected loss from the next player sweeping ``table``: the scopa and the cards."""
        if not table or self.last_card or not self.next_size:
            return 0.0
        values = sweeping_values(table, wild_value)
        if not values:
            return 0.0
        loss = SCOPA_POINT + self.capture_worth_for_them(table)
        if any(VALUES[c] in values for c in cards_of(self.next_declared)):
            return loss
        unseen = cards_of(self.unseen)
        k = sum(1 for c in unseen if VALUES[c] in values)
        u = len(unseen)
        if not k or not u:
            return 0.0
        miss = 1.0
        for i in range(min(self.hidden_next, u)):
            miss *= max(0.0, (u - k - i) / (u - i))
        return (1.0 - miss) * loss

    def capture_worth_for_them(self, mask: int) -> float:
        return static_worth(mask)

    # --------------------------------------------------------------- whole action

    def score(self, code: int) -> float:
        """Points this action is worth now, minus what it is likely to give away."""
        view = self.view
        card, decl, capture = decode(code)
        wild = view.wild_value
        score = 0.0
        if decl:
            score += DECLARATION_POINTS[decl >> 4]
            if decl & 15:
                wild = decl & 15
                if card != WILD:
                    score += WILD_NAMED_WORTH.get(wild, 0.05) - WILD_NAMED_WORTH[0]
        bit = 1 << card
        if capture:
            score += self.capture_worth(capture | bit)
            table_after = view.table & ~capture
            if not table_after and not self.last_card:
                score += SCOPA_POINT
            score -= self.sweep_risk(table_after, wild)
        else:
            # A card left on the table is a card the others may take: its worth is at stake.
            table_after = view.table | bit
            score -= 0.6 * static_worth(bit)
            score -= self.sweep_risk(table_after, wild)
        return score


def best_index(view: View, codes: list[int]) -> int:
    """Index of the highest-scoring action (first one on ties, so the choice is stable)."""
    appraiser = Appraiser(view)
    best = 0
    best_score = float("-inf")
    for i, code in enumerate(codes):
        s = appraiser.score(code)
        if s > best_score + 1e-12:
            best, best_score = i, s
    return best


# --------------------------------------------------------------------------- playouts


REPLY_MAX_TABLE = 10  # larger tables (rare) fall back to the sweep risk: 2**n subsets


def reply_worth(after: int, named: int, pp: bool, next_cards: list[int]) -> float:
    """The worth of the best capture ``next_cards`` make on the table ``after`` (a sweep
    counts a scopa); 0 when none captures."""
    caps = captures_by_value(after, named, pp)
    best = 0.0
    for c in next_cards:
        wc = STATIC_WORTH[c]
        for m in caps[named if c == WILD and named else VALUES[c]]:
            gain = static_worth(m) + wc + (SCOPA_POINT if m == after else 0.0)
            if gain > best:
                best = gain
    return best


def sweep_value_bits(table: int, named: int) -> int:
    """Bit v set if a card of value v takes the whole (non-empty) ``table``."""
    total = 0
    ace = False
    for c in cards_of(table):
        x = named if c == WILD and named else VALUES[c]
        total += x
        ace = ace or x == 1
    bits = 0 if ace else 1 << 1
    if 1 <= total <= 10:
        bits |= 1 << total
    if 5 <= total <= 14:
        bits |= 1 << (15 - total)
    return bits


def blind_risk(bits: int, count: list[int], unseen: int, hidden: int, known: int) -> float:
    """Chance that the next player holds a value in ``bits``: he shows the values in
    ``known`` (declared cards) and holds ``hidden`` cards drawn from the mover's ``unseen``
    ones, ``count[v]`` of which have value v."""
    if bits & known:
        return 1.0
    k = sum(count[v] for v in range(1, 11) if bits >> v & 1)
    if not k or not unseen:
        return 0.0
    miss = 1.0
    for i in range(min(hidden, unseen)):
        f = (unseen - k - i) / (unseen - i)
        miss *= f if f > 0.0 else 0.0
    return 1.0 - miss


@dataclass(slots=True)
class Mover:
    """What the seat to move weighs besides the cards it takes (playouts and expansion).

    Sighted: the next player's (sampled) hand. Blind: the cards the mover cannot see, by
    value, how many the next player holds, and the values he has declared.
    """

    table: int
    more: bool
    blind: bool
    reply: bool
    pp: bool
    next_cards: list[int]
    count: list[int]
    unseen: int
    hidden: int
    known: int

    @classmethod
    def of(cls, game: Game, blind: bool, reply: bool = False) -> Mover:
        seat = game.turn
        nxt = (seat + 1) % game.n
        in_hands = game.in_hands
        next_cards: list[int] = []
        count = [0] * 11
        unseen = hidden = known = 0
        if blind:
            seen = game.hands[seat] | game.table
            for m in game.captured:
                seen |= m
            for m in game.declared:
                seen |= m
            for c in cards_of(ALL_CARDS_MASK & ~seen):
                count[game.wild if c == WILD and game.wild else VALUES[c]] += 1
                unseen += 1
            shown = cards_of(game.declared[nxt])
            for c in shown:
                known |= 1 << (game.wild if c == WILD and game.wild else VALUES[c])
            if in_hands > 1:
                hidden = game.hands[nxt].bit_count() - len(shown)
            elif game.stock:
                hidden = 3  # a new round is dealt before the next player moves
        elif in_hands > 1:
            next_cards = cards_of(game.hands[nxt])
        return cls(
            game.table,
            in_hands > 1 or bool(game.stock),
            blind,
            reply and not blind,
            game.options.pairing_precedence,
            next_cards,
            count,
            unseen,
            hidden,
            known,
        )

    def gain(self, card: int, capture: int) -> float:
        """Worth of what the card takes (a sweep counts a scopa), or minus its own worth
        when it stays on the table."""
        if capture:
            sweep = SCOPA_POINT if capture == self.table and self.more else 0.0
            return static_worth(capture | 1 << card) + sweep
        return -static_worth(1 << card)

    def risk(self, card: int, capture: int, named: int) -> float:
        """What the table left by this play may cost: the next player's sweep (a scopa and
        the table), certain if sighted and he can, else weighed by its chance (blind); with
        ``reply``, the worth of the next player's best capture, whatever it takes."""
        after = self.table ^ capture if capture else self.table | 1 << card
        if not after:
            return 0.0
        if self.reply and after.bit_count() <= REPLY_MAX_TABLE:
            return reply_worth(after, named, self.pp, self.next_cards)
        if self.blind:
            if self.hidden <= 0 and not self.known:
                return 0.0
            chance = blind_risk(
                sweep_value_bits(after, named), self.count, self.unseen, self.hidden, self.known
            )
            return chance * (SCOPA_POINT + static_worth(after))
        if self.next_cards:
            after_entry = table_entry(after, named, self.pp)
            after_code = after << 12
            for c in self.next_cards:
                v = named if c == WILD and named else VALUES[c]
                if after_code in entry_captures(after_entry, v):
                    return SCOPA_POINT + static_worth(after)
        return 0.0


def code_score(mover: Mover, game: Game, code: int) -> float:
    """One legal action as the playout heuristic weighs it (tree expansion's order)."""
    card, decl, capture = decode(code)
    named = (decl & 15) or game.wild
    score = float(DECLARATION_POINTS[decl >> 4]) if decl else 0.0
    return score + mover.gain(card, capture) - mover.risk(card, capture, named)


def playout_code(
    game: Game, rng: random.Random, epsilon: float, blind: bool = False, reply: bool = False
) -> int:
    """A legal action code for the seat to move, chosen by the cheap heuristic.

    Mirrors ``Game.legal_codes`` for the candidates it considers, which is what makes it
    cheap: declare if possible (free points; a low hand names the wild an ace), then take
    the capture worth most (a sweep counts a scopa), or drop the least valuable card; in
    both cases avoid leaving a table the next player's hand can sweep. Playouts run in a
    sampled world, so "the next player's hand" is the sampled one: no hidden card leaks.
    ``blind``: the mover does not look at that hand; he weighs the sweep (scopa plus the
    table's worth) by the chance that the next player holds a sweeping value, from the
    cards the mover cannot see and the next player's declared cards (as greedy does).
    ``reply``: instead of only a sweep, the mover weighs the best capture the next player's
    (sampled) hand makes on the table he leaves: two plies of greed instead of one.
    """
    seat = game.turn
    hand = game.hands[seat]
    cards = cards_of(hand)
    decl = 0
    if len(cards) == 3:
        codes = declaration_codes(hand)
        if codes:
            decl = codes[-1] if codes[-1] >> 4 == 2 else codes[0]
    named = (decl & 15) or game.wild
    table = game.table
    pp = game.options.pairing_precedence
    entry = table_entry(table, game.wild, pp)
    must = game.options.must_capture
    if rng.random() < epsilon:
        card = cards[rng.randrange(len(cards))]
        sets = entry_captures(entry, named if card == WILD and named else VALUES[card])
        if not sets or (not must and rng.random() < 0.2):
            return card | decl << 6
        return card | decl << 6 | sets[rng.randrange(len(sets))]
    mover = Mover.of(game, blind, reply)
    best_code = -1
    best = -1e9
    for card in cards:
        sets = entry_captures(entry, named if card == WILD and named else VALUES[card])
        candidates = [m >> 12 for m in sets]
        if not sets or not must:
            candidates.append(0)
        for capture in candidates:
            s = mover.gain(card, capture)
            if s <= best:
                continue  # a risk can only lower it
            s -= mover.risk(card, capture, named)
            if s > best:
                best, best_code = s, card | capture << 12
    return best_code | decl << 6
