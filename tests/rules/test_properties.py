"""Random-game invariants (hypothesis) and an independent reference for capture generation."""

from __future__ import annotations

import random
from itertools import combinations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cirulla.rules import (
    PRESETS,
    Action,
    Game,
    IllegalActionError,
    Options,
    legal_captures,
    sample_world,
)
from cirulla.rules.cards import ALL_CARDS_MASK, VALUES, WILD, cards_of

PLAYER_PRESETS = [
    (players, preset)
    for preset in PRESETS
    for players in (2, 3, 4)
    if not (preset == "fantacarte" and players != 2)
]
FAST = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def reference_captures(table: list[int], value: int, named: dict[int, int], precedence: bool):
    """RULES.md 'Captures', written out longhand with itertools (no shared code)."""
    vals = {c: named.get(c, VALUES[c]) for c in table}
    if value == 1 and table and not any(v == 1 for v in vals.values()):
        return {frozenset(table)}
    sets = set()
    for size in range(1, len(table) + 1):
        for combo in combinations(table, size):
            total = sum(vals[c] for c in combo)
            if size == 1 and total == value:
                sets.add(frozenset(combo))
            if size >= 2 and total == value:
                sets.add(("add", frozenset(combo)))
            if total + value == 15:
                sets.add(frozenset(combo))
    pairs = any(vals[c] == value for c in table)
    out = set()
    for s in sets:
        if isinstance(s, tuple):
            if not (precedence and pairs):
                out.add(s[1])
        else:
            out.add(s)
    return out


@settings(max_examples=400, deadline=None)
@given(
    table=st.lists(st.integers(0, 39), max_size=9, unique=True),
    card=st.integers(0, 39),
    wild=st.integers(0, 10),
    precedence=st.booleans(),
)
def test_capture_generation_matches_the_reference(table, card, wild, precedence):
    if card in table:
        return
    mask = sum(1 << c for c in table)
    named = {WILD: wild} if wild else {}
    value = wild if card == WILD and wild else VALUES[card]
    fast = legal_captures(mask, value, wild, precedence)
    assert list(fast) == sorted(fast), "capture sets must come in ascending mask order"
    assert len(set(fast)) == len(fast)
    got = {frozenset(cards_of(m)) for m in fast}
    assert got == reference_captures(table, value, named, precedence)


def assert_unchanged(game: Game, before: tuple) -> None:
    assert (repr(game), game.legal_codes(), [game.view(s) for s in range(game.n)]) == before


@FAST
@given(seed=st.integers(0, 2**32 - 1), which=st.sampled_from(PLAYER_PRESETS))
def test_random_games_keep_every_invariant_and_end_with_a_winner(seed, which):
    players, preset = which
    rng = random.Random(seed)
    game = Game(Options.preset(preset, players=players), seed=seed)
    steps = 0
    while not game.is_over:
        assert game.cards_accounted() == ALL_CARDS_MASK  # all 40 cards, no card twice
        legal = game.legal_actions()
        assert legal, "the seat to move always has a legal action"
        assert [a.to_int() for a in legal] == game.legal_codes()
        assert len(set(game.legal_codes())) == len(legal)
        if steps % 7 == 0:  # something illegal is refused and changes nothing
            before = (repr(game), game.legal_codes(), [game.view(s) for s in range(game.n)])
            legal_set = set(game.legal_codes())
            hand = game.hands[game.turn]
            for card in rng.sample(range(40), 6):
                candidate = Action(card, game.table & ~(1 << card) & rng.getrandbits(40))
                if candidate.to_int() in legal_set:
                    continue
                with pytest.raises(IllegalActionError):
                    game.apply(candidate)
                assert_unchanged(game, before)
            other = (game.turn + 1) % game.n
            with pytest.raises(IllegalActionError):
                game.apply(legal[0], seat=other)
            assert_unchanged(game, before)
            assert hand == game.hands[game.turn]
        game.apply(rng.choice(legal))
        steps += 1
        assert steps < 20_000
    assert game.winner is not None
    assert game.totals[game.winner] >= game.options.target or game.cappotto
    assert game.totals.count(max(game.totals)) == 1 or game.cappotto


@FAST
@given(seed=st.integers(0, 2**32 - 1), players=st.sampled_from([2, 3, 4]))
def test_same_seed_and_actions_give_the_same_events(seed, players):
    options = Options(players=players)
    rng = random.Random(seed)
    first_events: list = []
    game = Game(options, seed=seed, events=first_events)
    actions = []
    for _ in range(200):
        if game.is_over:
            break
        action = rng.choice(game.legal_actions())
        actions.append(action)
        first_events += game.apply(action)
    replay_events: list = []
    replay = Game(options, decks=game.decks_used, events=replay_events)
    for action in actions:
        replay_events += replay.apply(action)
    assert replay_events == first_events
    assert replay.totals == game.totals and repr(replay) == repr(game)


