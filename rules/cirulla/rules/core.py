"""Which rules core runs: the compiled one (``cirulla.rules._native``) or pure Python.

The native core (``rules/cirulla/rules/_native.c``, built at install when a C compiler is present)
re-implements the hot path: captures, declarations, legal actions in the protocol's order,
applying actions, dealing, deal scoring, sampling a world from a seat's view, and whole
ISMCTS searches. The Python modules stay the readable reference; both are held to the same
rule cases and to a differential test over random games (tests/rules/test_native.py).

``CIRULLA_CORE=python`` forces the reference core; ``CIRULLA_CORE=native`` makes a missing
native core an error rather than a silent fallback. This module converts between the two:
options and views to the tuples the native functions take, native events and scores to
the Python objects.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import fields
from functools import lru_cache
from typing import TYPE_CHECKING, TypeVar

from cirulla.rules.actions import DeclarationKind
from cirulla.rules.events import (
    BY_NATIVE,
    CardPlayed,
    DealerBonus,
    DealScored,
    DealStarted,
    Declared,
    Event,
    GameOver,
    HandDealt,
    LastTake,
    Redeal,
    RoundDealt,
    field_names,
)
from cirulla.rules.options import Options
from cirulla.rules.scoring import DealScore, SideScore

if TYPE_CHECKING:
    from cirulla.rules.seat_view import View

ENV = "CIRULLA_CORE"
CHOICES = ("auto", "native", "python")


class CoreUnavailableError(ValueError):
    """The native core was asked for but is not built."""


def _wanted() -> str:
    wanted = os.environ.get(ENV, "").strip().lower() or "auto"
    if wanted not in CHOICES:
        print(
            f"warning: {ENV}={wanted!r} ignored: expected one of {', '.join(CHOICES)}",
            file=sys.stderr,
        )
        wanted = "auto"
    return wanted


# The module is typed by its stub (_native.pyi). mypy has no "this module or None": the
# fallback below is the one place it is told otherwise; every use tests `native is None`
# (or CORE) or goes through require_native().
_WANTED = _wanted()
try:
    if _WANTED == "python":
        raise ImportError(f"{ENV}=python")
    import cirulla.rules._native as _native  # the sibling itself, not the package

    native = _native
except ImportError:
    if _WANTED == "native":
        raise CoreUnavailableError(
            f"{ENV}=native but the native core is not built: reinstall with a C compiler "
            "(pip install -e .)"
        ) from None
    native = None  # type: ignore[assignment]

#: "native" or "python": the core the server, the bots and the benchmarks use.
CORE = "native" if native is not None else "python"


E = TypeVar("E")


def fast_constructor(cls: type[E]) -> Callable[..., E]:
    """A constructor of the frozen slots dataclass ``cls`` taking every field positionally,
    in order: the native core fills the slots directly (the generated ``__init__`` sets
    each field through ``object.__setattr__``, about fifteen times slower: the referee
    builds an event per card played); the class itself on the Python core."""
    if native is None:
        return cls
    return native.frozen_maker(cls, field_names(cls))  # type: ignore[arg-type]


def require_native() -> None:
    """A one-line error saying why the native module is missing; after it, ``native`` is
    the module (typed by its stub, where a function cannot return a module's type)."""
    if native is None:
        why = (
            f"{ENV}=python"
            if os.environ.get(ENV, "").strip().lower() == "python"
            else ("not built (no C compiler at install?)")
        )
        raise CoreUnavailableError(f"the native rules core is not available: {why}")


def resolve_core(name: str | None) -> str:
    """``auto``/None -> the running core; ``native`` checks it exists; ``python`` as is."""
    name = (name or "auto").strip().lower()
    if name not in CHOICES:
        raise ValueError(f"core must be one of {', '.join(CHOICES)}, not {name!r}")
    if name == "auto":
        return CORE
    if name == "native":
        require_native()
    return name


@lru_cache(maxsize=64)
def options_tuple(options: Options) -> tuple[int, ...]:
    """Options as the native functions take them: every field, in declaration order."""
    return tuple(int(getattr(options, f.name)) for f in fields(Options))


#: A seat's view as the native functions take it (``view_tuple``): seat, deal, dealer,
#: round, to_move (-1: none), hand, table, wild_value, hand_sizes, declared, captured,
#: scope, stock, totals, last_taker (-1: none); ``parse_view`` in engine.h reads it.
ViewTuple = tuple[
    int, int, int, int, int, int, int, int,
    tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...],
    int, tuple[int, ...], int,
]  # fmt: skip


def view_tuple(view: View) -> ViewTuple:
    """A seat's view as the native search and sampler take it (None -> -1)."""
    assert view.seat is not None
    return (
        view.seat,
        view.deal,
        view.dealer,
        view.round,
        -1 if view.to_move is None else view.to_move,
        view.hand,
        view.table,
        view.wild_value,
        view.hand_sizes,
        view.declared,
        view.captured,
        view.scope,
        view.stock,
        view.totals,
        -1 if view.last_taker is None else view.last_taker,
    )


def deal_score(cappotto: int, items: tuple[tuple[int, ...], ...]) -> DealScore:
    """A native ``score_deal`` answer as the Python ``DealScore``."""
    return DealScore(tuple(SideScore(*side) for side in items), None if cappotto < 0 else cappotto)


def score_deal(options: Options, captured: Sequence[int], scope: Sequence[int]) -> DealScore:
    """``scoring.score_deal`` on the native core."""
    require_native()
    return deal_score(*native.score_deal(options_tuple(options), captured, scope))


def _deal_scored(a: Sequence[int]) -> DealScored:
    deal, cappotto, sides = a[0], a[1], a[2]
    items = tuple(tuple(a[3 + 7 * i : 10 + 7 * i]) for i in range(sides))
    totals = tuple(a[3 + 7 * sides : 3 + 8 * sides])
    return DealScored(deal, deal_score(cappotto, items), totals)


#: How each event type the native core emits is read from its tuple's fields; which
#: code is which type is the registry's (``cirulla.rules.events.BY_NATIVE``).
_FROM_NATIVE: dict[type[Event], Callable[[Sequence[int]], Event]] = {
    DealStarted: lambda a: DealStarted(a[0], a[1], a[2], (3,) * a[3]),
    Redeal: lambda a: Redeal(a[0], a[1], a[2]),
    HandDealt: lambda a: HandDealt(a[0], a[1], a[2]),
    RoundDealt: lambda a: RoundDealt(a[0], (3,) * a[1], a[2]),
    DealerBonus: lambda a: DealerBonus(a[0], a[1], a[2], a[3]),
    Declared: lambda a: Declared(a[0], a[1], DeclarationKind(a[2]), a[3], a[4] or None, a[5]),
    CardPlayed: lambda a: CardPlayed(a[0], a[1], a[2], a[3], a[4], bool(a[5]), bool(a[6])),
    LastTake: lambda a: LastTake(None if a[0] < 0 else a[0], a[1]),
    DealScored: _deal_scored,
    GameOver: lambda a: GameOver(a[0], tuple(a[3 : 3 + a[2]]), bool(a[1])),
}


def event_of(raw: tuple[int, ...]) -> Event:
    """A native event tuple ``(type, fields...)`` as the Python event (engine.h EV_*)."""
    kind, *a = raw
    entry = BY_NATIVE.get(kind)
    if entry is None or entry.cls not in _FROM_NATIVE:
        raise ValueError(f"unknown native event type {kind}")
    return _FROM_NATIVE[entry.cls](a)
