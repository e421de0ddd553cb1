"""The one thing a bot author writes: a decision function.

A policy sees what its seat may see (a ``View``) and the numbered legal actions, and
returns the index of its choice. ``time_left`` is the seat's remaining clock in seconds as
the server reported it (``None``: no clock); a policy that searches must finish well
inside it, the kit keeps a safety margin on top.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from cirulla.rules.actions import Action
from cirulla.rules.views import View

DecisionFunction = Callable[[View, Sequence[Action], "float | None"], "int | Action"]


@runtime_checkable
class Policy(Protocol):
    """A bot's brain. ``choose`` returns an index into ``legal`` (or one of its actions)."""

    name: str

    def choose(
        self, view: View, legal: Sequence[Action], time_left: float | None
    ) -> int | RawAnswer: ...


@dataclass(frozen=True, slots=True)
class RawAnswer:
    """What a policy returns for an answer it cannot turn into a legal action (a text
    engine's malformed reply): the kit submits ``index`` if set (out of range), else
    ``text`` as notation, so the server judges and counts it as an illegal action; the
    kit then plays the server's default action."""

    text: str
    index: int | None = None


class FunctionPolicy:
    """Wraps a plain decision function so the kit can treat it like the built-in bots."""

    def __init__(self, func: DecisionFunction, name: str | None = None) -> None:
        self.func = func
        self.name: str = name or str(getattr(func, "__name__", "bot"))

    def choose(self, view: View, legal: Sequence[Action], time_left: float | None) -> int:
        return resolve_choice(self.func(view, legal, time_left), legal)


def resolve_choice(choice: int | Action, legal: Sequence[Action]) -> int:
    """Turn what a decision function returned into a legal action index, or say why not."""
    if isinstance(choice, Action):
        try:
            return list(legal).index(choice)
        except ValueError:
            raise ValueError(f"the bot chose {choice}, which is not a legal action") from None
    if isinstance(choice, bool) or not isinstance(choice, int):
        raise TypeError(f"a decision function returns an index or an Action, not {choice!r}")
    if not 0 <= choice < len(legal):
        raise ValueError(f"the bot chose index {choice}, but legal indices are 0..{len(legal) - 1}")
    return choice


_decision = threading.local()


def decision_cancelled() -> bool:
    """True once the kit gave up on the decision the calling thread works on (its time ran
    out and the kit answered with the server's default action): a search loop should
    check it now and then and return. Always False outside a decision."""
    event: threading.Event | None = getattr(_decision, "cancel", None)
    return event is not None and event.is_set()


@contextmanager
def decision_scope(cancel: threading.Event) -> Iterator[None]:
    """Within the block, ``decision_cancelled()`` in this thread reflects ``cancel``."""
    previous = getattr(_decision, "cancel", None)
    _decision.cancel = cancel
    try:
        yield
    finally:
        _decision.cancel = previous
