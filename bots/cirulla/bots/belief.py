"""The learned belief model: the opponent's hidden hand weighed by how likely the learned
network finds the plays it made holding it (mcts option ``posterior=learned``).

The ``replay`` posterior keeps only the hands with which greedy would have made every
play of this round: exact against greedy, and useless against anyone else (no hand
replays them, and the search falls back on the evidence). This one is soft, in the
manner of policy-based inference for Skat (Solinas et al. 2019, "Improving search with
supervised learning in trick-based card games"): each sampled hand's weight is the
product, over the opponent's plays of this round, of the probability a softmax over the
network's action values gives the play it made, from the position it faced holding that
hand. A play every hand explains equally weighs nothing; one that only some hands make
attractive moves the sample toward them.

Only the opponent's positions as the tracking seat reconstructed them from its own views
are read (``inference.PlayTracker``), and the network reads the opponent's view of each:
nothing here sees a card the seat does not.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from cirulla.bots.inference import positions_held
from cirulla.bots.learned import WEIGHTS_PATH, WEIGHTS_SHA256, QNet, action_values, cached_qnet

if TYPE_CHECKING:
    from cirulla.bots.inference import _Play

#: Softmax temperature over the network's action values, in points: an opponent prefers
#: an action a point better than another by a factor e (the network's values of close
#: actions differ by fractions of a point; greedy and mcts rarely play a move a point worse).
BELIEF_TEMPERATURE = 0.5


def shipped_net() -> QNet:
    """The shipped weights, loaded (and checked) once per process."""
    return cached_qnet(WEIGHTS_PATH, WEIGHTS_SHA256)


def play_log_likelihood(
    net: QNet,
    plays: Sequence[_Play],
    seat: int,
    hidden: int,
    temperature: float = BELIEF_TEMPERATURE,
) -> float:
    """Log of the chance the network's softmax policy, holding ``hidden`` now, gives
    ``seat``'s ``plays`` of this round, each from its position (``positions_held``)."""
    total = 0.0
    for p, before in positions_held(plays, seat, hidden):
        codes = before.legal_codes()
        if p.code not in codes:
            return -math.inf  # this hand could not have made the play
        if len(codes) < 2:
            continue
        values = [float(v) / temperature for v in action_values(net, before.view(seat), codes)]
        top = max(values)
        norm = top + math.log(sum(math.exp(v - top) for v in values))
        total += values[codes.index(p.code)] - norm
    return total
