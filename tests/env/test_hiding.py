"""Nothing hidden reaches an observation: on every step of random games, the observation of
each seat equals the observation of that seat in worlds resampled from its view (other hands
and the stock redealt: sample_world), on both cores, for 2, 3 and 4 players."""

from __future__ import annotations

import random

import numpy as np
import pytest

import cirulla.rules.encoding as enc
from cirulla.env.vector import ENV_CORE, Env
from cirulla.rules.options import Options
from cirulla.rules.views import sample_world, view_of

CORES = [
    "python",
    pytest.param(
        "native",
        marks=pytest.mark.skipif(
            ENV_CORE != "native",
            reason="native core not running (not built, or CIRULLA_CORE=python)",
        ),
    ),
]


@pytest.mark.parametrize("core", CORES)
@pytest.mark.parametrize(
    ("players", "preset"), [(2, "standard"), (3, "genova-home"), (4, "standard"), (2, "fantacarte")]
)
def test_observation_is_a_function_of_the_seats_information(
    core: str, players: int, preset: str
) -> None:
    options = Options.preset(preset, players=players, target=21)
    shadow = Env(options, seed=11, core="python")  # the same game, kept as a rules Game
    env = Env(options, seed=11, core=core)
    rng = random.Random(players)
    steps = differed = 0
    for _ in range(2):  # two games each
        while env.to_move is not None:
            game = shadow.game
            assert game is not None
            for seat in range(players):
                obs = env.observe(seat)
                view = view_of(game, seat)
                for _ in range(2):
                    world = sample_world(view, rng)
                    assert np.array_equal(obs, enc.observe(world, seat))
                    other = (seat + 1) % players
                    differed += world.hands[other] != game.hands[other]
                    # the other seat's observation does see its own (resampled) hand
                    if world.hands[other] != game.hands[other]:
                        assert not np.array_equal(enc.observe(world, other), env.observe(other))
            index = rng.choice(np.flatnonzero(env.mask()).tolist())
            env.step(index)
            shadow.step(index)
            steps += 1
        env.reset()
        shadow.reset()
    assert steps > 50
    assert differed > steps  # the resampled worlds really moved hidden cards


def test_permuting_hidden_cards_leaves_the_observation() -> None:
    """Swapping a card between two other hands, or a hand and the stock, changes nothing
    seat 0 observes."""
    env = Env(Options(players=3), seed=2, core="python")
    game = env.game
    assert game is not None
    before = enc.observe(game, 0)
    a, b = game.hands[1], game.hands[2]
    ca, cb = a & -a, b & -b
    game.hands[1], game.hands[2] = a ^ ca | cb, b ^ cb | ca
    assert np.array_equal(before, enc.observe(game, 0))
    card = game.hands[1] & -game.hands[1]
    stock_card = game.stock[0]
    game.hands[1] = game.hands[1] ^ card | 1 << stock_card
    game.stock[0] = card.bit_length() - 1
    assert np.array_equal(before, enc.observe(game, 0))
    assert not np.array_equal(enc.observe(game, 1), before)
