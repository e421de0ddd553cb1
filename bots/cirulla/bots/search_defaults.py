"""The search bots' option defaults and their choices (``cirulla.bots.mcts``'s, the endgame
solver's, the inference's), in a module that imports nothing of theirs.

``cirulla.bots.specs`` lists every bot kind's options with their defaults, and every bot
process imports it (``cirulla.bots.loop``); with the defaults here, a bot of another kind
(random, greedy, a text engine's bridge) starts without importing the search, the endgame
solver and the inference (about 10% of a bot process's start; docs/performance-log.md,
"Start-up"). Their modules re-export each name, so ``cirulla.bots.mcts.DEFAULT_C`` is the
same object as before.
"""

from __future__ import annotations

from typing import Literal, get_args

DEFAULT_C = 0.7
DEFAULT_EPSILON = 0.1
DEFAULT_PRIOR = 10.0  # weight of the greedy appraisal as progressive bias at the root
#: How MctsPolicy plays a 2-player deal's last round, every card known: by the search
#: (the default: it plays the one true world against its model of the opponent), or
#: solved exactly (``cirulla.bots.endgame``; measured worse against greedy, docs/bots-research.md).
ENDGAMES = ("search", "exact")
Root = Literal["ucb", "halving"]  # how the root's visits are allocated (docs/bots.md)
ROOTS: tuple[Root, ...] = get_args(Root)
DEFAULT_ROOT: Root = "ucb"
# sighted: the playout's mover avoids leaving a sweep to the next player's (sampled) hand;
# blind: he weighs that risk from what he can see; reply: he weighs the best capture the
# next hand makes, whatever it takes (docs/bots.md)
Playout = Literal["sighted", "blind", "reply"]
PLAYOUTS: tuple[Playout, ...] = get_args(Playout)
DEFAULT_PLAYOUT: Playout = "sighted"
Expand = Literal["random", "best"]  # which untried action a tree node expands (docs/bots.md)
EXPANSIONS: tuple[Expand, ...] = get_args(Expand)
DEFAULT_EXPAND: Expand = "random"
DEFAULT_DEPTH = 0  # tree plies per iteration at most, the root action included (0: no limit)
# How the other sides move inside the tree (docs/bots.md): ``tree``, UCB on their own
# reward (a minimax opponent); ``playout``, the playout policy (a greedy-like opponent),
# so the tree branches only on the searcher's side's decisions; ``blind``, the same with
# the blind playout policy for them, in the tree and in the playouts (greedy's own way of
# weighing a sweep).
Opponent = Literal["tree", "playout", "blind"]
OPPONENTS: tuple[Opponent, ...] = get_args(Opponent)
DEFAULT_OPPONENT: Opponent = "playout"  # measured stronger against greedy, even head to head (docs)
# What a deal that does not end the game is worth (docs/bots.md): ``points``, its point
# difference only; ``win``, WIN_WEIGHT of the reward is the chance of winning the game
# from the totals after it (``win_chance``), as it is exactly when the deal ends the game.
Reward = Literal["points", "win"]
REWARDS: tuple[Reward, ...] = get_args(Reward)
DEFAULT_REWARD: Reward = "points"
# How the opponent's hidden hand is inferred (docs/bots.md): ``evidence``, worlds sampled
# at random and rejected by the evidence of its plays (``infer``); ``replay``, its hand
# drawn from sampled hands with which greedy would have made each of its plays this round
# (``PlayTracker.replay_hands``), the evidence only when no hand does; ``learned``, its
# hand drawn from sampled hands in proportion to how likely the learned network finds its
# plays of this round holding each (``cirulla.bots.belief``).
Posterior = Literal["evidence", "replay", "learned"]
POSTERIORS: tuple[Posterior, ...] = get_args(Posterior)
DEFAULT_POSTERIOR: Posterior = "evidence"
# What the root prior (progressive bias) reads (docs/bots.md): ``greedy``, the greedy
# appraisal of each root action; ``learned``, the learned bot's network's value of it
# (``cirulla.bots.learned``: the rest of the deal's point difference, from the view).
Guide = Literal["greedy", "learned"]
GUIDES: tuple[Guide, ...] = get_args(Guide)
DEFAULT_GUIDE: Guide = "greedy"

#: ``sampled_values``' default budget (``cirulla.bots.endgame``): minimax nodes over all its
#: worlds (about 1.4 ms of the native solver on the 2-core machine the docs measure on, 55
#: worlds on average).
SAMPLED_NODES = 20_000
#: ``cirulla.bots.inference``: rejection probability per contradicted observation (0: off)
DEFAULT_INFER = 0.9
