"""``cirulla.env.cirulla_v0``: the PettingZoo environment in ``pettingzoo.classic``'s form.

``raw_env(**kwargs)`` is the bare AEC environment (``cirulla.env.aec.aec_env``: ``players``,
``preset``, rule options, ``seed``, ``core``, ``render_mode``, ``reward``); ``env(**kwargs)``
wraps it as PettingZoo's classic games are wrapped: an illegal action ends the game for the
agent that made it (reward -1, ``TerminateIllegalWrapper``), actions are checked against the
action space, and the order of ``reset``/``step`` calls is enforced::

    from cirulla.env import cirulla_v0

    env = cirulla_v0.env(players=2, render_mode="ansi")
"""

from __future__ import annotations

from typing import Any

from pettingzoo import AECEnv  # type: ignore[import-untyped]
from pettingzoo.utils import wrappers  # type: ignore[import-untyped]

from cirulla.env.aec import CirullaAEC, aec_env


def raw_env(**kwargs: Any) -> CirullaAEC:
    """The unwrapped AEC environment (``aec_env``'s keywords)."""
    return aec_env(**kwargs)


def env(**kwargs: Any) -> AECEnv:
    """The AEC environment with ``pettingzoo.classic``'s wrappers."""
    wrapped: AECEnv = raw_env(**kwargs)
    wrapped = wrappers.TerminateIllegalWrapper(wrapped, illegal_reward=-1)
    wrapped = wrappers.AssertOutOfBoundsWrapper(wrapped)
    return wrappers.OrderEnforcingWrapper(wrapped)


__all__ = ["env", "raw_env"]
