"""``cirulla bench env``: agent steps per second, batched, per step, and through ``Game``.

Three loops of the same random policy, one core each, observations and masks included:

* batched: ``VectorEnv`` steps ``num_envs`` games per call (the native core writing into
  NumPy arrays when it is built), the random legal index drawn per game by the environment;
* api: one game per step through the per-step API: the PettingZoo environment
  (``cirulla.env.aec_env``) when it imports, else ``Env`` (observe, mask, step);
* baseline: today's ``Game`` API, ``legal_actions()``/``apply()``, with the observation of
  the seat to move built in Python (``encoding.observe``), as a user would without this package;
* openspiel: OpenSpiel's random simulation loop (its Python example's: ``is_terminal``,
  ``is_chance_node``/``chance_outcomes``, ``current_player``, ``observation_tensor``,
  ``information_state_tensor``, ``legal_actions``, ``apply_action``) on ``python_cirulla``,
  counting the players' steps (chance steps are timed but not counted), in both chance
  modes; and its baseline in the same run: the same loop on the previous implementation's
  way of doing it (a rules-core ``Game`` copied to try each play, the observation encoded
  in Python, a deck dealt by 40 chance nodes), ``baseline_python_cirulla``.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

import pyspiel  # type: ignore[import-not-found,unused-ignore]

import cirulla.env.openspiel_baseline as openspiel_baseline
from cirulla.env.aec import CirullaAEC, aec_env
from cirulla.env.openspiel import GAME_NAME
from cirulla.env.spiel_params import GameParams
from cirulla.env.vector import ENV_CORE, SplitmixDecks, VectorEnv
from cirulla.rules.bench import machine_at_end, machine_at_start
from cirulla.rules.encoding import observe
from cirulla.rules.game import Game
from cirulla.rules.options import Options, OptionValue

BATCHED_TARGET = 1_000_000
API_TARGET = 100_000
OPENSPIEL_TARGET = 100_000


def _clock() -> float:
    return time.process_time()


def bench_batched(options: Options, seconds: float, num_envs: int, seed: int) -> float:
    env = VectorEnv(num_envs, options, seeds=range(seed, seed + num_envs), policy_seed=seed)
    steps = 0
    start = _clock()
    while True:
        for _ in range(16):
            env.step(env.random_actions())
        steps += 16 * num_envs
        spent = _clock() - start
        if spent >= seconds:
            return steps / spent


def bench_aec_api(
    aec_env: Callable[..., CirullaAEC], options: Options, seconds: float, seed: int
) -> float:
    """PettingZoo's AEC loop (``agent_iter``/``last``/``step``) with a random masked policy."""
    env = aec_env(players=options.players, **_rule_kwargs(options))
    rng = random.Random(seed)
    steps = 0
    episode = 0
    start = _clock()
    while True:
        env.reset(seed=seed + episode)
        episode += 1
        for agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            legal = obs["action_mask"].view(bool).nonzero()[0]
            env.step(int(legal[rng.randrange(len(legal))]))
            steps += 1
            del agent
        spent = _clock() - start
        if spent >= seconds:
            return steps / spent


def _rule_kwargs(options: Options) -> dict[str, OptionValue]:
    data = options.to_dict()
    data.pop("players")
    return data


def bench_baseline(options: Options, seconds: float, seed: int) -> float:
    rng = random.Random(seed)
    game = Game(options, deck_source=SplitmixDecks(seed))
    steps = 0
    start = _clock()
    while True:
        for _ in range(256):
            seat = game.to_move
            if seat is None:
                game = Game(options, deck_source=SplitmixDecks(rng.getrandbits(63)))
                continue
            observe(game, seat)
            actions = game.legal_actions()
            game.apply(actions[rng.randrange(len(actions))])
            steps += 1
        spent = _clock() - start
        if spent >= seconds:
            return steps / spent


def _game_params(options: Options) -> GameParams:
    params: GameParams = {"players": options.players}
    for key, value in _rule_kwargs(options).items():
        params[key] = int(value)
    return params


def bench_openspiel(game: pyspiel.Game, seconds: float, seed: int) -> tuple[float, float]:
    """OpenSpiel's random simulation loop, tensors included: (player steps, all steps) per
    CPU second."""
    rng = random.Random(seed)
    players = chance = 0
    start = _clock()
    while True:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                action = outcomes[rng.randrange(len(outcomes))][0]
                chance += 1
            else:
                player = state.current_player()
                state.observation_tensor(player)
                state.information_state_tensor(player)
                legal = state.legal_actions()
                action = legal[rng.randrange(len(legal))]
                players += 1
            state.apply_action(action)
            if players & 255 == 0 and _clock() - start >= seconds:
                spent = _clock() - start
                return players / spent, (players + chance) / spent


def openspiel_figures(options: Options, seconds: float, seed: int) -> dict[str, object]:
    """``python_cirulla`` in both chance modes and its baseline."""
    params = _game_params(options)
    cards, cards_all = bench_openspiel(pyspiel.load_game(GAME_NAME, params), seconds, seed)
    sampled, _ = bench_openspiel(
        pyspiel.load_game(GAME_NAME, {**params, "chance": "sampled"}), seconds, seed
    )
    base, base_all = bench_openspiel(
        pyspiel.load_game(openspiel_baseline.GAME_NAME, params), seconds, seed
    )
    return {
        "loop": "OpenSpiel's random simulation: is_terminal, is_chance_node/chance_outcomes, "
        "current_player, observation_tensor, information_state_tensor, legal_actions, "
        "apply_action",
        "player_steps_per_s": {"cards": round(cards), "sampled": round(sampled)},
        "all_steps_per_s": {"cards": round(cards_all), "sampled": round(sampled)},
        "baseline_player_steps_per_s": round(base),
        "baseline_all_steps_per_s": round(base_all),
        "cards_vs_baseline": round(cards / base, 1),
        "sampled_vs_baseline": round(sampled / base, 1),
        "target_player_steps_per_s": OPENSPIEL_TARGET,
        "target_met": {"cards": cards >= OPENSPIEL_TARGET, "sampled": sampled >= OPENSPIEL_TARGET},
    }


def bench_env(
    options: Options,
    seconds: float = 3.0,
    num_envs: int = 256,
    seed: int = 1,
    openspiel: bool = True,
) -> dict[str, object]:
    """Each loop for ``seconds`` of CPU time (one core's work), reported per CPU second."""
    machine = machine_at_start()
    batched = bench_batched(options, seconds, num_envs, seed)
    api_source = "pettingzoo"  # the env extra brings PettingZoo with OpenSpiel
    api = bench_aec_api(aec_env, options, seconds, seed)
    baseline = bench_baseline(options, seconds, seed)
    spiel = openspiel_figures(options, seconds, seed) if openspiel else None
    return {
        "benchmark": "env",
        "core": ENV_CORE,
        "players": options.players,
        "options": options.to_dict(),
        "seconds_each": seconds,
        "num_envs": num_envs,
        "policy": "uniform random legal action",
        "batched_steps_per_s": round(batched),
        "api_steps_per_s": round(api),
        "api_source": api_source,
        "baseline_steps_per_s": round(baseline),
        "batched_vs_baseline": round(batched / baseline, 1),
        "api_vs_baseline": round(api / baseline, 1),
        "targets": {"batched_steps_per_s": BATCHED_TARGET, "api_steps_per_s": API_TARGET},
        "targets_met": batched >= BATCHED_TARGET and api >= API_TARGET,
        "openspiel": spiel,
        "machine": machine_at_end(machine),
    }
