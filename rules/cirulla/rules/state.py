"""Where a game's state lives: in C when the native core runs, in Python slots otherwise.

``Game`` (game.py) derives from ``GameBase``. With the native core that is
``native.GameState`` (``gamestate.h``): the whole state in one C struct, its fields read and
written as attributes, the zones (``hands``, ``captured``, ``declared``, ``scope``,
``totals``, ``stock``) real lists kept in step with it, and the hot methods
(``legal_codes``, ``legal_actions``, ``is_legal``, ``apply``, ``apply_code``, ``copy``)
working on it without a Python int read or made per field. Without it, ``PyState`` and
``SLOTS`` hold the same fields in Python. Both check what is assigned the same way where it
matters to the rules (the C one at the assignment or the next move, with a one-line
``ValueError`` naming the field).

One difference callers may meet: a zone's list read before a move is not updated by the
move on the native core; read it again through the game's attribute (as every caller in
this project does).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cirulla.rules.core import native
from cirulla.rules.options import Options

if TYPE_CHECKING:
    from cirulla.rules.decks import DeckSource
    from cirulla.rules.scoring import DealScore

#: The state's fields kept in slots on the Python core, besides PyState's own.
SLOTS = (
    "deck_source",
    "decks_used",
    "dealer",
    "deal_no",
    "totals",
    "winner",
    "cappotto",
    "deal_only",
    "deal_over",
    "hands",
    "table",
    "stock",
    "captured",
    "scope",
    "last_taker",
    "wild",
    "declared",
    "round",
    "turn",
    "in_hands",
    "history",
    "last_score",
)

#: Every field of a game's state, as attributes (what copy() carries over).
FIELDS = ("options", "n", "sides", "side_of", *SLOTS)


class PyState:
    """The options and what they fix, on the Python core (``native.GameState`` does the
    same in C): assigning the options sets the seats and the sides. The annotations are the
    types of every field, whichever core holds them."""

    __slots__ = ("_legal", "_options", "n", "side_of", "sides")

    n: int
    sides: int
    side_of: tuple[int, ...]
    hands: list[int]
    stock: list[int]  # reversed: the next card to deal is stock[-1]
    captured: list[int]
    scope: list[int]
    declared: list[int]
    totals: list[int]
    table: int
    wild: int
    turn: int
    round: int
    in_hands: int
    last_taker: int
    dealer: int
    deal_no: int
    winner: int | None
    cappotto: bool
    deal_only: bool
    deal_over: bool
    history: list[tuple[int, int]]  # (seat, action code) through apply()
    decks_used: list[list[int]]
    deck_source: DeckSource
    last_score: DealScore | None
    _legal: list[Any] | None

    @property
    def stock_count(self) -> int:
        return len(self.stock)

    def hand_sizes(self) -> tuple[int, ...]:
        return tuple(h.bit_count() for h in self.hands)

    @property
    def options(self) -> Options:
        return self._options

    @options.setter
    def options(self, options: Options) -> None:
        self._options = options
        self.n = options.players
        self.sides = options.sides
        self.side_of = tuple(options.side_of(s) for s in range(options.players))
        self._legal = None  # the legal-moves cache of game.py's _legal_entry

    def _options_of(self, other: PyState) -> None:
        """``other``'s options and what they fix, shared as they are (``copy()``, once per
        search node: not derived again)."""
        self._options = other._options
        self.n = other.n
        self.sides = other.sides
        self.side_of = other.side_of


# mypy sees the Python base; both have the same attributes.
if TYPE_CHECKING:
    GameBase = PyState
else:
    GameBase = PyState if native is None else native.GameState
