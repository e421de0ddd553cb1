"""The ``mcts`` option ``posterior=learned``: the opponent's hidden hand in every world is
drawn from sampled hands in proportion to how likely the learned network finds its plays
of this round holding each (``cirulla.bots.belief``, ``PlayTracker.weighted_hands``)."""

from __future__ import annotations

import json
import random
import statistics
from pathlib import Path

import pytest

from cirulla.bots.belief import play_log_likelihood, shipped_net
from cirulla.bots.inference import REPLAY_TRIES
from cirulla.bots.mcts_policy import MctsPolicy
from cirulla.bots.specs import make_policy
from cirulla.rules import parse_mask
from cirulla.rules.views import sample_world
from tests.bots.test_inference import against_greedy, dropped_on_a_table_it_could_take
from tests.bots.test_learned import CIRULLA, run

ACES = parse_mask("AD AH AS")  # the ace takes the whole table KS 2C
THREES = parse_mask("3D 3H 3S")  # 3 + 2 + K(10) = 15 takes it too, a scopa


def test_a_drop_next_to_a_sweep_makes_hands_that_sweep_unlikely() -> None:
    """Seat 1 dropped QH on KS 2C where an ace or a 3 would have swept: the network finds
    that drop much less likely holding one, so the resampled hands hold fewer of them
    than the uniformly drawn candidates they come from."""
    game, tracker, _ = dropped_on_a_table_it_could_take(positions=True)
    view = game.view(0)
    net = shipped_net()
    drawn = tracker.candidate_hands(view, random.Random(3), REPLAY_TRIES)
    assert drawn is not None
    seat, plays, uniform = drawn
    assert seat == 1 and len(uniform) == REPLAY_TRIES
    without = play_log_likelihood(net, plays, 1, parse_mask("5S 6D"))
    with_ace = play_log_likelihood(net, plays, 1, parse_mask("AD 5S"))
    with_three = play_log_likelihood(net, plays, 1, parse_mask("3D 5S"))  # a 15 and a scopa
    assert with_three < with_ace < without
    assert with_three < without - 2.0
    seat, hands = tracker.weighted_hands(
        view, random.Random(3), lambda p, s, h: play_log_likelihood(net, p, s, h)
    )
    assert seat == 1 and len(hands) == REPLAY_TRIES
    assert set(hands) <= set(uniform)  # resampled from the same draws
    for hidden in hands:
        assert hidden & view.unseen == hidden and hidden.bit_count() == 2

    def holding(cards: int, hs: tuple[int, ...] | list[int]) -> float:
        return sum(bool(h & cards) for h in hs) / len(hs)

    assert holding(THREES, hands) < 0.5 * holding(THREES, uniform)
    assert holding(ACES | THREES, hands) < holding(ACES | THREES, uniform)


def test_against_greedy_its_true_hand_is_likelier_than_a_random_one() -> None:
    """In a real deal against greedy, greedy's true hidden hand gets a higher likelihood
    than the average sampled hand at the decisions where there are plays to weigh."""
    mcts = MctsPolicy(seed=1, iterations=40, posterior="learned")
    net = shipped_net()
    margins = []
    for game in against_greedy(mcts):
        if mcts.last_hands[1]:
            assert mcts.last_hands[0] == 1
            view = game.view(0)
            plays = [p for p in mcts._tracker._round(view) if p.seat == 1]
            hidden = game.hands[1] & ~game.declared[1]
            true = play_log_likelihood(net, plays, 1, hidden)
            drawn = mcts._tracker.candidate_hands(view, random.Random(5), 50)
            assert drawn is not None
            others = [play_log_likelihood(net, plays, 1, h) for h in drawn[2]]
            margins.append(true - statistics.fmean(others))
    assert len(margins) >= 3
    assert statistics.fmean(margins) > 0


def test_what_it_infers_is_the_same_in_every_world_consistent_with_its_view() -> None:
    """Two bots with one seed follow a deal against greedy: one is shown the true game's
    views, the other the views of worlds dealt again from them (other hidden hands and
    stock). They infer the same hands and choose the same moves."""
    first = MctsPolicy(seed=2, iterations=60, posterior="learned")
    second = MctsPolicy(seed=2, iterations=60, posterior="learned")
    rng = random.Random(9)
    inferred = differed = 0
    for game in against_greedy(first):
        world = sample_world(game.view(0), rng)
        differed += world.hands[1] != game.hands[1]
        legal = game.legal_actions()
        codes = [a.to_int() for a in legal]
        choice = second.choose(world.view(0), legal, None)
        if len(legal) > 1:
            assert first.last is not None
            assert choice == first.last.best(codes)
        assert second.last_hands == first.last_hands
        inferred += bool(first.last_hands[1])
    assert inferred >= 3 and differed >= 3


def test_it_is_a_bot_spec_option_like_the_others() -> None:
    bot = make_policy("mcts", {"posterior": "learned", "iterations": 30}, seed=4)
    assert isinstance(bot, MctsPolicy) and bot.posterior == "learned"
    with pytest.raises(ValueError, match="mcts posterior must be one of evidence, replay, learned"):
        make_policy("mcts", {"posterior": "network"})


def test_guided_by_the_network_both_ways_it_plays_a_tournament_on_a_real_server(
    tmp_path: Path,
) -> None:
    """The network as root prior and as belief model, in one spec, is a bot like the others:
    the tournament runner starts it as a process on a real server."""
    spec = "mcts:iterations=30,guide=learned,posterior=learned"
    args = ["tournament", "--bot", f"guided={spec}", "--bot", "greedy", "--games", "2"]
    args += ["--target", "11", "--seed", "3", "--out", "out", "--concurrency", "1"]
    done = run([*CIRULLA, *args], tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    games = json.loads((tmp_path / "out" / "results.json").read_text())["games"]
    assert len(games) == 2
    for game in games:
        assert game["seat_outcomes"][game["seats"].index("guided")] == "ok", game
        assert game["winner"] is not None and game["deals"] > 0
