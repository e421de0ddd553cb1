"""Types of the compiled rules core, ``cirulla.rules._native`` (rules/cirulla/rules/_native.c
on engine.h's state machine), for mypy and the editors: the module itself carries none.

Each function mirrors a Python reference named in its docstring; tests/rules/test_stubs.py
checks this file against the built module (the same names both ways, the parameters its
docstrings give) and the parameter names against those references. ``options`` is always
``core.options_tuple(options)``; ``view`` is ``core.view_tuple(view)``; cards are 40-bit
masks.
"""

from collections.abc import Callable, Mapping, Sequence
from typing import Generic, TypeVar

from cirulla.rules.core import ViewTuple

_T = TypeVar("_T")

#: per side the 7 items: cards, coins, settebello, primiera, scope, grande, piccola
_SideItems = tuple[int, int, int, int, int, int, int]

class Game:
    """The native state machine (game.py's Game) for the cross-core differential test."""

    def __init__(
        self,
        options: Sequence[int],
        decks: Sequence[Sequence[int]] | None = None,
        seed: int = 0,
        first_dealer: int = -1,
        deal_only: bool = False,
    ) -> None: ...
    def legal_codes(self) -> list[int]: ...
    def apply_code(self, code: int, /) -> None: ...
    def take_events(self) -> list[tuple[int, ...]]: ...
    def state(self) -> dict[str, object]: ...

class FloorGame(Generic[_T]):
    """Game's loop surface doing no rules work: the floor of bench.py's api loop."""

    def __init__(self, actions: list[_T], per_deal: int) -> None: ...
    @property
    def deal_no(self) -> int: ...
    @property
    def winner(self) -> None: ...
    def legal_actions(self) -> list[_T]: ...
    def apply(self, action: _T, /) -> None: ...

def legal_codes(
    hand: int, table: int, wild: int, must_capture: bool, pairing_precedence: bool, /
) -> list[int]: ...
def captures(
    table: int, played_value: int, wild_value: int, pairing_precedence: bool, /
) -> tuple[int, ...]: ...
def declaration_codes(hand: int, /) -> tuple[int, ...]: ...
def dealer_bonus(table: int, low_bonus: bool, /) -> int: ...
def seeded_deck(seed: int, number: int, /) -> list[int]: ...
def score_deal(
    options: Sequence[int], captured: Sequence[int], scope: Sequence[int], /
) -> tuple[int, tuple[_SideItems, ...]]: ...
def sample_world(
    options: Sequence[int], view: ViewTuple, seed: int, /
) -> tuple[tuple[int, ...], list[int]]: ...
def bench_rules(
    options: Sequence[int], cpu_seconds: float, seed: int, listed: bool = False, /
) -> tuple[int, int, int, float, float]: ...
def random_deals_digest(
    options: Sequence[int], deals: int, seed: int, listed: bool = False, /
) -> tuple[int, int]: ...
def frozen_maker(cls: type[_T], names: tuple[str, ...], /) -> Callable[..., _T]: ...
def bind_game(
    game_cls: type,
    action_cls: type,
    card_played: Callable[..., object],
    declared: Callable[..., object],
    round_dealt: Callable[..., object],
    hand_dealt: Callable[..., object],
    kinds: tuple[object, ...],
    interned: Mapping[int, object],
    from_int: Callable[[int], object],
    deal: tuple[object, ...],
    /,
) -> dict[str, object]: ...
