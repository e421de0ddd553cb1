"""Gymnasium single-agent environment: one seat against configurable opponents.

The learner plays seat ``seat``; every other seat is moved by its opponent until it is the
learner's turn again. An opponent is a bot spec of the kit (``"random"``, ``"greedy"``,
``"mcts:iterations=200"``: the same bots as the tournament's) or any callable
``f(observation, action_mask) -> index`` over the documented encoding (a trained policy).
One opponent for all other seats, or a list with one per other seat in seat order.

Observation: a dict of ``observation`` (``OBS_SIZE`` float32) and ``action_mask``
(``NUM_ACTIONS`` int8); ``action_masks()`` returns the mask too (MaskablePPO's hook).
Reward: by ``reward`` (``cirulla.env.rewards``): "game" (default) is 0 until the game ends,
then +1 if the learner's side won, else -1; "deal" and "points" reward every deal that ends
between two of the learner's decisions. ``info["deal"]`` holds the score breakdown of a deal
that ended then (``deal_info``: relative sides, side 0 the learner's). An action outside the
mask ends the episode with reward -1 and ``info["illegal"]`` True (``illegal="raise"`` raises
instead), so that samplers ignoring the mask, ``check_env``'s among them, stay inside the API.
Renders (``render_mode``): "ansi", the learner's view as text, and "rgb_array", an image of
it (``cirulla.env.render``).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import cast

import gymnasium
import numpy as np
import numpy.typing as npt

import cirulla.env.render as rendering
from cirulla.bots.botspec import BotSpec
from cirulla.env.aec import Observation, observation_space
from cirulla.env.rewards import DealInfo, check_reward, deal_info
from cirulla.env.vector import Env, action_index, make_options
from cirulla.rules.encoding import NUM_ACTIONS
from cirulla.rules.options import Options

#: A policy over the documented encoding: (observation, action mask) -> fixed index.
ArrayPolicy = Callable[[npt.NDArray[np.float32], npt.NDArray[np.int8]], int]
Opponent = str | ArrayPolicy
#: An action as ``step`` takes it: a fixed index (Python or NumPy integer, or a 0-d array).
ActionLike = int | np.integer | npt.NDArray[np.integer]


class _SpecOpponent:
    """A kit bot (``make_policy``) moving a seat from the rules core's view of it."""

    def __init__(self, spec: str, seed: int) -> None:
        self.policy = BotSpec.parse(spec).policy(seed)

    def choose(self, env: Env, seat: int) -> int:
        game = env.game
        assert game is not None  # spec opponents run on the Python core
        legal = game.legal_actions()
        choice = self.policy.choose(game.view(seat), legal, None)
        if not isinstance(choice, int) or not 0 <= choice < len(legal):
            raise ValueError(f"opponent {self.policy.name}: answered {choice!r}")
        return legal[choice].to_int()


