"""The environments against the rules core: both cores give identical trajectories, and an
episode is the rules core's game with the same decks, event for event and score for score."""

from __future__ import annotations

import numpy as np
import pytest

import cirulla.rules.encoding as enc
from cirulla.env.vector import ENV_CORE, Env, SplitmixDecks, VectorEnv, episode_seed
from cirulla.rules.game import Game
from cirulla.rules.options import Options

native_only = pytest.mark.skipif(
    ENV_CORE != "native", reason="native core not running (not built, or CIRULLA_CORE=python)"
)

CONFIGS = [
    (2, "standard", {"target": 21}),
    (3, "genova-home", {"target": 21}),
    (4, "standard", {"target": 21}),
    (2, "fantacarte", {"target": 21, "cappotto": False}),
    (4, "genova-home", {"pairing_precedence": True, "target": 11}),
]


@native_only
@pytest.mark.parametrize(("players", "preset", "rules"), CONFIGS)
def test_native_and_python_trajectories_are_identical(
    players: int, preset: str, rules: dict
) -> None:
    options = Options.preset(preset, players=players, **rules)
    seeds = [3, 14, 15, 92]
    a = VectorEnv(4, options, seeds, policy_seed=7, core="native")
    b = VectorEnv(4, options, seeds, policy_seed=7, core="python")
    assert np.array_equal(a.obs, b.obs) and np.array_equal(a.masks, b.masks)
    ended = 0
    for step in range(400):
        x, y = a.random_actions().copy(), b.random_actions().copy()
        assert np.array_equal(x, y), step
        for got, want in zip(a.step(x), b.step(y), strict=True):
            assert np.array_equal(got, want), step
        ended += int(a.terminated.sum())
        if ended:
            assert set(np.unique(a.rewards[a.terminated])) <= {-1.0, 0.0, 1.0}
    assert ended > 0  # auto-reset ran on both cores


@pytest.mark.parametrize("core", ["python", pytest.param("native", marks=native_only)])
@pytest.mark.parametrize(("players", "preset", "rules"), CONFIGS[:3])
def test_episode_is_the_rules_core_game(core: str, players: int, preset: str, rules: dict) -> None:
    """Replaying an env episode's actions on a Game dealt from the same decks: the same
    observation and mask at every step for every seat, the same events, the same scores."""
    options = Options.preset(preset, players=players, **rules)
    env = Env(options, seed=5, core=core)
    reference = Env(options, seed=5, core="python")  # keeps its Game, for the decks and events
    events: list = []
    game = Game(options, deck_source=SplitmixDecks(episode_seed(5, 0)), events=events)
    rng = np.random.default_rng(1)
    steps = 0
    while env.to_move is not None:
        assert env.to_move == game.to_move
        for seat in range(players):
            assert np.array_equal(env.observe(seat), enc.observe(game, seat))
        mask = env.mask()
        legal = enc.legal_actions(game)
        assert np.array_equal(mask, legal.mask())
        index = int(rng.choice(np.flatnonzero(mask)))
        env.step(index)
        reference.step(index)
        events.extend(game.apply(legal.code_of(index)))
        steps += 1
    assert game.winner is not None and env.winner == game.winner
    side_of = options.side_of
    assert env.rewards() == [1.0 if side_of(s) == game.winner else -1.0 for s in range(players)]
    # the reference env's game is the rules core's game: its decks replay to the same events
    assert reference.game is not None
    replay_events: list = []
    replay = Game(options, decks=reference.game.decks_used, events=replay_events)
    for seat, code in reference.game.history:
        replay_events.extend(replay.apply(code, seat))
    assert replay_events == events
    assert replay.totals == game.totals == reference.game.totals
    assert replay.history == game.history
    assert steps > 20


def test_seeds_give_the_same_games_and_episodes_differ() -> None:
    a = VectorEnv(3, seeds=[1, 2, 3], core="python")
    b = VectorEnv(3, seeds=[1, 2, 3], core="python")
    assert np.array_equal(a.obs, b.obs)
    c = VectorEnv(3, seeds=[4, 5, 6], core="python")
    assert not np.array_equal(a.obs, c.obs)
    env = Env(seed=1, core="python")
    first = env.observe(0).copy()
    env.reset()
    assert not np.array_equal(first, env.observe(0))  # the next episode deals anew
    env.reset(seed=1)
    assert np.array_equal(first, env.observe(0))


@pytest.mark.parametrize("core", ["python", pytest.param("native", marks=native_only)])
def test_bad_actions_are_refused_in_one_line(core: str) -> None:
    env = VectorEnv(2, core=core)
    illegal = int(np.flatnonzero(env.masks[0] == 0)[0])
    with pytest.raises(ValueError, match="not legal"):
        env.step([illegal, int(env.random_actions()[1])])
    with pytest.raises(ValueError, match="actions: 3 given for 2 games"):
        env.step([0, 0, 0])
    single = Env(core=core)
    with pytest.raises(ValueError, match=f"action index {illegal} is not legal"):
        single.step(illegal)


@pytest.mark.parametrize("core", ["python", pytest.param("native", marks=native_only)])
def test_codes_past_the_index_bound_stay_playable(core: str) -> None:
    """With must_capture off the table grows: when a card has more than CAPTURE_RANKS
    captures, the extra ones have no index but step_code plays them on either core."""
    options = Options.preset("genova-home")
    env, shadow = Env(options, seed=0, core=core), Env(options, seed=0, core="python")
    rng = np.random.default_rng(0)
    played_overflow = False
    for _ in range(20000):
        if env.to_move is None:
            env.reset()
            shadow.reset()
            continue
        legal = env.legal
        assert legal == shadow.legal
        lost = [c for c, i in zip(legal.codes, legal.indices, strict=True) if i < 0]
        # a random policy that never captures grows the table until overflow appears
        quiet = [c for c in legal.codes if not c >> 12]
        code = lost[0] if lost else int(rng.choice(quiet or list(legal.codes)))
        played_overflow |= bool(lost)
        env.step_code(code)
        shadow.step_code(code)
        if played_overflow:
            break
    assert played_overflow
    assert np.array_equal(env.observe(0), shadow.observe(0))
    seat = env.to_move
    assert seat is not None  # an overflow needs a full table: the deal goes on
    held = env.observe(seat)[: enc.NUM_CARDS]
    stranger = int(np.flatnonzero(held == 0)[0])  # a card the mover does not hold
    with pytest.raises(ValueError, match=r"not legal|not in seat"):
        env.step_code(stranger)


def test_bench_env_prints_the_three_figures(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from cirulla.cli import main

    assert main(["bench", "env", "--seconds", "0.05", "--num-envs", "8", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    for key in ("batched_steps_per_s", "api_steps_per_s", "baseline_steps_per_s"):
        assert result[key] > 0
    assert result["batched_steps_per_s"] > result["baseline_steps_per_s"]
    spiel = result["openspiel"]
    for mode in ("cards", "sampled"):
        assert spiel["player_steps_per_s"][mode] > spiel["baseline_player_steps_per_s"] > 0
    assert result["machine"]["cpus"] >= 1 and result["machine"]["load_average_end"] >= 0
    assert main(["bench", "env", "--num-envs", "0"]) == 2
