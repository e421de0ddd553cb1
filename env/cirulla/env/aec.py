"""PettingZoo AEC environment: every seat an agent, one game of the rules core.

Agents are ``player_0`` .. ``player_{n-1}`` (seat numbers; with 4 players seats 0 and 2 are
one side, 1 and 3 the other). Each agent observes a dict, the convention of PettingZoo's
classic games: ``observation`` (``cirulla.rules.encoding``'s ``OBS_SIZE`` float32 vector of
what that seat may know) and ``action_mask`` (``NUM_ACTIONS`` int8, the dtype that
``Discrete.sample`` takes; all zero unless it is that agent's turn). Actions are the
encoding's fixed indices. Rewards by ``reward`` (``cirulla.env.rewards``): "game" (default)
is zero until the game ends, then +1 for every seat of the winning side and -1 for every other
seat; "deal" and "points" reward every seat at the end of every deal. When a deal ends, every
agent's ``info["deal"]`` holds its score breakdown (relative sides, side 0 the agent's).
``render()``: the view of the agent to move, "ansi" or "rgb_array" (``cirulla.env.render``).

Stepping runs through ``cirulla.env.vector.Env`` (the native core when built, else the
Python reference; the same trajectories for the same seed).
"""

from __future__ import annotations

from typing import TypeAlias

import numpy as np
import numpy.typing as npt
from gymnasium import spaces
from pettingzoo import AECEnv  # type: ignore[import-untyped]

import cirulla.env.render as rendering
from cirulla.env.rewards import check_reward, deal_info
from cirulla.env.vector import Env, action_index, make_options
from cirulla.rules.encoding import NUM_ACTIONS, OBS_SIZE
from cirulla.rules.options import Options

#: The highest value an observation entry can take (scores stay far below it).
OBS_HIGH = 1e6


#: One seat's observation as both wrappers return it (``observation_space``): the float32
#: ``"observation"`` and the int8 ``"action_mask"`` (a dict, the Gymnasium space's type).
Observation: TypeAlias = dict[str, npt.NDArray[np.float32] | npt.NDArray[np.int8]]


def observation_space() -> spaces.Dict:
    """One agent's observation space (the same for every agent and every rule set)."""
    return spaces.Dict(
        {
            "observation": spaces.Box(0.0, OBS_HIGH, (OBS_SIZE,), dtype=np.float32),
            "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), dtype=np.int8),
        }
    )


class CirullaAEC(AECEnv):  # type: ignore[misc,unused-ignore]  # pettingzoo is untyped
    """A Cirulla game as a PettingZoo AEC environment (see the module docstring)."""

    metadata = {
        "name": "cirulla_v0",
        "render_modes": rendering.RENDER_MODES,
        "render_fps": rendering.RENDER_FPS,
        "is_parallelizable": False,
    }

    def __init__(
        self,
        options: Options | None = None,
        *,
        seed: int = 0,
        core: str | None = None,
        render_mode: str | None = None,
        reward: str = "game",
    ) -> None:
        super().__init__()
        self.render_mode = rendering.check_render_mode(render_mode)
        self.reward = check_reward(reward)
        self.options = options or Options()
        self.core = core
        self.game_env = Env(self.options, seed=seed, core=core, reward=self.reward)
        self._fresh = True
        self.possible_agents = [f"player_{s}" for s in range(self.options.players)]
        self.agent_name_mapping = {a: s for s, a in enumerate(self.possible_agents)}
        self._obs_space = observation_space()
        self._act_space = spaces.Discrete(NUM_ACTIONS)
        self.observation_spaces = {a: self._obs_space for a in self.possible_agents}
        self.action_spaces = {a: self._act_space for a in self.possible_agents}
        self._reset_state()

    def observation_space(self, agent: str) -> spaces.Dict:
        return self._obs_space

    def action_space(self, agent: str) -> spaces.Discrete:
        return self._act_space

    def _reset_state(self) -> None:
        self.agents = list(self.possible_agents)
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos: dict[str, dict[str, object]] = {a: {} for a in self.agents}
        self._infos_set = False
        seat = self.game_env.to_move
        self.agent_selection = self.possible_agents[seat if seat is not None else 0]

    def reset(self, seed: int | None = None, options: dict[str, object] | None = None) -> None:
        """A new game: episode 0 of ``seed``, or the next episode of the current seed."""
        if seed is not None:
            self.game_env.reset(seed=seed)
            self._act_space.seed(seed)
        elif not self._fresh:
            self.game_env.reset()
        self._fresh = False
        self._reset_state()

    def observe(self, agent: str) -> Observation:
        seat = self.agent_name_mapping[agent]
        obs = self.game_env.observe(seat)
        if self.game_env.to_move == seat:
            mask = self.game_env.mask().view(np.int8)
        else:
            mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        return {"observation": obs, "action_mask": mask}

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None:
            raise ValueError(f"{agent}: action None while the game is running")
        self._cumulative_rewards[agent] = 0.0
        env = self.game_env
        env.step(action_index(action))
        seat = env.to_move
        ended = env.deal_ended
        if ended:
            score = env.deal_score()
            assert score is not None
            for s, a in enumerate(self.possible_agents):
                self.infos[a] = {"deal": deal_info(self.options, env.ended_deal, score, s)}
            rewards = env.step_rewards()
            for a, reward in zip(self.possible_agents, rewards, strict=True):
                self.rewards[a] = reward
            self._infos_set = True
        else:
            for a in self.agents:
                self.rewards[a] = 0.0
            if self._infos_set:  # the last deal's infos last one step
                self.infos = {a: {} for a in self.agents}
                self._infos_set = False
        if seat is None:
            for a in self.possible_agents:
                self.terminations[a] = True
                self.infos[a]["winner"] = env.winner
            self._accumulate_rewards()
            # Dead agents are stepped out in seat order, from the one who just moved.
            self.agent_selection = agent
            return
        if ended:
            self._accumulate_rewards()
        self.agent_selection = self.possible_agents[seat]

    def render(self) -> str | npt.NDArray[np.uint8] | None:
        """The view of the agent to move (the last to move once the game is over)."""
        seat = self.agent_name_mapping[self.agent_selection]
        return rendering.render(self.game_env.view(seat), self.render_mode)

    def close(self) -> None:
        pass


def aec_env(
    players: int = 2,
    preset: str = "standard",
    *,
    seed: int = 0,
    core: str | None = None,
    render_mode: str | None = None,
    reward: str = "game",
    **rules: object,
) -> CirullaAEC:
    """The PettingZoo AEC environment of a preset with a player count and rule overrides."""
    return CirullaAEC(
        make_options(players, preset, **rules),
        seed=seed,
        core=core,
        render_mode=render_mode,
        reward=reward,
    )
