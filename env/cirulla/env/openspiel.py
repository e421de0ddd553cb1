"""OpenSpiel game ``python_cirulla``, registered with ``pyspiel.register_game`` on import.

An imperfect-information, sequential game. Each position is a native state
(``cirulla.env._native.SpielState``, env/cirulla/env/_native_env.c): the rules core's C state
machine stepped in place (no copy of the game per step), legality and the observation
encoded in C. Chance, by the ``chance`` parameter:

* ``"cards"`` (the default, exact): every deck is dealt by 40 chance nodes, each drawing the
  next card uniformly among those not drawn yet (so every deck order is equally likely, as
  the rules core's shuffle); a deck whose table would show two aces is dealt again by 40
  more (the rules' redeal). OpenSpiel's explicit-stochastic mode.
* ``"sampled"``: no chance nodes; the state shuffles each deck itself (OpenSpiel's
  sampled-stochastic mode), from a stream seeded by the ``seed`` parameter: each initial
  state draws its own; a clone carries its parent's on (the same future, as OpenSpiel's
  sampled games do), ``resample_from_infostate`` draws a fresh one (the future decks are
  hidden too). A deal is then no step at all, not 40 chance steps: the fast mode for
  simulation and learning.

A deal's deck is drawn once the deal before it is scored. Player actions are the fixed
indices of ``cirulla.rules.encoding`` (``NUM_ACTIONS``), chance outcomes the card drawn (0..39).
Rewards by ``reward`` (``cirulla.env.rewards``): "game" returns +1 for every seat of the
winning side and -1 for the others at the end (zero-sum with 2 and 4 players); "deal" and
"points" reward every deal as it ends (``rewards()``; ``returns()`` is their sum).
``observation_tensor`` is the encoding's observation of the seat (``OBS_SIZE``);
``information_state_tensor`` is the same vector (the seat's own hand, the public captures and
declarations carry what a perfect-recall state adds that matters to play);
``information_state_string`` is exact: the public history of plays (every play in Cirulla is
shown) and the seat's view. ``resample_from_infostate`` deals the unseen cards with the rules
core's ``sample_world``.

Parameters: ``players`` (2), ``preset`` ("standard"), ``chance`` ("cards"), ``seed`` (0),
``reward`` ("game") and each rule option of ``cirulla.rules.options.Options`` as an integer,
-1 meaning the preset's value (booleans 0/1).
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable

import numpy as np
import numpy.typing as npt
import pyspiel  # type: ignore[import-not-found,unused-ignore]

from cirulla.env.rewards import REWARD_CODE, check_reward
from cirulla.env.spiel_params import RULES, GameParams, options_of
from cirulla.env.vector import Splitmix, view_of_zones
from cirulla.rules.actions import action_text
from cirulla.rules.core import options_tuple
from cirulla.rules.encoding import NUM_ACTIONS, OBS_SIZE
from cirulla.rules.options import Options
from cirulla.rules.views import View, sample_world

try:
    import cirulla.env._native as _native  # the sibling itself, not the package
except ImportError:  # built without a compiler: the game says so when loaded
    _native = None  # type: ignore[assignment]  # mypy has no "this module or None"

GAME_NAME = "python_cirulla"
_PARAMS: GameParams = {
    "players": 2,
    "preset": "standard",
    "chance": "cards",
    "seed": 0,
    "reward": "game",
    **dict.fromkeys(RULES, -1),
}
CHANCE_MODES = ("cards", "sampled")
#: Far above any real game (a game to the highest target plays ~100 deals of ~40 moves,
#: each deck dealt by 40 chance nodes).
MAX_GAME_LENGTH = 100_000
_CHANCE = int(pyspiel.PlayerId.CHANCE)
_TERMINAL = int(pyspiel.PlayerId.TERMINAL)


def _game_type(zero_sum: bool, chance: str = "cards", reward: str = "game") -> pyspiel.GameType:
    return pyspiel.GameType(
        short_name=GAME_NAME,
        long_name="Python Cirulla",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=(
            pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
            if chance == "cards"
            else pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC
        ),
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=(
            pyspiel.GameType.Utility.ZERO_SUM if zero_sum else pyspiel.GameType.Utility.GENERAL_SUM
        ),
        reward_model=(
            pyspiel.GameType.RewardModel.TERMINAL
            if reward == "game"
            else pyspiel.GameType.RewardModel.REWARDS
        ),
        max_num_players=4,
        min_num_players=2,
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=_PARAMS,
    )


class CirullaGame(pyspiel.Game):  # type: ignore[misc,unused-ignore]
    """The OpenSpiel game (see the module docstring)."""

    def __init__(self, params: GameParams | None = None) -> None:
        if _native is None:
            raise ValueError(f"{GAME_NAME} needs the native environment (built with a C compiler)")
        merged = {**_PARAMS, **(params or {})}
        self.options = options_of(merged)
        self.chance = str(merged["chance"])
        if self.chance not in CHANCE_MODES:
            raise ValueError(f"parameter chance {self.chance!r}: expected 'cards' or 'sampled'")
        self.reward = check_reward(merged["reward"])
        self.reward_code = REWARD_CODE[self.reward]
        self.options_tuple = options_tuple(self.options)
        self._seeds = Splitmix(int(merged["seed"]))
        n = self.options.players
        per_deal = self.reward != "game"
        zero_sum = n != 3 or self.reward == "points"
        info = pyspiel.GameInfo(
            num_distinct_actions=NUM_ACTIONS,
            max_chance_outcomes=40 if self.chance == "cards" else 0,
            num_players=n,
            min_utility=-1.0 if not per_deal else -10_000.0,
            max_utility=1.0 if not per_deal else 10_000.0,
            utility_sum=0.0 if zero_sum else None,
            max_game_length=MAX_GAME_LENGTH,
        )
        super().__init__(_game_type(zero_sum, self.chance, self.reward), info, merged)

    def new_initial_state(self) -> CirullaState:
        mode = 0 if self.chance == "cards" else 1
        return CirullaState(self, _native.SpielState(self.options_tuple, mode, self._seeds.next()))

    def make_py_observer(
        self,
        iig_obs_type: pyspiel.IIGObservationType | None = None,
        params: GameParams | None = None,
    ) -> CirullaObserver:
        perfect = iig_obs_type is not None and getattr(iig_obs_type, "perfect_recall", False)
        return CirullaObserver(perfect)


#: OpenSpiel's function that walks every state of a game (tabular algorithms: CFR, ...).
_ENUMERATOR = "_get_subgames_states"
TOO_LARGE = (
    f"{GAME_NAME}: OpenSpiel's tabular algorithms (CFR, CFR+, exact best response, "
    "TabularPolicy, get_all_states) enumerate every state of the game, and a Cirulla game "
    "has far too many; use sampling ones instead (ISMCTS, MCTS, outcome sampling, NFSP, "
    "policy gradients), docs/env.md"
)


class _Shared:
    """What a state shares with its clones (the rules): OpenSpiel copies a Python state's
    attributes with ``copy.deepcopy`` on every clone, and this one is not copied. The copy
    is also where a walk over every state shows up first, so it stops it with one clear
    message instead of a ``RecursionError`` deep in the walk."""

    def __init__(self, options: Options) -> None:
        self.options = options

    def __deepcopy__(self, memo: dict[int, object]) -> _Shared:
        frame = sys._getframe(1)
        for _ in range(12):
            if frame.f_code.co_name == _ENUMERATOR:
                raise ValueError(TOO_LARGE)
            if frame.f_back is None:
                break
            frame = frame.f_back
        return self


class CirullaState(pyspiel.State):  # type: ignore[misc,unused-ignore]
    """One position: a native state stepped in place (see the module docstring)."""

    def __init__(self, game: CirullaGame, native: _native.SpielState) -> None:
        super().__init__(game)
        self._shared = _Shared(game.options)
        self._s = native
        self._reward = game.reward_code
        self._rewards = [0.0] * game.options.players
        self._returns = [0.0] * game.options.players

    @property
    def options(self) -> Options:
        return self._shared.options

    # -- whose turn ---------------------------------------------------------------------
    def current_player(self) -> int:
        player: int = self._s.current_player()
        return player

    def is_terminal(self) -> bool:
        over: bool = self._s.is_terminal()
        return over

    def is_chance_node(self) -> bool:
        dealing: bool = self._s.is_chance()
        return dealing

    # -- actions ------------------------------------------------------------------------
    def _legal_actions(self, player: int) -> list[int]:
        if player != self._s.current_player():
            return []
        actions: list[int] = self._s.legal_actions()
        return actions

    def legal_actions(self, player: int | None = None) -> list[int]:
        if player is None:
            actions: list[int] = self._s.legal_actions()
            return actions
        return self._legal_actions(player)

    def chance_outcomes(self) -> list[tuple[int, float]]:
        outcomes: list[tuple[int, float]] = self._s.chance_outcomes()
        return outcomes

    def _apply_action(self, action: int) -> None:
        # rewards() is what the players gained since the last decision: a deal's reward,
        # earned by the play that ended it, stays through the chance nodes that follow
        done = self._s.apply(action)
        if self._reward and done != 2:
            if done:
                self._rewards = self._s.deal_rewards(self._reward)
                self._returns = [a + b for a, b in zip(self._returns, self._rewards, strict=True)]
            else:
                self._rewards = [0.0] * len(self._rewards)

    def _action_to_string(self, player: int, action: int) -> str:
        if player == _CHANCE:
            return f"deal card {action}"
        return action_text(self._s.code_of(action))

    def rewards(self) -> list[float]:
        if self._reward:
            return list(self._rewards)
        return self.returns() if self._s.is_terminal() else [0.0] * self.options.players

    def returns(self) -> list[float]:
        if self._reward:
            return list(self._returns)
        n = self.options.players
        winner = self._s.status()[1]
        if winner < 0:
            return [0.0] * n
        side_of = self.options.side_of
        return [1.0 if side_of(s) == winner else -1.0 for s in range(n)]

    # -- what a seat knows --------------------------------------------------------------
    def _view(self, seat: int | None) -> View:
        return view_of_zones(self.options, self._s.zones(), seat)

    def _seat(self, player: int | None) -> int:
        seat = self._s.current_player() if player is None else player
        if not 0 <= seat < self.options.players:
            raise ValueError(f"player {seat}: expected 0..{self.options.players - 1}")
        return int(seat)

    def information_state_string(self, player: int | None = None) -> str:
        seat = self._seat(player)
        if self._s.status()[2] == 0:
            return f"p{seat} dealing"
        public = " ".join(f"{s}:{action_text(code)}" for s, code in self._s.history())
        return f"p{seat} {public} | {self._view(seat)}"

    def observation_string(self, player: int | None = None) -> str:
        seat = self._seat(player)
        return "dealing" if self._s.status()[2] == 0 else str(self._view(seat))

    def information_state_tensor(self, player: int | None = None) -> list[float]:
        values: list[float] = self._s.tensor(self._s.current_player() if player is None else player)
        return values

    def observation_tensor(self, player: int | None = None) -> list[float]:
        values: list[float] = self._s.tensor(self._s.current_player() if player is None else player)
        return values

    def observe(self, player: int, out: npt.NDArray[np.float32]) -> None:
        """The observation written into a float32 array of ``OBS_SIZE`` (no list built)."""
        self._s.observe(player, out)

    def resample_from_infostate(
        self, player_id: int, probability_sampler: Callable[[], float]
    ) -> CirullaState:
        """A state the seat cannot tell from this one: unseen cards dealt by ``sample_world``."""
        state: CirullaState = self.clone()
        if self._s.status()[2] == 0 or self._s.is_chance() or self._s.is_terminal():
            return state  # nothing hidden is dealt yet, or the game is over
        rng = random.Random(int(probability_sampler() * (1 << 62)))
        world = sample_world(self._view(player_id), rng)
        state._s.set_hidden(world.hands, world.stock[::-1])
        state._s.reseed(rng.getrandbits(64))  # sampled: the true future decks stay hidden
        return state

    def __str__(self) -> str:
        status = self._s.status()
        if status[2] == 0 or self._s.is_chance():
            return f"dealing: {status[3]} cards drawn"
        return str(self._view(None))


class CirullaObserver:
    """Observer for the ``make_observation`` API: the encoding's vector of a seat."""

    def __init__(self, perfect_recall: bool) -> None:
        self.perfect_recall = perfect_recall
        self.tensor = np.zeros(OBS_SIZE, dtype=np.float32)
        self.dict = {"observation": self.tensor}

    def set_from(self, state: CirullaState, player: int) -> None:
        state.observe(player, self.tensor)

    def string_from(self, state: CirullaState, player: int) -> str:
        if perfect := self.perfect_recall:
            del perfect
            return state.information_state_string(player)
        return state.observation_string(player)


pyspiel.register_game(_game_type(True), CirullaGame)
