"""The bots' compiled search (``bots/cirulla/bots/_search.c``: opponent-hand inference,
playouts and the whole ISMCTS loop), on the bots' floor beside the Python loop it mirrors.

It is built by the same install as the native rules core, on the same state machine, and
runs exactly when that core does: ``CIRULLA_CORE=python`` turns both off, so a bot never
searches natively over a game the Python core plays.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from cirulla.rules.core import CORE, CoreUnavailableError, ViewTuple, require_native

# The module is typed by its stub (_search.pyi). mypy has no "this module or None": the
# fallback below is the one place it is told otherwise; every use goes through
# require_search() first (or tests `search_native is None`).
try:
    if CORE != "native":
        raise ImportError("the Python rules core runs")
    from cirulla.bots import _search

    search_native = _search
except ImportError:
    #: The compiled module, or None when the Python core runs (or it was not built).
    search_native = None  # type: ignore[assignment]


def require_search() -> None:
    """A one-line error saying why the compiled search module is missing; after it,
    ``search_native`` is the module."""
    require_native()
    if search_native is None:
        raise CoreUnavailableError(
            "the bots' compiled search is not available: not built (no C compiler at install?)"
        )


@dataclass(frozen=True, slots=True)
class NativeSearch:
    """The argument of the compiled ``search``, one object whose fields it reads by name
    (``search_names`` in _search.c, parsed as keywords by ``PyArg_ParseTupleAndKeywords``):
    ``mcts.search`` builds one per search, by keyword, and ``run_search`` passes it as it
    is. tests/bots/test_native_search.py reads the C names and format string and holds
    these fields (their names, and each one's kind: int, float, bool or object) to them."""

    options: tuple[int, ...]
    view: ViewTuple
    order: list[int]
    bias: list[float]
    seed: int
    iterations: int  # -1: no iteration budget
    seconds: float  # -1: no time budget
    c: float
    epsilon: float
    point_scale: float
    win_weight: float
    worth: tuple[float, ...]
    scopa: float
    halving: bool
    cpu_clock: bool
    blind: bool
    expand_best: bool
    evidence: list[tuple[int, int, int, int]]
    infer: float
    tries: int
    depth: int
    reply: bool
    opp_playout: bool
    opp_blind: bool
    chance: bool
    deal_mean: float
    deal_sd: float
    solve: bool
    hands: list[int]
    hands_seat: int


#: NativeSearch's fields in order: the names the compiled search reads
SEARCH_ARGUMENTS = tuple(f.name for f in fields(NativeSearch))


def run_search(args: NativeSearch) -> tuple[list[int], list[float], list[int], int, float]:
    """The compiled search on ``args``: (visits, totals, survived) aligned with
    ``args.order``, the iterations done and the seconds spent."""
    require_search()
    return search_native.search(args)
