"""Environments for learning agents on the Cirulla rules core (the ``env`` extra).

``cirulla.env.encoding`` defines the one observation and action encoding; ``cirulla.env.vector``
steps one game (``Env``) or many (``VectorEnv``) in it. The ecosystem wrappers build on these:
``aec_env(players=2, preset="standard", **rules)`` (PettingZoo AEC, ``cirulla.env.aec``), the
Gymnasium id ``"Cirulla-v0"`` registered on import (``cirulla.env.gym``; options as keyword
arguments to ``gymnasium.make``), and the OpenSpiel game ``"python_cirulla"`` registered on
``import cirulla.env.openspiel``. docs/env.md documents all of them.
"""

from __future__ import annotations

from typing import Any

try:
    import gymnasium as _gymnasium
    import numpy as _numpy  # noqa: F401  (the encoding's arrays)
except ImportError as exc:  # pragma: no cover - exercised by the packaging test
    raise ImportError(
        f"cirulla.env needs the env extra ({exc.name} is missing): pip install 'cirulla[env]'"
    ) from None

if "Cirulla-v0" not in _gymnasium.registry:
    _gymnasium.register(id="Cirulla-v0", entry_point="cirulla.env.gym:CirullaGym")


def aec_env(players: int = 2, preset: str = "standard", **rules: Any) -> Any:
    """The PettingZoo AEC environment (``cirulla.env.aec.CirullaAEC``); ``seed``, ``core``
    and ``render_mode`` may be given among the keywords."""
    from cirulla.env.aec import aec_env as make

    return make(players, preset, **rules)


__all__ = ["aec_env"]
