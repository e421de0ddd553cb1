"""Environments for learning agents on the Cirulla rules core (the ``env`` extra).

``cirulla.rules.encoding`` defines the one observation and action encoding; ``cirulla.env.vector``
steps one game (``Env``) or many (``VectorEnv``) in it. The ecosystem wrappers build on these:
``aec_env(players=2, preset="standard", **rules)`` (PettingZoo AEC, ``cirulla.env.aec``), the
Gymnasium id ``"Cirulla-v0"`` registered on import (``cirulla.env.gym``; options as keyword
arguments to ``gymnasium.make``), and the OpenSpiel game ``"python_cirulla"`` registered on
``import cirulla.env.openspiel``. docs/env.md documents all of them.

Importing this package needs nothing beyond the base install, and imports Gymnasium where
it is installed (to register the id): the ``cirulla`` command's help does not import it
(``cirulla bench env``'s parser is ``cirulla.cli_env``). The Gymnasium id is registered
only when Gymnasium imports; the modules that need NumPy, Gymnasium, PettingZoo or OpenSpiel
import them themselves, and ``aec_env`` says which package is missing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cirulla.extras import install_hint

try:
    import gymnasium as _gymnasium
except ImportError:  # no env extra: nothing to register, the rest of cirulla still works
    _gymnasium = None  # type: ignore[assignment]

if _gymnasium is not None and "Cirulla-v0" not in _gymnasium.registry:
    _gymnasium.register(id="Cirulla-v0", entry_point="cirulla.env.gym:CirullaGym")

if TYPE_CHECKING:  # PettingZoo is imported when an environment is made
    from cirulla.env.aec import CirullaAEC

EXTRA_HINT = install_hint("env")


def aec_env(players: int = 2, preset: str = "standard", **rules: Any) -> CirullaAEC:
    """The PettingZoo AEC environment (``cirulla.env.aec.CirullaAEC``); ``seed``, ``core``
    and ``render_mode`` may be given among the keywords."""
    try:
        from cirulla.env.aec import aec_env as make
    except ImportError as exc:
        raise ImportError(
            f"cirulla.env.aec_env needs the env extra ({exc.name} is missing): {EXTRA_HINT}"
        ) from None
    return make(players, preset, **rules)


__all__ = ["EXTRA_HINT", "aec_env"]
