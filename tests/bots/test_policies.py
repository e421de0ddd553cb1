"""The built-in policies, in process through the rules core (no server needed)."""

from __future__ import annotations

import random

import pytest

from cirulla.bots.botspec import bot_command, parse_bot_spec
from cirulla.bots.heuristic import (
    Mover,
    blind_risk,
    code_score,
    playout_code,
    sweep_value_bits,
)
from cirulla.bots.mcts import SearchConfig, root_prior, search
from cirulla.bots.mcts_policy import MctsPolicy
from cirulla.bots.simple import GreedyPolicy, RandomPolicy
from cirulla.bots.specs import make_policy
from cirulla.rules import SETTEBELLO, WILD, DeclarationKind, Game, Options, parse_cards


def deal(hand0: str, hand1: str, table: str) -> Game:
    """A 2-player game whose first deal gives seat 0 and seat 1 these cards (seat 0 to move)."""
    h0, h1, t = parse_cards(hand0), parse_cards(hand1), parse_cards(table)
    front = [c for pair in zip(h0, h1, strict=True) for c in pair] + t
    rest = [c for c in range(40) if c not in front]
    return Game(Options(), decks=[front + rest], first_dealer=1)


def choose(policy, game: Game):
    legal = game.legal_actions()
    index = policy.choose(game.view(game.to_move), legal, None)
    assert 0 <= index < len(legal)
    return legal[index]


def play_game(policies, seed: int, players: int = 2) -> Game:
    game = Game(Options(players=players), seed=seed)
    while not game.is_over:
        seat = game.to_move
        legal = game.legal_actions()
        game.apply(legal[policies[seat].choose(game.view(seat), legal, None)], seat)
    return game


def test_random_is_seeded_and_legal() -> None:
    game = Game(Options(), seed=5)
    view, legal = game.view(game.to_move), game.legal_actions()
    assert RandomPolicy(3).choose(view, legal, None) == RandomPolicy(3).choose(view, legal, None)
    picks = {RandomPolicy(s).choose(view, legal, None) for s in range(40)}
    assert len(picks) > 1 and all(0 <= p < len(legal) for p in picks)


def test_greedy_takes_the_settebello() -> None:
    game = deal("7C 2S KH", "4D 5C 6C", "7D 3C 4S JS")
    action = choose(GreedyPolicy(), game)
    assert action.card == parse_cards("7C")[0] and action.capture >> SETTEBELLO & 1


def test_greedy_sweeps_for_a_scopa() -> None:
    game = deal("3H 6S KH", "4D 5C 6C", "2C 3S 4H 3C")  # 3H + 12 on the table = 15
    action = choose(GreedyPolicy(), game)
    assert action.capture == game.table


def test_greedy_always_declares_and_names_the_wild_an_ace() -> None:
    game = deal("7H AC 2S", "4D 5C 6C", "5D 6S KS JC")
    action = choose(GreedyPolicy(), game)
    assert action.declaration is not None
    assert action.declaration.kind is DeclarationKind.LOW_HAND
    if action.card != WILD:
        assert action.declaration.wild_value == 1


def test_greedy_prefers_three_of_a_kind() -> None:
    game = deal("2C 2S 2H", "4D 5C 6C", "5D 6S KS JC")
    action = choose(GreedyPolicy(), game)
    assert action.declaration is not None
    assert action.declaration.kind is DeclarationKind.THREE_OF_A_KIND


def test_greedy_beats_random_over_seeded_games() -> None:
    wins = 0
    for k in range(20):
        greedy_seat = k % 2
        policies = [RandomPolicy(k), RandomPolicy(k)]
        policies[greedy_seat] = GreedyPolicy()
        wins += play_game(policies, seed=100 + k).winner == greedy_seat
    assert wins >= 17


def test_mcts_is_deterministic_for_a_seed_and_budget() -> None:
    game = Game(Options(), seed=11)
    view, legal = game.view(game.to_move), game.legal_actions()
    a = MctsPolicy(seed=4, iterations=200)
    b = MctsPolicy(seed=4, iterations=200)
    assert a.choose(view, legal, None) == b.choose(view, legal, None)
    assert a.last is not None and b.last is not None
    assert a.last.visits == b.last.visits
    assert a.last.iterations == 200


def test_mcts_takes_the_settebello() -> None:
    game = deal("7C 2S KH", "4D 5C 6C", "7D 3C 4S JS")
    action = choose(MctsPolicy(seed=1, iterations=300), game)
    assert action.capture >> SETTEBELLO & 1


def test_mcts_time_budget_stops_the_search() -> None:
    view = Game(Options(), seed=2).view(0)
    result = search(view, 1, SearchConfig(seconds=0.02))
    assert 0 < result.iterations < 100_000
    assert sum(result.visits.values()) == result.iterations


@pytest.mark.parametrize("players", [3, 4])
def test_every_kind_finishes_multiplayer_games(players: int) -> None:
    kinds = ["random", "greedy", "mcts:iterations=20", "greedy"][:players]
    policies = []
    for seat, spec in enumerate(kinds):
        kind, options = parse_bot_spec(spec)
        policies.append(make_policy(kind, options, seed=seat))
    game = play_game(policies, seed=players, players=players)
    assert game.winner is not None
    assert max(game.totals) >= 51 or game.cappotto


