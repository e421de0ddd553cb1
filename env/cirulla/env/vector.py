"""Stepping games for learners: one game (``Env``) and many at once (``VectorEnv``).

Both speak the fixed encoding of ``cirulla.rules.encoding``: observations of the seat to move,
a legal-action mask over ``NUM_ACTIONS`` indices, and terminal rewards. They step the rules
core's game: on the native core through ``cirulla.env._native`` (env/cirulla/env/_native_env.c: the
core's own C state machine, stepping, legality and encoding written into NumPy arrays), on the
pure-Python core (``CIRULLA_CORE=python``, or no compiler) through ``cirulla.rules.Game`` and
``cirulla.rules.encoding``, the reference. Both give identical trajectories for the same seeds.

Rewards: by default zero until the game ends, then +1 for every seat of the winning side and
-1 for every other seat (a 2- or 4-player game is zero-sum; with 3 players the two losers take
-1); ``reward="deal"`` or ``"points"`` rewards every deal instead (``cirulla.env.rewards``).

Seeds: episode ``e`` (0, 1, ...) of a game seeded ``seed`` deals its decks from one
splitmix64 stream seeded ``episode_seed(seed, e)`` (``SplitmixDecks``, the native core's own
shuffle): the same seed gives the same games on either core.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from cirulla.env.rewards import REWARD_CODE, check_reward, deal_rewards, deal_score_of
from cirulla.rules.core import CORE, options_tuple
from cirulla.rules.decks import DeckSource
from cirulla.rules.encoding import (
    MAX_SEATS,
    NUM_ACTIONS,
    OBS_SIZE,
    LegalActions,
    legal_actions,
    observe,
)
from cirulla.rules.game import Game
from cirulla.rules.options import Options
from cirulla.rules.scoring import DealScore
from cirulla.rules.views import View

if TYPE_CHECKING:
    from cirulla.env._native import Zones

try:
    import cirulla.env._native as _native  # the sibling itself, not the package
except ImportError:  # built without a compiler: the Python reference runs
    _native = None  # type: ignore[assignment]  # mypy has no "this module or None"

_MASK64 = (1 << 64) - 1

#: Which core the environments step: "native" or "python" (follows ``CIRULLA_CORE``).
ENV_CORE = "native" if CORE == "native" and _native is not None else "python"


def episode_seed(seed: int, episode: int) -> int:
    """The deck stream's seed of episode ``episode`` of an environment seeded ``seed``."""
    return (seed * 1_000_003 + episode) & _MASK64


class Splitmix:
    """splitmix64, as the native core's ``Rng`` (``rng_next``, ``rng_below``)."""

    __slots__ = ("state",)

    def __init__(self, seed: int) -> None:
        self.state = seed & _MASK64

    def next(self) -> int:
        self.state = z = (self.state + 0x9E3779B97F4A7C15) & _MASK64
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
        return z ^ (z >> 31)

    def below(self, n: int) -> int:
        return ((self.next() >> 32) * n) >> 32


class SplitmixDecks(DeckSource):
    """Deck orders for environments: successive Fisher-Yates shuffles of one stream."""

    def __init__(self, seed: int) -> None:
        super().__init__(seed)
        self.rng = Splitmix(seed)

    def next_deck(self, deal_no: int) -> list[int]:
        deck = list(range(40))
        for i in range(39, 0, -1):
            j = self.rng.below(i + 1)
            deck[i], deck[j] = deck[j], deck[i]
        return deck


CORES = ("native", "python")


def check_core(core: str | None) -> str:
    """The core an environment steps: ``core`` if given and available, else ``ENV_CORE``."""
    chosen = core or ENV_CORE
    if chosen not in CORES:
        raise ValueError(f"core {chosen!r}: expected 'native' or 'python'")
    if chosen == "native" and _native is None:
        raise ValueError("core 'native': the native environment is not built (no C compiler)")
    return chosen


def check_seed(seed: object, field: str = "seed") -> int:
    """A caller's seed: an integer (Python or NumPy), else ``ValueError`` naming ``field``."""
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
        raise ValueError(f"{field}: expected an integer, not {seed!r}")
    return int(seed)