@FAST
@given(seed=st.integers(0, 2**32 - 1), which=st.sampled_from(PLAYER_PRESETS))
def test_sampled_worlds_match_the_view_and_leak_nothing(seed, which):
    players, preset = which
    rng = random.Random(seed)
    game = Game(Options.preset(preset, players=players), seed=seed, deal_only=True)
    for _ in range(rng.randrange(0, 30)):
        if game.to_move is None:
            break
        game.apply(rng.choice(game.legal_actions()))
    seat = rng.randrange(players)
    view = game.view(seat)
    hidden = view.unseen
    hidden_truth = sum(game.hands[s] & ~game.declared[s] for s in range(players) if s != seat)
    hidden_truth |= sum(1 << c for c in game.stock)
    assert hidden == hidden_truth, "unseen = exactly the other hands' undeclared cards + stock"
    for _ in range(5):
        world = sample_world(view, rng)
        assert world.view(seat) == view  # same information state
        assert world.view(seat).key() == view.key()
        assert world.cards_accounted() == ALL_CARDS_MASK
        for s in range(players):
            assert world.declared[s] & world.hands[s] == world.declared[s]
        if world.to_move is not None:
            code = rng.choice(world.legal_codes())
            world.apply_code(code)  # a sampled world is playable


def test_views_hide_other_hands_and_spectators_see_no_hand():
    game = Game(Options(players=3), seed=3)
    for seat in range(3):
        view = game.view(seat)
        assert view.hand == game.hands[seat]
        for other in range(3):
            if other != seat:
                assert not view.hand & game.hands[other]
        assert str(game.hands[(seat + 1) % 3]) not in view.key().split()
    spectator = game.view(None)
    assert spectator.hand == 0 and spectator.seat is None
    with pytest.raises(ValueError):
        sample_world(spectator, random.Random(1))


def test_copy_is_independent():
    game = Game(Options(), seed=11)
    clone = game.copy()
    clone.apply_code(clone.legal_codes()[0])
    assert repr(clone) != repr(game)
    assert game.cards_accounted() == ALL_CARDS_MASK


def reference_legal_count(game: Game) -> int:
    """Legal actions from the longhand rules: declarations x cards x (captures | drop)."""
    hand = cards_of(game.hands[game.turn])
    table = cards_of(game.table)
    choices: list[tuple[int, int]] = [(0, 0)]  # (points, named wild value)
    if len(hand) == 3:
        for named in range(1, 11) if WILD in hand else (0,):
            vals = [named if c == WILD else VALUES[c] for c in hand]
            if vals[0] == vals[1] == vals[2]:
                choices.append((10, named))
            elif sum(vals) <= 9:
                choices.append((3, named))
    count = 0
    for _, named in choices:
        wild = named or game.wild
        for card in hand:
            value = wild if card == WILD and wild else VALUES[card]
            on_table = {WILD: game.wild} if game.wild else {}
            sets = reference_captures(table, value, on_table, game.options.pairing_precedence)
            count += len(sets) + (1 if not sets or not game.options.must_capture else 0)
    return count


@FAST
@given(seed=st.integers(0, 2**32 - 1), which=st.sampled_from(PLAYER_PRESETS))
def test_legal_action_counts_match_the_reference_along_random_games(seed, which):
    players, preset = which
    rng = random.Random(seed)
    game = Game(Options.preset(preset, players=players), seed=seed, deal_only=True)
    while game.to_move is not None:
        assert len(game.legal_codes()) == reference_legal_count(game)
        game.apply_code(rng.choice(game.legal_codes()))


@FAST
@given(seed=st.integers(0, 2**32 - 1), which=st.sampled_from(PLAYER_PRESETS))
def test_every_event_survives_to_dict_and_from_dict(seed, which):
    players, preset = which
    rng = random.Random(seed)
    events: list = []
    game = Game(Options.preset(preset, players=players), seed=seed, events=events)
    while not game.is_over:
        events += game.apply(rng.choice(game.legal_actions()))
    kinds = {type(e).__name__ for e in events}
    assert {"DealStarted", "HandDealt", "CardPlayed", "DealScored", "GameOver"} <= kinds
    for event in events:
        data = event.to_dict()
        assert type(event).from_dict(data) == event, data
