"""What a deal's end is worth to each side: the reward the search (``cirulla.bots.mcts``,
and ``_search.c``'s loop with the same constants) and the exact endgame
(``cirulla.bots.endgame``) both back up, and the rest of a deal solved for one side
(``solve_rest``). Both import it from here; neither imports the other for it.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

from cirulla.bots.heuristic import playout_code
from cirulla.rules.game import Game

POINT_SCALE = 20.0  # a deal won by this many points counts as a full win
WIN_WEIGHT = 0.7  # share of the reward given to winning the game when a side reaches the target

# The win-chance model: the game's remaining deals as a random walk. Measured on 300
# greedy-against-greedy games to 51 (1,601 deals): a side scores 9.0 points per deal on
# average and the deal's point difference has a standard deviation of 8.6.
DEAL_MEAN = 9.0
DEAL_SD = 8.6


def win_chance(totals: Sequence[int], target: int, side: int) -> float:
    """Chance that ``side`` wins the game from these totals (none has won yet).

    Each side still needs ``target - total`` points (at least 0); against the other side
    that needs fewest, the remaining deals are a random walk of the point difference with
    DEAL_SD per deal, over as many deals as the two needs take at DEAL_MEAN points a deal
    (at least half a deal): the normal chance that the walk covers the gap.
    """
    need = max(target - totals[side], 0)
    other = min(max(target - totals[s], 0) for s in range(len(totals)) if s != side)
    left = (need + other) / (2 * DEAL_MEAN)
    left = 0.5 if left < 0.5 else left
    x = (other - need) / (DEAL_SD * math.sqrt(left))
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


def rewards_of(game: Game, chance: bool = False) -> list[float]:
    """Reward in [0, 1] per side at the end of a (deal-only) game.

    ``chance`` (``reward="win"``): a deal that does not end the game gives WIN_WEIGHT of
    the reward to the chance of winning the game from the new totals.
    """
    score = game.last_score
    assert score is not None
    points = score.totals
    sides = len(points)
    out = []
    for side in range(sides):
        best_other = max(points[s] for s in range(sides) if s != side)
        r = 0.5 + (points[side] - best_other) / (2 * POINT_SCALE)
        r = 0.0 if r < 0.0 else 1.0 if r > 1.0 else r
        if game.winner is not None:
            r = (1 - WIN_WEIGHT) * r + WIN_WEIGHT * (game.winner == side)
        elif chance:
            r = (1 - WIN_WEIGHT) * r + WIN_WEIGHT * win_chance(
                game.totals, game.options.target, side
            )
        out.append(r)
    return out


def solve_rest(game: Game, my_side: int, chance: bool, blind: bool, reply: bool = False) -> Game:
    """The rest of a 2-player deal once the stock is empty, every card known in this
    world: the searcher's side plays the move of best reward for it (ties to the earlier
    legal action), the other side the playout policy without random moves. Returns the
    deal's end (``solve=1``; the native loop's ``solve_rest`` is the same)."""
    if game.deal_over:
        return game
    if game.options.side_of(game.turn) != my_side:
        after = game.copy()
        after.apply_code(playout_code(after, random.Random(0), 0.0, blind, reply))
        return solve_rest(after, my_side, chance, blind, reply)
    best: Game | None = None
    best_value = -1e18
    for code in game.reference_legal_codes():
        after = game.copy()
        after.apply_code(code)
        leaf = solve_rest(after, my_side, chance, blind, reply)
        value = rewards_of(leaf, chance)[my_side]
        if value > best_value:
            best, best_value = leaf, value
    assert best is not None
    return best
