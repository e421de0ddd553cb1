"""Types of the bots' compiled search, ``cirulla.bots._search`` (bots/cirulla/bots/_search.c
on the rules core's state machine), for mypy and the editors: the module carries none.

Each function mirrors a Python reference named in its docstring; tests/rules/test_stubs.py
checks this file against the built module (the same names both ways, the parameters its
docstrings give) and the parameter names against those references. ``options`` is
``core.options_tuple(options)``, ``view`` is ``core.view_tuple(view)``, evidence items are
``inference.Evidence.as_tuple()``; cards are 40-bit masks. ``search`` takes one
``compiled.NativeSearch`` and reads its fields by name.
"""

from collections.abc import Sequence
from typing import TYPE_CHECKING

from cirulla.rules.core import ViewTuple

if TYPE_CHECKING:  # the type of search's argument only: the compiled module imports nothing
    from cirulla.bots.compiled import NativeSearch

#: ``inference.Evidence.as_tuple()``: (seat, bad, extra, declare)
_Evidence = tuple[int, int, int, int]

def sample_world(
    options: Sequence[int],
    view: ViewTuple,
    seed: int,
    evidence: Sequence[_Evidence] = (),
    infer: float = 0.0,
    tries: int = 1,
    hands: Sequence[int] = (),
    seat: int = -1,
    /,
) -> tuple[tuple[int, ...], list[int]]: ...
def search(args: NativeSearch, /) -> tuple[list[int], list[float], list[int], int, float]: ...
def violations(
    hands: Sequence[int], declared: Sequence[int], evidence: Sequence[_Evidence], /
) -> int: ...
def reply_worth(
    worth: Sequence[float],
    scopa: float,
    after: int,
    named: int,
    pp: bool,
    next_cards: Sequence[int],
    /,
) -> float: ...
def best_exact(
    options: Sequence[int],
    view: ViewTuple,
    codes: Sequence[int],
    point_scale: float,
    win_weight: float,
    worth: Sequence[float],
    scopa: float,
    /,
) -> int: ...
def sampled_exact(
    options: Sequence[int],
    view: ViewTuple,
    codes: Sequence[int],
    seed: int,
    worlds: int,
    point_scale: float,
    win_weight: float,
    max_nodes: int,
    /,
) -> tuple[list[float], int, int]: ...