def action_index(action: object) -> int:
    """A caller's action as a fixed index: an integer (Python, NumPy or a 0-d integer
    array), else ``ValueError`` naming the field; legality is the environment's check."""
    if type(action) is int:  # the per-step APIs' hot path: one check
        return action
    if isinstance(action, np.ndarray) and action.shape == () and action.dtype.kind in "iu":
        return int(action)
    if isinstance(action, bool) or not isinstance(action, int | np.integer):
        raise ValueError(f"action: expected an integer index 0..{NUM_ACTIONS - 1}, not {action!r}")
    return int(action)


def _not_legal(index: int) -> ValueError:
    return ValueError(f"action index {index} is not legal in this position")


def make_options(players: int = 2, preset: str = "standard", **rules: object) -> Options:
    """Options of a preset with a player count and rule overrides (``OptionError`` if bad)."""
    return Options.preset(preset, players=players, **rules)


def view_of_zones(options: Options, zones: Zones, seat: int | None) -> View:
    """The ``View`` of ``seat`` (None: a spectator) of a native game's ``zones()`` tuple."""
    (deal, dealer, round_, to_move, hands, table, wild, declared, captured, scope, stock,
     totals, last_taker, winner, _stock) = zones  # fmt: skip
    return View(
        seat=seat,
        options=options,
        deal=deal,
        dealer=dealer,
        round=round_,
        to_move=None if to_move < 0 else to_move,
        hand=hands[seat] if seat is not None else 0,
        table=table,
        wild_value=wild,
        hand_sizes=tuple(h.bit_count() for h in hands),
        declared=tuple(declared),
        captured=tuple(captured),
        scope=tuple(scope),
        stock=stock,
        totals=tuple(totals),
        last_taker=None if last_taker < 0 else last_taker,
        winner=None if winner < 0 else winner,
    )


