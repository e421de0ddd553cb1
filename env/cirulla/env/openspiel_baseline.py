"""The previous ``python_cirulla``, kept as the benchmark's baseline and the tests' reference:
OpenSpiel game ``python_cirulla_baseline``, registered on import.

It plays the same game on the pure-Python rules core, action for action: the same player
actions (the encoding's fixed indices), the same 40 chance nodes per deck, the same
observations and returns (tests/env/test_openspiel.py holds the native game to it). It is
slow the ways ``cirulla bench env`` measures: it copies the rules core's ``Game`` to try
each play that may need a fresh deck, encodes observations in Python and deals each deck as
40 Python-level chance nodes. Use ``python_cirulla`` (``cirulla.env.openspiel``).
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable

import numpy as np
import numpy.typing as npt
import pyspiel  # type: ignore[import-not-found,unused-ignore]

from cirulla.env.spiel_params import RULES, GameParams, options_of
from cirulla.rules.actions import action_text
from cirulla.rules.decks import DeckSource
from cirulla.rules.encoding import (
    NUM_ACTIONS,
    OBS_SIZE,
    LegalActions,
    encode_view,
    index_actions,
)
from cirulla.rules.game import Game
from cirulla.rules.options import Options
from cirulla.rules.views import sample_world

GAME_NAME = "python_cirulla_baseline"
_PARAMS: GameParams = {"players": 2, "preset": "standard", **dict.fromkeys(RULES, -1)}
#: Far above any real game (a game to the highest target plays ~100 deals of ~40 moves).
MAX_GAME_LENGTH = 100_000


def _game_type(zero_sum: bool) -> pyspiel.GameType:
    return pyspiel.GameType(
        short_name=GAME_NAME,
        long_name="Python Cirulla (baseline)",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=(
            pyspiel.GameType.Utility.ZERO_SUM if zero_sum else pyspiel.GameType.Utility.GENERAL_SUM
        ),
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=4,
        min_num_players=2,
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=_PARAMS,
    )


class _NeedDeck(Exception):
    """Raised by ``_ChanceDecks`` when the game asks for a deck chance has not dealt yet."""


class _ChanceDecks(DeckSource):
    """Decks drawn at chance nodes, handed out in order."""

    def __init__(self) -> None:
        super().__init__(0)
        self.ready: list[list[int]] = []

    def next_deck(self, deal_no: int) -> list[int]:
        if not self.ready:
            raise _NeedDeck
        return self.ready.pop(0)


class CirullaGame(pyspiel.Game):  # type: ignore[misc,unused-ignore]
    """The baseline game (see the module docstring)."""

    def __init__(self, params: GameParams | None = None) -> None:
        merged = {**_PARAMS, **(params or {})}
        self.options = options_of(merged)
        n = self.options.players
        info = pyspiel.GameInfo(
            num_distinct_actions=NUM_ACTIONS,
            max_chance_outcomes=40,
            num_players=n,
            min_utility=-1.0,
            max_utility=1.0,
            utility_sum=0.0 if n != 3 else None,
            max_game_length=MAX_GAME_LENGTH,
        )
        super().__init__(_game_type(n != 3), info, merged)

    def new_initial_state(self) -> CirullaState:
        return CirullaState(self)

    def make_py_observer(
        self,
        iig_obs_type: pyspiel.IIGObservationType | None = None,
        params: GameParams | None = None,
    ) -> CirullaObserver:
        perfect = iig_obs_type is not None and getattr(iig_obs_type, "perfect_recall", False)
        return CirullaObserver(perfect)


class CirullaState(pyspiel.State):  # type: ignore[misc,unused-ignore]
    """One position: a rules core ``Game`` and the chance draws of the next deck."""

    def __init__(self, game: CirullaGame) -> None:
        super().__init__(game)
        self.options: Options = game.options
        self.decks = _ChanceDecks()
        self.game: Game | None = None
        self.pending: int | None = None  # a play waiting for the deck it needs
        self.drawn: list[int] = []  # cards of the deck being dealt by chance
        self.public: list[str] = []  # every play so far, as its text (all plays are shown)

    # -- whose turn -------------------------------------------------------------------
    def _dealing(self) -> bool:
        return self.game is None or self.pending is not None

    def current_player(self) -> int:
        if self._dealing():
            return int(pyspiel.PlayerId.CHANCE)
        assert self.game is not None
        seat = self.game.to_move
        return int(pyspiel.PlayerId.TERMINAL) if seat is None else seat

    def is_terminal(self) -> bool:
        return not self._dealing() and self.game is not None and self.game.to_move is None

    # -- actions --------------------------------------------------------------------
    def _legal(self) -> LegalActions:
        assert self.game is not None
        return index_actions(self.game.legal_codes(), self.game.hands[self.game.turn])

    def _legal_actions(self, player: int) -> list[int]:
        if self.is_terminal() or self._dealing() or player != self.current_player():
            return []
        return sorted(i for i in self._legal().indices if i >= 0)

    def chance_outcomes(self) -> list[tuple[int, float]]:
        left = [c for c in range(40) if c not in self.drawn]
        return [(c, 1.0 / len(left)) for c in left]

    def _apply_action(self, action: int) -> None:
        if self._dealing():
            self.drawn.append(action)
            if len(self.drawn) == 40:
                self.decks.ready.append(self.drawn)
                self.drawn = []
                self._advance()
            return
        code = self._legal().code_of(action)
        assert self.game is not None
        self.public.append(f"{self.game.turn}:{action_text(code)}")
        self.pending = code
        self._advance()

    def _advance(self) -> None:
        """Build the game or apply the pending play once every deck it needs is dealt."""
        saved = list(self.decks.ready)
        try:  # a trial on a copy: the real state only moves once nothing is missing
            if self.game is None:
                Game(self.options, deck_source=self.decks)
            elif self.pending is not None:
                self.game.copy().apply(self.pending)
        except _NeedDeck:
            self.decks.ready = saved
            return
        self.decks.ready = saved
        if self.game is None:
            self.game = Game(self.options, deck_source=self.decks)
        elif self.pending is not None:
            self.game.apply(self.pending)
            self.pending = None

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"deal card {action}"
        return action_text(self._legal().code_of(action))

    def returns(self) -> list[float]:
        n = self.options.players
        if not self.is_terminal():
            return [0.0] * n
        assert self.game is not None and self.game.winner is not None
        side_of = self.options.side_of
        return [1.0 if side_of(s) == self.game.winner else -1.0 for s in range(n)]

    # -- what a seat knows ------------------------------------------------------------
    def information_state_string(self, player: int | None = None) -> str:
        seat = self.current_player() if player is None else player
        if self.game is None:
            return f"p{seat} dealing"
        return f"p{seat} {' '.join(self.public)} | {self.game.view(seat)}"

    def observation_string(self, player: int | None = None) -> str:
        seat = self.current_player() if player is None else player
        return "dealing" if self.game is None else str(self.game.view(seat))

    def tensor(self, player: int) -> npt.NDArray[np.float32]:
        if self.game is None:
            return np.zeros(OBS_SIZE, dtype=np.float32)
        return encode_view(self.game.view(player))

    def information_state_tensor(self, player: int | None = None) -> list[float]:
        values: list[float] = self.tensor(
            self.current_player() if player is None else player
        ).tolist()
        return values

    def observation_tensor(self, player: int | None = None) -> list[float]:
        return self.information_state_tensor(player)

    def resample_from_infostate(
        self, player_id: int, probability_sampler: Callable[[], float]
    ) -> CirullaState:
        """A state the seat cannot tell from this one: unseen cards dealt by ``sample_world``."""
        state = self.clone()
        if self.game is None or self._dealing() or self.is_terminal():
            return state  # nothing hidden is dealt yet, or the game is over
        rng = random.Random(int(probability_sampler() * (1 << 62)))
        world = sample_world(self.game.view(player_id), rng, deal_only=False)
        world.deck_source = state.decks
        state.game = world
        return state

    def clone(self) -> CirullaState:
        return copy.deepcopy(self)

    def __str__(self) -> str:
        if self.game is None:
            return f"dealing: {len(self.drawn)} cards drawn"
        return str(self.game.view(None))


class CirullaObserver:
    """Observer for the ``make_observation`` API: the encoding's vector of a seat."""

    def __init__(self, perfect_recall: bool) -> None:
        self.perfect_recall = perfect_recall
        self.tensor = np.zeros(OBS_SIZE, dtype=np.float32)
        self.dict = {"observation": self.tensor}

    def set_from(self, state: CirullaState, player: int) -> None:
        self.tensor[:] = state.tensor(player)

    def string_from(self, state: CirullaState, player: int) -> str:
        if self.perfect_recall:
            return state.information_state_string(player)
        return state.observation_string(player)


pyspiel.register_game(_game_type(True), CirullaGame)
