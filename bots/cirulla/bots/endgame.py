"""The last round of a 2-player deal, solved exactly.

Once the stock is empty in a 2-player game, every card is known to both players: what a
seat cannot see is exactly the opponent's hand. What is left of the deal is then a small
game of perfect information (at most three cards a hand, six plies), and its minimax value
can be computed outright instead of estimated. ``learned`` plays its last rounds this way
(``endgame=exact``, the default; ``endgame=network`` leaves them to the network): the
network's moves there cost it more than a quarter of what it gives up to the search it
imitates (docs/bots.md), and a solver is exact where both fall short.

The value of a finished deal is the search's own reward (``mcts.rewards_of``): the deal's
point difference, with most of the weight on winning the game when the deal ends it.
Two players' rewards add up to one, so the opponent minimises what the seat maximises.
Minimax alone assumes an opponent who never errs; many moves are then equally good, and
among those the solver takes the one worth most against the search's model of a club
player (the playout policy, ``mcts.solve_rest``): never worse against best play, better
against greedy and its like.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

from cirulla.bots.compiled import require_search
from cirulla.bots.heuristic import SCOPA_POINT, STATIC_WORTH
from cirulla.bots.mcts import POINT_SCALE, WIN_WEIGHT, rewards_of, solve_rest
from cirulla.rules.core import options_tuple, resolve_core, view_tuple
from cirulla.rules.game import Game
from cirulla.rules.views import View, sample_world

#: Minimax values closer than this are equal (float sums of the same rewards).
EXACT_TIE = 1e-9


def solvable(view: View) -> bool:
    """Whether ``view`` knows every card of the rest of its deal (2 players, no stock)."""
    return view.options.players == 2 and view.stock == 0 and view.seat is not None


def best_exact(view: View, codes: Sequence[int], core: str | None = None) -> int:
    """The index in ``codes`` of the move of best minimax value for ``view``'s side;
    ``view`` must be ``solvable``. Among moves of equal value (common: the outcome is often
    settled whatever is played), the one worth most against the playout policy
    (``mcts.solve_rest``, the model of a club player the search plays against), then the
    earliest: no loss against best play, and a better chance against a player who errs.
    ``core``: native (``_search.c``'s ``best_exact``, the default when built) or python
    (this module's reference, the same answer in many times the time)."""
    assert view.seat is not None
    if resolve_core(core) == "native":
        return int(
            require_search().best_exact(
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


def _value(game: Game, side: int, alpha: float, beta: float) -> float:
    """``side``'s reward of ``game`` played out by both sides at their best (alpha-beta:
    exact inside ``(alpha, beta)``, a bound outside it)."""
    if game.deal_over:
        return rewards_of(game)[side]
    maximising = game.options.side_of(game.turn) == side
    value = -math.inf if maximising else math.inf
    for code in game.legal_codes():
        after = game.copy()
        after.apply_code(code)
        child = _value(after, side, alpha, beta)
        if maximising:
            value = max(value, child)
            alpha = max(alpha, value)
        else:
            value = min(value, child)
            beta = min(beta, value)
        if alpha >= beta:
            break
    return value