class Env:
    """One game for per-step APIs: ``step(index)``, ``observe(seat)``, ``mask()``.

    ``core`` is "native" (the C path, no per-step Python objects) or "python" (the rules
    core's ``Game``, kept as ``game``, reference); default ``ENV_CORE``. ``reward`` is a mode
    of ``cirulla.env.rewards`` (what ``step_rewards()`` gives). After each step,
    ``deal_ended`` tells whether it ended a deal, whose score ``deal_score()`` gives.
    """

    def __init__(
        self,
        options: Options | None = None,
        seed: int = 0,
        core: str | None = None,
        reward: str = "game",
    ):
        self.options = options or Options()
        self.core = check_core(core)
        self.reward = check_reward(reward)
        self.seed = seed = check_seed(seed)
        self.episode = 0
        self.deal_ended = False
        #: The number of the deal the last step ended (when ``deal_ended``).
        self.ended_deal = 0
        self._deal = 1  # the native core's deal being played
        self._score: DealScore | None = None  # the native core's last deal score, read once
        self.game: Game | None = None
        self._games = (
            _native.Games(options_tuple(self.options), [seed]) if self.core == "native" else None
        )
        self._legal: LegalActions | None = None
        self._to_move: int | None = None  # the native core's, cached between steps
        if self._games is None:
            self._new_game()
        else:
            self._to_move = self._games.status(0)[0]

    def _new_game(self) -> None:
        self.game = Game(
            self.options, deck_source=SplitmixDecks(episode_seed(self.seed, self.episode))
        )
        self._legal = None

    def reset(self, seed: int | None = None) -> None:
        """Start the next episode (or episode 0 of ``seed``)."""
        if seed is not None:
            self.seed = seed = check_seed(seed)
            self.episode = 0
        else:
            self.episode += 1
        self.deal_ended = False
        self._deal, self._score = 1, None
        if self._games is not None:
            self._games.reset_game(0, seed)
            self._to_move = self._games.status(0)[0]
        else:
            self._new_game()

    @property
    def to_move(self) -> int | None:
        if self._games is not None:
            seat = self._to_move
            return None if seat is None or seat < 0 else seat
        assert self.game is not None
        return self.game.to_move

    @property
    def winner(self) -> int | None:
        """The winning side once the game is over."""
        if self._games is not None:
            side: int = self._games.status(0)[1]
            return None if side < 0 else side
        assert self.game is not None
        return self.game.winner

    def view(self, seat: int | None) -> View:
        """The rules core's ``View`` of ``seat`` (None: a spectator), on either core."""
        if self._games is not None:
            return view_of_zones(self.options, self._games.zones(0), seat)
        assert self.game is not None
        return self.game.view(seat)

    @property
    def deal_no(self) -> int:
        """The number of the deal being played (of the last one once the game is over)."""
        if self._games is not None:
            deal: int = self._games.zones(0)[0]
            return deal
        assert self.game is not None
        return self.game.deal_no

    def deal_score(self) -> DealScore | None:
        """The score of the last deal that ended (None before the first ends)."""
        if self._games is not None:
            if self._score is None:
                native = self._games.score(0)
                self._score = None if native is None else deal_score_of(native)
            return self._score
        assert self.game is not None
        return self.game.last_score

    def step_rewards(self) -> list[float]:
        """Per seat, the reward of the last step in this environment's ``reward`` mode."""
        if self.reward == "game":
            return self.rewards()
        if not self.deal_ended:
            return [0.0] * self.options.players
        score = self.deal_score()
        assert score is not None
        return deal_rewards(self.options, score, self.reward)

    @property
    def legal(self) -> LegalActions:
        """The legal actions of the seat to move, codes and fixed indices."""
        if self._games is not None:
            codes, indices = self._games.legal(0)
            return LegalActions(codes, indices)
        if self._legal is None:
            assert self.game is not None
            self._legal = legal_actions(self.game)
        return self._legal

    def observe(
        self, seat: int, out: npt.NDArray[np.float32] | None = None
    ) -> npt.NDArray[np.float32]:
        """The observation of ``seat`` (any seat, not only the one to move)."""
        if not 0 <= seat < self.options.players:
            raise ValueError(f"seat {seat}: expected 0..{self.options.players - 1}")
        if self._games is not None:
            if out is None:
                out = np.empty(OBS_SIZE, dtype=np.float32)
            self._games.observe(0, seat, out)
            return out
        assert self.game is not None
        return observe(self.game, seat, out)

    def mask(self, out: npt.NDArray[np.uint8] | None = None) -> npt.NDArray[np.uint8]:
        """The legal-action mask of the seat to move (all zero once the game is over)."""
        if self._games is not None:
            if out is None:
                out = np.empty(NUM_ACTIONS, dtype=np.uint8)
            self._games.mask(0, out)
            return out
        return self.legal.mask(out)

    def step(self, index: int) -> None:
        """Play the legal action of fixed index ``index`` (``ValueError`` if not legal)."""
        if self._games is not None:
            try:
                seat = self._games.play(0, index)
            except (ValueError, OverflowError, TypeError):
                raise _not_legal(index) from None
            if seat >= 8:
                self._after_native(seat)
            else:
                self.deal_ended = False
                self._to_move = seat
            return
        self.step_code(self.legal.code_of(index))

    def _after_native(self, seat: int) -> None:
        """The native ``play``'s answer: the seat to move (-1: over), plus 16 if the play
        ended a deal."""
        self._score = None
        if seat >= 8:
            self.deal_ended = True
            self.ended_deal = self._deal
            self._deal += 1
            seat -= 16
        else:
            self.deal_ended = False
        self._to_move = seat

    def step_code(self, code: int) -> None:
        """Play any legal action code, one past the index bound too (``ValueError`` on the
        native core, ``IllegalActionError`` naming the broken rule on the Python core)."""
        if self._games is not None:
            try:
                seat = self._games.play_code(0, code)
            except (ValueError, OverflowError, TypeError):
                raise ValueError(f"action code {code} is not legal in this position") from None
            self._after_native(seat)
            return
        game = self.game
        assert game is not None
        deal, over = game.deal_no, game.winner is not None
        game.apply(code)
        self._legal = None
        self.deal_ended = game.deal_no != deal or (game.winner is not None and not over)
        if self.deal_ended:
            self.ended_deal = deal

    def rewards(self) -> list[float]:
        """Per seat: 0 while the game runs, then +1 for the winning side, -1 for the others."""
        winner = self.winner
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
    ``random_actions()`` draws a uniformly random legal index per game (from ``policy_seed``;
    the same draws on either core). ``reward`` is a mode of ``cirulla.env.rewards``: with
    "deal" or "points", ``rewards[i]`` is nonzero on the step that ended a deal of game ``i``.
    """

    def __init__(
        self,
        num_envs: int,
        options: Options | None = None,
        seeds: Sequence[int] | None = None,
        *,
        policy_seed: int = 0,
        core: str | None = None,
        reward: str = "game",
    ) -> None:
        self.reward = check_reward(reward)
        if num_envs < 1:
            raise ValueError(f"num_envs must be at least 1, not {num_envs}")
        self.num_envs = num_envs
        self.options = options or Options()
        self.core = check_core(core)
        seeds = list(range(num_envs)) if seeds is None else list(seeds)
        if len(seeds) != num_envs:
            raise ValueError(f"seeds: {len(seeds)} given for {num_envs} games")
        seeds = [check_seed(s, f"seeds[{i}]") for i, s in enumerate(seeds)]
        self.obs = np.zeros((num_envs, OBS_SIZE), dtype=np.float32)
        self.masks = np.zeros((num_envs, NUM_ACTIONS), dtype=np.uint8)
        self.rewards = np.zeros((num_envs, MAX_SEATS), dtype=np.float32)
        self.terminated = np.zeros(num_envs, dtype=bool)
        self.to_move = np.zeros(num_envs, dtype=np.int64)
        self._actions = np.zeros(num_envs, dtype=np.int64)
        self._policy = Splitmix(check_seed(policy_seed, "policy_seed"))
        self._games: _native.Games | None = None
        if self.core == "native":
            self._games = _native.Games(options_tuple(self.options), seeds, policy_seed)
            self._games.set_reward(REWARD_CODE[self.reward])
            self.envs: list[Env] = []
        else:
            self.envs = [
                Env(self.options, seed, core="python", reward=self.reward) for seed in seeds
            ]
        self._fill_all()

    def reset(
        self, seeds: Sequence[int] | None = None
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.uint8], npt.NDArray[np.int64]]:
        """Next episode of every game (episode 0 of ``seeds[i]`` if given)."""
        if seeds is not None:
            seeds = [check_seed(s, f"seeds[{i}]") for i, s in enumerate(seeds)]
            if len(seeds) != self.num_envs:
                raise ValueError(f"seeds: {len(seeds)} given for {self.num_envs} games")
        for i in range(self.num_envs):
            seed = None if seeds is None else seeds[i]
            if self._games is not None:
                self._games.reset_game(i, seed)
            else:
                self.envs[i].reset(seed)
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
        if self._games is not None:
            self._games.fill(self.obs, self.masks, self.to_move)
            return
        for i in range(self.num_envs):
            self._fill(i)

    def random_actions(self) -> npt.NDArray[np.int64]:
        """A uniformly random legal index per game (the bench's random policy)."""
        if self._games is not None:
            self._games.random_actions(self._actions)
            return self._actions
        for i, env in enumerate(self.envs):
            indices = [k for k in env.legal.indices if k >= 0]
            self._actions[i] = indices[self._policy.below(len(indices))]
        return self._actions

    def step(
        self, actions: npt.ArrayLike
    ) -> tuple[
        npt.NDArray[np.float32],
        npt.NDArray[np.uint8],
        npt.NDArray[np.float32],
        npt.NDArray[np.bool_],
        npt.NDArray[np.int64],
    ]:
        """One action (a fixed index) per game; see the class docstring for the results.

        An illegal index raises ``ValueError`` naming the game; the games before it in the
        batch have stepped by then (their results are not returned): reset after an error.
        """
        given = np.asarray(actions)
        if given.dtype.kind not in "iu":
            raise ValueError(f"actions: expected integer indices, not {given.dtype} values")
        chosen = np.ascontiguousarray(given, dtype=np.int64).reshape(-1)
        if chosen.shape[0] != self.num_envs:
            raise ValueError(f"actions: {chosen.shape[0]} given for {self.num_envs} games")
        if self._games is not None:
            self._games.step(
                chosen, self.obs, self.masks, self.rewards, self.terminated, self.to_move
            )
            return self.obs, self.masks, self.rewards, self.terminated, self.to_move
        self.rewards[:] = 0.0
        self.terminated[:] = False
        n = self.options.players
        for i, env in enumerate(self.envs):
            try:
                env.step(int(chosen[i]))
            except ValueError:
                raise ValueError(f"action index {chosen[i]} is not legal in game {i}") from None
            if env.deal_ended or env.to_move is None:
                self.rewards[i, :n] = env.step_rewards()
            if env.to_move is None:
                self.terminated[i] = True
                env.reset()
            self._fill(i)
        return self.obs, self.masks, self.rewards, self.terminated, self.to_move
