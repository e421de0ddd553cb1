"""Capture generation: every legal capture set for each played value, cached per table.

The table rarely holds more than a handful of cards and the same tables recur (above all in
tree search, where every determinization shares the visible table), so the full answer for
all ten played values is computed once per (table, named wild value, pairing_precedence)
and kept in a bounded dict.
"""

from __future__ import annotations

from cirulla.rules.cards import VALUES, WILD, cards_of

_CACHE: dict[int, tuple[tuple[int, ...], ...]] = {}
_CACHE_LIMIT = 500_000


def table_values(table: int, wild_value: int) -> list[tuple[int, int]]:
    """(card, value) pairs of the table, the wild card at its named value if any."""
    return [(c, wild_value if c == WILD and wild_value else VALUES[c]) for c in cards_of(table)]


def captures_by_value(
    table: int, wild_value: int, pairing_precedence: bool
) -> tuple[tuple[int, ...], ...]:
    """Index ``v`` (1..10) gives the capture masks available to a played card of value ``v``.

    Sets are ordered by ascending mask, which is the stable order of legal actions.
    """
    key = table | (wild_value if table >> WILD & 1 else 0) << 40 | pairing_precedence << 44
    cached = _CACHE.get(key)
    if cached is not None:
        return cached
    if len(_CACHE) >= _CACHE_LIMIT:
        _CACHE.clear()
    result = _compute(table, wild_value, pairing_precedence)
    _CACHE[key] = result
    return result


def _compute(table: int, wild_value: int, pairing_precedence: bool) -> tuple[tuple[int, ...], ...]:
    pairs = table_values(table, wild_value)
    # by_sum[s]: (mask, size) of every subset whose values sum to s <= 14
    by_sum: list[list[tuple[int, int]]] = [[] for _ in range(15)]
    n = len(pairs)

    def extend(start: int, total: int, mask: int, size: int) -> None:
        for j in range(start, n):
            card, value = pairs[j]
            s = total + value
            if s > 14:
                continue
            m = mask | 1 << card
            by_sum[s].append((m, size + 1))
            extend(j + 1, s, m, size + 1)

    extend(0, 0, 0, 0)
    ace_on_table = any(value == 1 for _, value in pairs)
    result: list[tuple[int, ...]] = [()]
    for v in range(1, 11):
        if v == 1 and table and not ace_on_table:
            result.append((table,))  # the ace sweep is then the ace's only capture
            continue
        pairing = [m for m, size in by_sum[v] if size == 1]
        adding = (
            [] if pairing_precedence and pairing else [m for m, size in by_sum[v] if size >= 2]
        )
        fifteen = [m for m, _ in by_sum[15 - v]]
        result.append(tuple(sorted(pairing + adding + fifteen)))
    return tuple(result)


def legal_captures(table: int, played_value: int, wild_value: int = 0,
                   pairing_precedence: bool = False) -> tuple[int, ...]:
    """Capture masks for one played value; ``()`` when the card cannot capture."""
    return captures_by_value(table, wild_value, pairing_precedence)[played_value]
