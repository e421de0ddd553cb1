"""Capture generation: every legal capture set for each played value, cached per table.

The table rarely holds more than a handful of cards and the same tables recur (above all in
tree search, where every determinization shares the visible table), so the full answer for
all ten played values is computed once per (table, named wild value, pairing_precedence).
Underneath, the subset arithmetic depends only on the table's values in card order, a far
smaller space, so it is cached by value tuple and only mapped onto card bits per table.
"""

from __future__ import annotations

from typing import Any

from cirulla.rules.cards import VALUES, WILD, cards_of

Captures = tuple[tuple[int, ...], ...]
Shape = tuple[tuple[tuple[int, ...], ...], ...]

# Per table: [(shape, card bits), sets for value 1, ..., sets for value 10, all values],
# the sets filled in on first use (a hand needs at most three of the ten values) and
# stored already shifted into their place in an action code (``mask << 12``). The last
# slot caches ``captures_by_value``'s plain-mask answer.
#
# Search code may use ``table_entry`` + ``entry_captures`` directly (the fast path of
# ``Game.legal_codes``); they are part of this module's public interface.
Entry = list[Any]  # per table: value tables and the capture sets of each played value
_CACHE: dict[int, Entry] = {}
_SHAPES: dict[tuple[tuple[int, ...], bool], Shape] = {}
_CACHE_LIMIT = 400_000


def table_values(table: int, wild_value: int) -> list[tuple[int, int]]:
    """(card, value) pairs of the table, the wild card at its named value if any."""
    return [(c, wild_value if c == WILD and wild_value else VALUES[c]) for c in cards_of(table)]


def cache_key(table: int, wild_value: int, pairing_precedence: bool) -> int:
    # the named value only matters while 7H lies on the table
    return table | (wild_value if table >> WILD & 1 else 0) << 40 | pairing_precedence << 44


def table_entry(table: int, wild_value: int, pairing_precedence: bool) -> Entry:
    """The cache entry of a table; index it by played value, resolving ``None`` slots."""
    key = cache_key(table, wild_value, pairing_precedence)
    entry = _CACHE.get(key)
    if entry is None:
        if len(_CACHE) >= _CACHE_LIMIT:
            _CACHE.clear()
        cards = cards_of(table)
        values = tuple(wild_value if c == WILD and wild_value else VALUES[c] for c in cards)
        shape = _SHAPES.get((values, pairing_precedence))
        if shape is None:
            if len(_SHAPES) >= _CACHE_LIMIT:
                _SHAPES.clear()  # both caches are bounded: servers and bots run for days
            shape = _SHAPES[values, pairing_precedence] = _subset_shape(values, pairing_precedence)
        entry = _CACHE[key] = [(shape, [1 << c for c in cards]), *([None] * 11)]
    return entry


def resolve(entry: Entry, value: int) -> tuple[int, ...]:
    """Fill in (once) the capture masks of one played value, shifted as in action codes."""
    shape, bits = entry[0]
    sets = entry[value] = tuple([sum([bits[i] for i in pos]) << 12 for pos in shape[value]])
    return sets


def entry_captures(entry: Entry, value: int) -> tuple[int, ...]:
    """Capture sets of a played ``value`` on ``entry``'s table, shifted as in action codes."""
    sets = entry[value]
    return sets if sets is not None else resolve(entry, value)


def captures_by_value(table: int, wild_value: int, pairing_precedence: bool) -> Captures:
    """Index ``v`` (1..10) gives the capture masks available to a played card of value ``v``.

    Sets are ordered by ascending mask, which is the stable order of legal actions.
    """
    entry = table_entry(table, wild_value, pairing_precedence)
    result = entry[11]
    if result is None:
        shifted = [entry_captures(entry, v) for v in range(1, 11)]
        result = entry[11] = ((), *(tuple(m >> 12 for m in sets) for sets in shifted))
    by_value: tuple[tuple[int, ...], ...] = result
    return by_value


def _subset_shape(values: tuple[int, ...], pairing_precedence: bool) -> Shape:
    """Captures as tuples of table *positions*, for the table values ``values``.

    Positions map onto cards in increasing order, so sorting here by position mask gives
    the same order as sorting the card masks of any table with these values.
    """
    n = len(values)
    ascending = all(values[i] <= values[i + 1] for i in range(n - 1))
    # by_sum[s]: (position mask, positions) of every subset whose values sum to s <= 14
    by_sum: list[list[tuple[int, tuple[int, ...]]]] = [[] for _ in range(15)]

    def extend(start: int, total: int, mask: int, positions: tuple[int, ...]) -> None:
        for j in range(start, n):
            s = total + values[j]
            if s > 14:
                if ascending:
                    break  # every later value is at least as large
                continue
            m = mask | 1 << j
            pos = (*positions, j)
            by_sum[s].append((m, pos))
            extend(j + 1, s, m, pos)

    extend(0, 0, 0, ())
    ace_on_table = 1 in values
    result: list[tuple[tuple[int, ...], ...]] = [()]
    for v in range(1, 11):
        if v == 1 and n and not ace_on_table:
            result.append((tuple(range(n)),))  # the ace sweep is then the ace's only capture
            continue
        pairing = [x for x in by_sum[v] if len(x[1]) == 1]
        adding = [x for x in by_sum[v] if len(x[1]) >= 2]
        if pairing_precedence and pairing:
            adding = []
        found = sorted([*pairing, *adding, *by_sum[15 - v]])  # by position mask
        result.append(tuple(positions for _, positions in found))
    return tuple(result)


def legal_captures(
    table: int, played_value: int, wild_value: int = 0, pairing_precedence: bool = False
) -> tuple[int, ...]:
    """Capture masks for one played value; ``()`` when the card cannot capture.

    A card takes a card of its value, cards summing to its value, or cards summing with
    it to 15 (with AH 4C 5D 7S on the table, a king (10) takes AH 4C or 5D for 15, or all
    three for a sum of 10):

    >>> from cirulla.rules import format_cards, legal_captures, parse_mask
    >>> table = parse_mask("AH 4C 5D 7S")
    >>> [format_cards(m) for m in legal_captures(table, 10)]
    ['AH 4C', '5D', 'AH 4C 5D']
    >>> legal_captures(parse_mask("2S 3S"), 6)
    ()

    With ``pairing_precedence`` (a variant), a card that can pair must take its pair:

    >>> table = parse_mask("5C 5D 2S 3S")
    >>> "2S 3S" in [format_cards(m) for m in legal_captures(table, 5)]
    True
    >>> paired = legal_captures(table, 5, pairing_precedence=True)
    >>> "2S 3S" in [format_cards(m) for m in paired]
    False
    """
    return captures_by_value(table, wild_value, pairing_precedence)[played_value]