class CirullaGym(gymnasium.Env[Observation, ActionLike]):
    """A Cirulla game for one learning seat (see the module docstring)."""

    metadata = {"render_modes": rendering.RENDER_MODES, "render_fps": rendering.RENDER_FPS}

    def __init__(
        self,
        players: int = 2,
        preset: str = "standard",
        *,
        seat: int = 0,
        opponents: Opponent | Sequence[Opponent] = "random",
        illegal: str = "lose",
        core: str | None = None,
        render_mode: str | None = None,
        reward: str = "game",
        options: Options | None = None,
        **rules: object,
    ) -> None:
        self.options = options or make_options(players, preset, **rules)
        n = self.options.players
        if not 0 <= seat < n:
            raise ValueError(f"seat {seat}: expected 0..{n - 1}")
        if illegal not in ("lose", "raise"):
            raise ValueError(f"illegal {illegal!r}: expected 'lose' or 'raise'")
        self.render_mode = rendering.check_render_mode(render_mode)
        self.reward = check_reward(reward)
        others = [s for s in range(n) if s != seat]
        if isinstance(opponents, str) or callable(opponents):
            listed: list[Opponent] = [opponents] * len(others)
        elif isinstance(opponents, Sequence):
            listed = list(opponents)
        else:
            listed = []
        if not listed or not all(isinstance(o, str) or callable(o) for o in listed):
            raise ValueError(
                f"opponents {opponents!r}: expected a bot spec ('random', 'greedy', "
                "'mcts:iterations=200', 'policy:model=agent.npz'), a function "
                "f(observation, action_mask) -> index, or a list of them, one per other seat"
            )
        if len(listed) != len(others):
            raise ValueError(f"opponents: {len(listed)} given for {len(others)} other seats")
        self.seat = seat
        self.illegal = illegal
        self._gained = 0.0  # the learner's deal rewards since its last decision
        self._deal: DealInfo | None = None  # the last deal ended since then
        self._rng = random.Random(0)
        self._opponents: dict[int, Opponent] = dict(zip(others, listed, strict=True))
        needs_game = any(isinstance(o, str) and o.strip() != "random" for o in listed)
        self._core = "python" if needs_game else core
        self._spec_seed = 0
        self._bots: dict[int, _SpecOpponent | ArrayPolicy | None] = {}
        self.game_env = Env(self.options, seed=0, core=self._core, reward=self.reward)
        self._fresh = True
        # Gymnasium types a Dict space as Space[dict[str, Space]] (its samples are dicts of
        # arrays): the space's samples are this environment's observations
        self.observation_space = cast("gymnasium.spaces.Space[Observation]", observation_space())
        self.action_space = gymnasium.spaces.Discrete(NUM_ACTIONS)
        self._make_bots(0)

    def _make_bots(self, seed: int) -> None:
        self._rng = random.Random(seed)
        self._bots = {}
        for s, o in self._opponents.items():
            if isinstance(o, str):
                self._bots[s] = None if o.strip() == "random" else _SpecOpponent(o, seed + s)
            else:
                self._bots[s] = o

    def _obs(self) -> Observation:
        obs = self.game_env.observe(self.seat)
        if self.game_env.to_move == self.seat:
            mask = self.game_env.mask().view(np.int8)
        else:
            mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        return {"observation": obs, "action_mask": mask}

    def action_masks(self) -> npt.NDArray[np.bool_]:
        """The learner's legal-action mask as booleans (sb3-contrib's MaskablePPO)."""
        return self.game_env.mask().astype(bool)

    def _track(self) -> None:
        """After any seat's step: the learner's reward and the breakdown of a deal it ended."""
        env = self.game_env
        if not env.deal_ended:
            return
        score = env.deal_score()
        assert score is not None
        self._deal = deal_info(self.options, env.ended_deal, score, self.seat)
        if self.reward != "game":
            self._gained += env.step_rewards()[self.seat]

    def _play_opponents(self) -> None:
        env = self.game_env
        while (seat := env.to_move) is not None and seat != self.seat:
            bot = self._bots[seat]
            if bot is None:
                indices = [i for i in env.legal.indices if i >= 0]
                env.step(indices[self._rng.randrange(len(indices))])
            elif isinstance(bot, _SpecOpponent):
                env.step_code(bot.choose(env, seat))
            else:
                mask = env.mask().view(np.int8)
                env.step(int(bot(env.observe(seat), mask)))
            self._track()

    def _reward(self, done: bool) -> float:
        if self.reward == "game":
            return float(self.game_env.rewards()[self.seat]) if done else 0.0
        return self._gained

    def reset(
        self, *, seed: int | None = None, options: dict[str, object] | None = None
    ) -> tuple[Observation, dict[str, object]]:
        super().reset(seed=seed)
        if seed is not None:
            self.game_env.reset(seed=seed)
            self._make_bots(seed)
        elif not self._fresh:
            self.game_env.reset()
        self._fresh = False
        self._play_opponents()
        self._gained, self._deal = 0.0, None
        return self._obs(), {}

    def step(self, action: ActionLike) -> tuple[Observation, float, bool, bool, dict[str, object]]:
        env = self.game_env
        if env.to_move is None:
            raise RuntimeError("step on a finished game: call reset()")
        index = action_index(action)
        if not (0 <= index < NUM_ACTIONS and index in env.legal.indices):
            if self.illegal == "raise":
                raise ValueError(f"action index {index} is not legal in this position")
            return self._obs(), -1.0, True, False, {"illegal": True}
        self._gained, self._deal = 0.0, None
        env.step(index)
        self._track()
        self._play_opponents()
        done = env.to_move is None
        info: dict[str, object] = {"winner": env.winner} if done else {}
        if self._deal is not None:
            info["deal"] = self._deal
        return self._obs(), self._reward(done), done, False, info

    def render(self) -> str | npt.NDArray[np.uint8] | None:
        """The learner's view in ``render_mode`` (``cirulla.env.render``)."""
        return rendering.render(self.game_env.view(self.seat), self.render_mode)
