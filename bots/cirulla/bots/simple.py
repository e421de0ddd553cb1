"""The two one-move bots: ``random`` (the baseline) and ``greedy`` (a club player's eye)."""

from __future__ import annotations

import random
from collections.abc import Sequence

from cirulla.bots.heuristic import best_index
from cirulla.bots.seeding import decision_seed
from cirulla.rules.actions import Action
from cirulla.rules.views import View


class RandomPolicy:
    """Uniform over the legal actions. Seeded per decision, so a replay repeats its moves."""

    name = "random"
    #: Decides in microseconds and never blocks: the kit calls it in its own thread even
    #: against a clock (handing a decision to a worker thread costs more than making it).
    instant = True
    #: Keeps no account of the game between decisions: the server may play the seat's
    #: forced moves (one legal action) without asking (``Hello.auto_play_forced``).
    auto_play_forced = True

    def __init__(self, seed: int | None = None) -> None:
        self.seed = seed if seed is not None else random.randrange(1 << 62)

    def choose(self, view: View, legal: Sequence[Action], time_left: float | None) -> int:
        rng = random.Random(decision_seed(self.seed, view))
        return rng.randrange(len(legal))


class GreedyPolicy:
    """Plays the action whose immediate worth, minus the sweep it leaves, is largest.

    Deterministic: ties go to the first action in the legal order.
    """

    name = "greedy"
    instant = True  # as RandomPolicy
    auto_play_forced = True  # as RandomPolicy

    def __init__(self, seed: int | None = None) -> None:
        self.seed = seed

    def choose(self, view: View, legal: Sequence[Action], time_left: float | None) -> int:
        return best_index(view, [a.to_int() for a in legal])
