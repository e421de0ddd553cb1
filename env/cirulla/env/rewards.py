"""Reward modes, the same on every environment (Gymnasium, PettingZoo, ``Env``/``VectorEnv``
and the OpenSpiel game), and the score breakdown a deal's end puts in ``info``.

* ``"game"`` (the default): 0 until the game ends, then +1 for every seat of the winning
  side and -1 for every other seat;
* ``"points"``: at the end of every deal, each seat gets its side's points of that deal minus
  the mean of the other sides' (with two sides: mine minus theirs), 0 on other steps;
* ``"deal"``: the sign of that difference (+1, 0 or -1) at the end of every deal.

The per-deal modes give a learner a signal every deal instead of one per game; the game's
end is the end of its last deal, which is rewarded like the others (no extra ±1). With two
sides every mode is zero-sum; with three players ``"points"`` is too. The native core
computes the same values in C (``step_rewards`` in env/cirulla/env/_native_env.c).
"""

from __future__ import annotations

from typing import TypedDict

from cirulla.rules.options import Options
from cirulla.rules.scoring import DealScore, SideScore, SideScoreDoc

REWARD_MODES = ("game", "deal", "points")
#: The native core's number of each mode.
REWARD_CODE = {name: code for code, name in enumerate(REWARD_MODES)}


def check_reward(reward: object) -> str:
    """A caller's reward mode, else ``ValueError`` naming the field."""
    if reward not in REWARD_MODES:
        raise ValueError(f"reward {reward!r}: expected 'game', 'deal' or 'points'")
    return str(reward)


def deal_score_of(native: tuple[int, tuple[tuple[int, ...], ...]]) -> DealScore:
    """The native core's ``score()`` answer as the rules core's ``DealScore``."""
    cappotto, items = native
    return DealScore(tuple(SideScore(*side) for side in items), None if cappotto < 0 else cappotto)


def deal_rewards(options: Options, score: DealScore, mode: str) -> list[float]:
    """Per seat, the reward of a deal that ended with ``score`` (mode "deal" or "points")."""
    totals = [side.total for side in score.sides]
    sides = len(totals)
    out = []
    for seat in range(options.players):
        side = options.side_of(seat)
        others = (sum(totals) - totals[side]) / (sides - 1)
        margin = float(totals[side] - others)
        if mode == "deal":
            margin = float((margin > 0) - (margin < 0))
        out.append(margin)
    return out


class DealInfo(TypedDict):
    """``info["deal"]`` when a deal ends (``deal_info``)."""

    deal: int
    points: list[int]
    items: list[SideScoreDoc]
    cappotto: int


def deal_info(options: Options, deal: int, score: DealScore, seat: int) -> DealInfo:
    """``info["deal"]`` when a deal ends: its number and each side's items, relative to
    ``seat`` (side 0 is the seat's own), with the totals and the cappotto side (-1: none)."""
    sides = len(score.sides)
    me = options.side_of(seat)
    order = [(me + k) % sides for k in range(sides)]
    return {
        "deal": deal,
        "points": [score.sides[s].total for s in order],
        "items": [score.sides[s].to_dict() for s in order],
        # -1, not None: Gymnasium's vector environments gather info values into arrays
        "cappotto": -1 if score.cappotto is None else (score.cappotto - me) % sides,
    }