def test_bot_specs_round_trip_to_command_lines() -> None:
    assert parse_bot_spec("mcts:iterations=500,c=0.7") == ("mcts", {"iterations": 500, "c": 0.7})
    assert parse_bot_spec("greedy") == ("greedy", {})
    args = bot_command("mcts:iterations=30", "127.0.0.1:1", "m1", "tok", seed=3)
    assert args[:2] == ["bot", "mcts"] and args[-1] == "--option=iterations=30"
    assert "--token=tok" in args
    assert isinstance(make_policy("mcts", {"iterations": "50"}), MctsPolicy)


@pytest.mark.parametrize(
    "spec, words",
    [
        ("chess", "unknown bot kind 'chess'"),
        ("mcts:width=3", "no option 'width'"),
        ("mcts:iterations=many", "takes int"),
        ("mcts:iterations", "expected key=value"),
    ],
)
def test_bad_bot_specs_say_what_is_wrong(spec: str, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        parse_bot_spec(spec)


@pytest.mark.parametrize("blind", [False, True])
@pytest.mark.parametrize("preset", ["standard", "genova-home", "fantacarte"])
def test_playout_moves_are_always_legal(preset: str, blind: bool) -> None:
    # The playout builds codes itself instead of listing them: it must never go astray.
    rng = random.Random(7)
    players = (2,) if preset == "fantacarte" else (2, 3, 4)
    for n in players:
        for seed in range(15):
            game = Game(Options.preset(preset, players=n), seed=seed, deal_only=True)
            while not game.deal_over:
                code = playout_code(game, rng, epsilon=0.3, blind=blind)
                assert code in game.legal_codes(), (game, code)
                game.apply_code(code)


def test_sweep_values_and_blind_risk() -> None:
    # 5C 3S on the table (sum 8): an 8 pairs-and-adds it, a 7 makes 15, an ace sweeps it.
    table = sum(1 << c for c in parse_cards("5C 3S"))
    assert sweep_value_bits(table, 0) == 1 << 8 | 1 << 7 | 1 << 1
    with_ace = table | 1 << parse_cards("AC")[0]  # sum 9: a 9 or a 6; no ace sweep
    assert sweep_value_bits(with_ace, 0) == 1 << 9 | 1 << 6
    count = [0] * 11
    count[9] = 2
    # Two of 10 unseen cards sweep; the next player holds 3: 1 - (8/10)(7/9)(6/8).
    assert blind_risk(1 << 9, count, 10, 3, 0) == pytest.approx(1 - 8 / 10 * 7 / 9 * 6 / 8)
    assert blind_risk(1 << 6, count, 10, 3, 0) == 0.0  # no unseen 6
    assert blind_risk(1 << 6, count, 10, 3, 1 << 6) == 1.0  # he declared a 6
    assert blind_risk(1 << 9, count, 10, 0, 0) == 0.0  # he holds nothing


def test_a_blind_playout_does_not_look_at_the_next_hand() -> None:
    """JH QS KC against 4C: no capture, so a card is dropped; all three are worth the same.
    The sighted mover sees that the next hand (4D 4S 6C) sweeps nothing and drops the
    first, JH (leaving 12: a 3 or an ace would sweep it). The blind mover cannot see that
    hand: he drops KC, which leaves 14, swept only by an ace."""
    mask = lambda text: sum(1 << c for c in parse_cards(text))  # noqa: E731
    used = mask("JH QS KC 4D 4S 6C 4C KD KS KH")
    game = Game.setup(
        Options(),
        hands=[mask("JH QS KC"), mask("4D 4S 6C")],
        table=mask("4C"),
        captured=[0, mask("KD KS KH")],
        stock=[c for c in range(40) if not used >> c & 1],
        turn=0,
        dealer=1,
    )
    sighted = playout_code(game, random.Random(1), 0.0)
    blind = playout_code(game, random.Random(1), 0.0, blind=True)
    assert sighted == parse_cards("JH")[0]
    assert blind == parse_cards("KC")[0]


def test_root_prior_ranks_the_greedy_choice_first() -> None:
    game = deal("7C 2S KH", "4D 5C 6C", "7D 3C 4S JS")
    codes = game.legal_codes()
    bias = root_prior(game.view(0), codes, 10.0)
    best = max(codes, key=bias.__getitem__)
    assert bias[best] == 0.0 and all(b <= 0.0 for b in bias.values())
    assert best >> 12 >> SETTEBELLO & 1


@pytest.mark.parametrize("blind", [False, True])
def test_code_score_rates_the_playout_choice_best(blind: bool) -> None:
    """Tree expansion (``expand=best``) and playouts weigh actions the same way: the
    playout's choice scores at least as well as every legal action with its declaration."""
    rng = random.Random(3)
    checked = 0
    for seed in range(8):
        game = Game(Options(), seed=seed, deal_only=True)
        while not game.deal_over:
            chosen = playout_code(game, rng, 0.0, blind=blind)
            mover = Mover.of(game, blind)
            decl = chosen >> 6 & 63
            same = [c for c in game.legal_codes() if c >> 6 & 63 == decl]
            best = max(code_score(mover, game, c) for c in same)
            assert code_score(mover, game, chosen) >= best - 1e-9
            checked += 1
            game.apply_code(chosen)
    assert checked > 100
