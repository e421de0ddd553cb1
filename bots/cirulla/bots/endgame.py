"""The last round of a 2-player deal, solved exactly.

Once the stock is empty in a 2-player game, every card is known to both players: what a
seat cannot see is exactly the opponent's hand. What is left of the deal is then a small
game of perfect information (at most three cards a hand, six plies), and its minimax value
can be computed outright instead of estimated. ``learned`` plays its last rounds this way
(``endgame=exact``, and ``sampled``, its default; ``endgame=network`` leaves them to the
network): the network's moves there cost it more than a quarter of what it gives up to the
search it imitates (docs/bots-research.md), and a solver is exact where both fall short.

The value of a finished deal is the search's own reward (``rewards.rewards_of``): the deal's
point difference, with most of the weight on winning the game when the deal ends it.
Two players' rewards add up to one, so the opponent minimises what the seat maximises.
Minimax alone assumes an opponent who never errs; many moves are then equally good, and
among those the solver takes the one worth most against the search's model of a club
player (the playout policy, ``rewards.solve_rest``): never worse against best play, better
against greedy and its like.

One round earlier, the round before the last, little is hidden: the opponent's three
cards and the six of the last round, nine cards. ``sampled_values`` deals them as the
search samples its worlds, solves each world outright by the same minimax, and averages
each move's value over the worlds that fit a budget of minimax nodes (a count, so the
answer depends only on the view and the seed, not on the machine's speed). It is
perfect-information Monte Carlo (Ginsberg's GIB for bridge): each world is solved as if
both sides saw it, which a real opponent does not; measured, it still plays that round
better than the network (docs/bots-research.md), and ``learned`` uses it by default
(``endgame="sampled"``).
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Sequence

from cirulla.bots.compiled import require_search, search_native
from cirulla.bots.heuristic import SCOPA_POINT, STATIC_WORTH
from cirulla.bots.rewards import POINT_SCALE, WIN_WEIGHT, rewards_of, solve_rest
from cirulla.bots.search_defaults import SAMPLED_NODES as SAMPLED_NODES
from cirulla.rules.core import options_tuple, resolve_core, view_tuple
from cirulla.rules.game import Game
from cirulla.rules.views import View, sample_world

#: Minimax values closer than this are equal (float sums of the same rewards).
EXACT_TIE = 1e-9
#: ... and at most this many worlds, whatever the budget.
SAMPLED_WORLDS = 1_000


class _OutOfNodes(Exception):
    """The node budget ran out in the middle of a world (which is then dropped)."""


class _Nodes:
    """Minimax nodes visited so far, and the most allowed (the native solver's count)."""

    def __init__(self, limit: float) -> None:
        self.count = 0
        self.limit = limit

    def visit(self) -> None:
        self.count += 1
        if self.count > self.limit:
            raise _OutOfNodes


def solvable(view: View) -> bool:
    """Whether ``view`` knows every card of the rest of its deal (2 players, no stock)."""
    return view.options.players == 2 and view.stock == 0 and view.seat is not None


def penultimate(view: View) -> bool:
    """Whether ``view`` is a 2-player seat's in the round before its deal's last: the stock
    holds just the last round's cards."""
    options = view.options
    return options.players == 2 and view.stock == 3 * options.players and view.seat is not None


def sampled_values(
    view: View,
    codes: Sequence[int],
    seed: int,
    nodes: int = SAMPLED_NODES,
    worlds: int = SAMPLED_WORLDS,
    core: str | None = None,
) -> list[float]:
    """Each code's minimax reward for ``view``'s side (``rewards.rewards_of``), averaged over
    worlds sampled from the view (``seed``) and solved outright, as many as fit ``nodes``
    minimax nodes (0: no budget) up to ``worlds``; a world that would pass the budget is
    dropped, so every code is valued on the same worlds. Empty when not even one fits.
    2 players only. ``core``: native (``_search.c``'s ``sampled_exact``) or python (this
    module's reference: the same minimax and node count, on Python-sampled worlds)."""
    if view.options.players != 2 or view.seat is None or view.to_move != view.seat:
        raise ValueError("sampled_values: a 2-player view of the seat to move")
    if resolve_core(core) == "native":
        values: list[float]
        require_search()
        values, _, _ = search_native.sampled_exact(
            options_tuple(view.options),
            view_tuple(view),
            list(codes),
            seed,
            worlds,
            POINT_SCALE,
            WIN_WEIGHT,
            nodes,
        )
        return values
    rng = random.Random(seed)
    drawn = (sample_world(view, rng, deal_only=True) for _ in range(worlds))
    return solve_worlds(drawn, codes, view.options.side_of(view.seat), nodes)


def solve_worlds(
    worlds: Iterable[Game], codes: Sequence[int], side: int, nodes: int
) -> list[float]:
    """``sampled_values`` over given worlds (the Python reference; the tests hand it the
    native sampler's worlds)."""
    sums = [0.0] * len(codes)
    done = 0
    budget = _Nodes(nodes if nodes > 0 else math.inf)
    for world in worlds:
        try:
            values = []
            for code in codes:
                after = world.copy()
                after.apply_code(code)
                values.append(_value(after, side, -math.inf, math.inf, budget))
        except _OutOfNodes:
            break
        done += 1
        sums = [a + b for a, b in zip(sums, values, strict=True)]
        if budget.count >= budget.limit:
            break
    return [total / done for total in sums] if done else []


def best_exact(view: View, codes: Sequence[int], core: str | None = None) -> int:
    """The index in ``codes`` of the move of best minimax value for ``view``'s side;
    ``view`` must be ``solvable``. Among moves of equal value (common: the outcome is often
    settled whatever is played), the one worth most against the playout policy
    (``rewards.solve_rest``, the model of a club player the search plays against), then the
    earliest: no loss against best play, and a better chance against a player who errs.
    ``core``: native (``_search.c``'s ``best_exact``, the default when built) or python
    (this module's reference, the same answer in many times the time)."""
    assert view.seat is not None
    if resolve_core(core) == "native":
        require_search()
        return int(
            search_native.best_exact(
                options_tuple(view.options),
                view_tuple(view),
                list(codes),
                POINT_SCALE,
                WIN_WEIGHT,
                STATIC_WORTH,
                SCOPA_POINT,
            )
        )
    # With no stock and two players the only world this view allows is the true one.
    world = sample_world(view, random.Random(0), deal_only=True)
    side = view.options.side_of(view.seat)
    top = -math.inf
    values = []
    for code in codes:
        after = world.copy()
        after.apply_code(code)
        # Exact where it can tie the best so far; a worse move fails low, below the window.
        values.append(_value(after, side, top - EXACT_TIE, math.inf))
        top = max(top, values[-1])
    best, model = 0, -math.inf
    for index, code in enumerate(codes):
        if values[index] < top - EXACT_TIE / 2:
            continue
        after = world.copy()
        after.apply_code(code)
        value = rewards_of(solve_rest(after, side, False, False))[side]
        if value > model:
            best, model = index, value
    return best


def _value(game: Game, side: int, alpha: float, beta: float, nodes: _Nodes | None = None) -> float:
    """``side``'s reward of ``game`` played out by both sides at their best (alpha-beta:
    exact inside ``(alpha, beta)``, a bound outside it). Bigger captures are tried first,
    as the native solver tries them: they settle the bounds sooner, and ``nodes`` counts
    the same nodes as the native count."""
    if nodes is not None:
        nodes.visit()
    if game.deal_over:
        return rewards_of(game)[side]
    maximising = game.options.side_of(game.turn) == side
    value = -math.inf if maximising else math.inf
    for code in sorted(game.legal_codes(), key=lambda c: -(c >> 12).bit_count()):
        after = game.copy()
        after.apply_code(code)
        child = _value(after, side, alpha, beta, nodes)
        if maximising:
            value = max(value, child)
            alpha = max(alpha, value)
        else:
            value = min(value, child)
            beta = min(beta, value)
        if alpha >= beta:
            break
    return value
