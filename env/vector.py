"""Stepping games for learners: one game (``Env``) and many at once (``VectorEnv``).

Both speak the fixed encoding of ``cirulla.env.encoding``: observations of the seat to move,
a legal-action mask over ``NUM_ACTIONS`` indices, and terminal rewards. They step the rules
core's ``Game`` (whichever core runs, ``CIRULLA_CORE``), so an episode is the rules core's
game, event for event.

Rewards: zero until the game ends, then +1 for every seat of the winning side and -1 for
every other seat (a 2- or 4-player game is zero-sum; with 3 players the two losers take -1).

Seeds: episode ``e`` (0, 1, ...) of a game seeded ``seed`` deals from
``Game(options, seed=episode_seed(seed, e))``: the same seed gives the same games, on any core.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from cirulla.env.encoding import (
    MAX_SEATS,
    NUM_ACTIONS,
    OBS_SIZE,
    LegalActions,
    legal_actions,
    observe,
)
from cirulla.rules.events import Event
from cirulla.rules.game import Game
from cirulla.rules.options import Options


def episode_seed(seed: int, episode: int) -> int:
    """The rules core's deck seed of episode ``episode`` of an environment seeded ``seed``."""
    return seed * 1_000_003 + episode


def make_options(players: int = 2, preset: str = "standard", **rules: Any) -> Options:
    """Options of a preset with a player count and rule overrides (``OptionError`` if bad)."""
    return Options.preset(preset, players=players, **rules)


class Env:
    """One game for per-step APIs: ``step(index)``, ``observe(seat)``, ``mask()``."""

    def __init__(self, options: Options | None = None, seed: int = 0) -> None:
        self.options = options or Options()
        self.seed = seed
        self.episode = -1
        self.game: Game
        self._legal: LegalActions
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        """Start the next episode (or episode 0 of ``seed``)."""
        if seed is not None:
            self.seed = seed
            self.episode = -1
        self.episode += 1
        self.game = Game(self.options, seed=episode_seed(self.seed, self.episode))
        self._legal = legal_actions(self.game)

    @property
    def to_move(self) -> int | None:
        return self.game.to_move

    @property
    def legal(self) -> LegalActions:
        """The legal actions of the seat to move, codes and fixed indices."""
        return self._legal

    def observe(
        self, seat: int, out: npt.NDArray[np.float32] | None = None
    ) -> npt.NDArray[np.float32]:
        return observe(self.game, seat, out)

    def mask(self, out: npt.NDArray[np.uint8] | None = None) -> npt.NDArray[np.uint8]:
        return self._legal.mask(out)

    def step(self, index: int) -> list[Event]:
        """Play the legal action of fixed index ``index`` (``ValueError`` if not legal)."""
        return self.step_code(self._legal.code_of(index))

    def step_code(self, code: int) -> list[Event]:
        """Play a legal action code (``IllegalActionError`` names the broken rule)."""
        events = self.game.apply(code)
        self._legal = legal_actions(self.game)
        return events

    def rewards(self) -> list[float]:
        """Per seat: 0 while the game runs, then +1 for the winning side, -1 for the others."""
        winner = self.game.winner
        if winner is None:
            return [0.0] * self.options.players
        side_of = self.options.side_of
        return [1.0 if side_of(s) == winner else -1.0 for s in range(self.options.players)]


class VectorEnv:
    """``num_envs`` games stepped together, auto-reset, writing into NumPy arrays.

    After ``reset`` and every ``step``, ``obs[i]`` is the observation of the seat to move in
    game ``i`` (``to_move[i]``) and ``masks[i]`` its legal indices. ``step(actions)`` returns
    ``(obs, masks, rewards, terminated, to_move)``: ``rewards[i, s]`` for seat ``s`` of game
    ``i`` (nonzero only when that game ended on this step), ``terminated[i]`` True when it
    ended; an ended game is replaced by its next episode at once, whose first position is what
    ``obs``/``masks`` then show. The arrays are reused from step to step: copy to keep them.
    """

    def __init__(
        self,
        num_envs: int,
        options: Options | None = None,
        seeds: Sequence[int] | None = None,
    ) -> None:
        if num_envs < 1:
            raise ValueError(f"num_envs must be at least 1, not {num_envs}")
        self.num_envs = num_envs
        self.options = options or Options()
        seeds = list(range(num_envs)) if seeds is None else list(seeds)
        if len(seeds) != num_envs:
            raise ValueError(f"seeds: {len(seeds)} given for {num_envs} games")
        self.envs = [Env(self.options, seed) for seed in seeds]
        self.obs = np.zeros((num_envs, OBS_SIZE), dtype=np.float32)
        self.masks = np.zeros((num_envs, NUM_ACTIONS), dtype=np.uint8)
        self.rewards = np.zeros((num_envs, MAX_SEATS), dtype=np.float32)
        self.terminated = np.zeros(num_envs, dtype=bool)
        self.to_move = np.zeros(num_envs, dtype=np.int64)
        self._fill_all()

    def reset(
        self, seeds: Sequence[int] | None = None
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.uint8], npt.NDArray[np.int64]]:
        for i, env in enumerate(self.envs):
            env.reset(None if seeds is None else seeds[i])
        self._fill_all()
        return self.obs, self.masks, self.to_move

    def _fill(self, i: int) -> None:
        env = self.envs[i]
        seat = env.to_move
        assert seat is not None  # auto-reset: a game in the batch is never over
        self.to_move[i] = seat
        env.observe(seat, self.obs[i])
        env.mask(self.masks[i])

    def _fill_all(self) -> None:
        for i in range(self.num_envs):
            self._fill(i)

    def step(
        self, actions: npt.ArrayLike
    ) -> tuple[
        npt.NDArray[np.float32],
        npt.NDArray[np.uint8],
        npt.NDArray[np.float32],
        npt.NDArray[np.bool_],
        npt.NDArray[np.int64],
    ]:
        chosen = np.asarray(actions, dtype=np.int64).reshape(-1)
        if chosen.shape[0] != self.num_envs:
            raise ValueError(f"actions: {chosen.shape[0]} given for {self.num_envs} games")
        self.rewards[:] = 0.0
        self.terminated[:] = False
        n = self.options.players
        for i, env in enumerate(self.envs):
            env.step(int(chosen[i]))
            if env.to_move is None:
                self.rewards[i, :n] = env.rewards()
                self.terminated[i] = True
                env.reset()
            self._fill(i)
        return self.obs, self.masks, self.rewards, self.terminated, self.to_move
