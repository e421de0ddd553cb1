"""Scenario tests: one rule at a time, on positions built by hand."""

from __future__ import annotations

import pytest

from cirulla.rules import (
    Action,
    DeckError,
    Game,
    IllegalActionError,
    Match,
    Options,
    parse_card,
    parse_mask,
)
from cirulla.rules.events import (
    CardPlayed,
    DealerBonus,
    DealScored,
    DealStarted,
    Declared,
    GameOver,
    HandDealt,
    LastTake,
    Redeal,
)
from tests.rules_helpers import deal_deck, names, position


def snapshot(game: Game) -> tuple:
    return (repr(game), [game.view(s) for s in range(game.n)], game.legal_codes(), game.history)


# --------------------------------------------------------------------------- dealing


def test_deal_order_round_robin_from_the_seat_after_the_dealer():
    events: list = []
    d = deal_deck(["2C 3C 4C", "5C 6C JC"], "KD QD JD 2S", players=2)
    game = Game(Options(), decks=[d], events=events)
    assert game.dealer == 1 and game.turn == 0
    assert names(game.hands[0]) == ["2C", "3C", "4C"]
    assert names(game.hands[1]) == ["5C", "6C", "JC"]
    assert names(game.table) == ["2S", "JD", "QD", "KD"]
    assert len(game.stock) == 30
    started = [e for e in events if isinstance(e, DealStarted)]
    assert started[0].dealer == 1 and started[0].table == game.table
    dealt = {e.seat: e.hand for e in events if isinstance(e, HandDealt)}
    assert dealt == {0: game.hands[0], 1: game.hands[1]}
    assert not dealt[0] & game.hands[1]


def test_four_players_get_three_rounds_three_players_four():
    for players, rounds in ((2, 6), (3, 4), (4, 3)):
        game = Game(Options(players=players), seed=5, deal_only=True)
        seen_rounds = {game.round}
        while game.to_move is not None:
            game.apply_code(game.legal_codes()[0])
            seen_rounds.add(game.round)
        assert max(seen_rounds) == rounds


def test_two_aces_on_the_table_redeal_with_the_next_deck():
    bad = deal_deck(["2C 3C 4C", "5C 6C JC"], "AD AS KD 2S")
    good = deal_deck(["2C 3C 4C", "5C 6C JC"], "KD QD JD 2S")
    events: list = []
    game = Game(Options(), decks=[bad, good], events=events)
    assert isinstance(events[0], Redeal) and names(events[0].table) == ["AD", "AS", "2S", "KD"]
    assert game.decks_used == [bad, good]
    assert names(game.table) == ["2S", "JD", "QD", "KD"]
    assert game.dealer == 1  # the same dealer deals again


def test_a_redeal_without_another_deck_order_is_a_clear_error():
    bad = deal_deck(["2C 3C 4C", "5C 6C JC"], "AD AS KD 2S")
    with pytest.raises(DeckError, match="redeal"):
        Game(Options(), decks=[bad])


def test_bad_deck_orders_are_rejected():
    with pytest.raises(DeckError):
        Game(Options(), decks=[list(range(39))])
    with pytest.raises(DeckError):
        Game(Options(), decks=[[0] * 40])


@pytest.mark.parametrize(
    ("table", "options", "scope"),
    [
        ("5C 4D 3S 3C", {}, 1),
        ("KC KD 5S 5C", {}, 2),
        ("AC 2D 3S 2C", {}, 3),
        ("AC 2D 3S 2C", {"dealer_low_bonus": False}, 0),
        ("7H 2C 2D KS", {}, 1),
    ],
)
def test_dealer_bonus_takes_the_table(table, options, scope):
    events: list = []
    game = Game(
        Options(**options), decks=[deal_deck(["2S 3H 4S", "6H 6S JC"], table)], events=events
    )
    bonus = [e for e in events if isinstance(e, DealerBonus)]
    if scope:
        assert bonus[0].scope == scope and bonus[0].dealer == 1
        assert game.table == 0 and game.scope == [0, scope] and game.last_taker == 1
        assert game.captured[1] == parse_mask(table)
    else:
        assert not bonus and game.table == parse_mask(table)


# --------------------------------------------------------------------------- captures


def test_scopa_scores_when_the_table_is_emptied():
    game = position(["5H 2D", "KC 3C"], table="2C 3S", stock="4D 6D 4S 6S 4H 6H")
    events = game.apply("5H:2C+3S")
    played = events[0]
    assert isinstance(played, CardPlayed) and played.scopa and not played.ace_sweep
    assert game.scope == [1, 0] and game.last_taker == 0


def test_leftovers_go_to_the_last_taker_without_a_scopa():
    game = position(["5H", "KC"], table="2C 3S")
    game.apply("5H:2C+3S")  # not the last card of the deal: a scopa
    assert game.scope == [1, 0]
    events = game.apply("KC")
    take = next(e for e in events if isinstance(e, LastTake))
    assert take.side == 0 and names(take.cards) == ["KC"]
    scored = next(e for e in events if isinstance(e, DealScored))
    assert scored.score.sides[0].scope == 1


def test_no_scopa_on_the_last_card_of_the_deal():
    game = position(["5H", "KS"], table="KC 2C 3S", turn=1)
    game.apply("KS:KC")
    events = game.apply("5H:2C+3S")  # empties the table with the deal's last card
    played = events[0]
    assert isinstance(played, CardPlayed) and not played.scopa
    assert game.last_score is not None and game.last_score.sides[0].scope == 0


def test_ace_sweep_is_the_only_capture_and_a_scopa():
    game = position(["AS 2D", "KC 3C"], table="4C KS 6D", stock="4D 6C 4S 6S 4H 6H")
    assert [str(a) for a in game.legal_actions() if a.card == parse_card("AS")] == ["AS:4C+6D+KS"]
    played = game.apply("AS:4C+6D+KS")[0]
    assert played.ace_sweep and played.scopa and game.scope == [1, 0]


def test_ace_sweep_scopa_option_off():
    game = position(
        ["AS 2D", "KC 3C"],
        table="4C KS 6D",
        stock="4D 6C 4S 6S 4H 6H",
        options=Options(ace_sweep_scopa=False),
    )
    played = game.apply("AS:4C+6D+KS")[0]
    assert played.ace_sweep and not played.scopa and game.scope == [0, 0]
    assert game.table == 0


def test_ace_with_an_ace_on_the_table_pairs_or_makes_fifteen():
    game = position(["AC 2D", "KC 3C"], table="AD 4C KS", stock="4D 6C 4S 6S 4H 6H")
    ace_moves = sorted(str(a) for a in game.legal_actions() if a.card == parse_card("AC"))
    assert ace_moves == ["AC:4C+KS", "AC:AD"]


def test_must_capture_applies_to_the_card_not_the_hand():
    game = position(["5H 2D", "KC 3C"], table="5C", stock="4D 6D 4S 6S 4H 6H")
    moves = {str(a) for a in game.legal_actions()}
    assert "5H:5C" in moves and "5H" not in moves  # 5H can capture, so it must
    assert "2D" in moves  # 2D cannot capture: it may be dropped instead
    before = snapshot(game)
    with pytest.raises(IllegalActionError) as info:
        game.apply("5H")
    assert info.value.rule == "must_capture"
    assert snapshot(game) == before


def test_without_must_capture_a_capturing_card_may_be_dropped():
    game = position(
        ["5H 2D", "KC 3C"],
        table="5C",
        stock="4D 6D 4S 6S 4H 6H",
        options=Options(must_capture=False),
    )
    game.apply("5H")
    assert names(game.table) == ["5H", "5C"]


def test_pairing_precedence_bars_adding_but_not_fifteen():
    game = position(
        ["5H 2D", "KC 3C"],
        table="5D 2C 3S",
        stock="4D 6D 4S 6S 4H 6H",
        options=Options(pairing_precedence=True),
    )
    with pytest.raises(IllegalActionError) as info:
        game.apply("5H:2C+3S")
    assert info.value.rule == "pairing_precedence"
    game.apply("5H:2C+3S+5D")  # fifteen is still allowed


# --------------------------------------------------------------------------- declarations


def test_declaration_with_the_wild_card_named_ace_then_it_sweeps():
    game = position(["7H 5C 2S", "KC 3C QD"], table="4C KS", stock="4D 6D 4S 6S 4H 6H")
    moves = [str(a) for a in game.legal_actions()]
    assert "low:7H=1 7H:4C+KS" in moves and "low:7H=2 7H:4C+KS" not in moves
    events = game.apply("low:7H=1 7H:4C+KS")
    declared, played = events[0], events[1]
    assert isinstance(declared, Declared) and declared.points == 3 and declared.wild_value == 1
    assert names(declared.cards) == ["2S", "5C", "7H"]
    assert played.ace_sweep and played.value == 1
    assert game.scope == [3 + 1, 0] and game.wild == 1
    assert names(game.declared[0]) == ["2S", "5C"]  # still public until played
    assert game.view(1).declared[0] == game.declared[0]


def test_a_named_wild_on_the_table_counts_as_an_ace():
    game = position(
        ["7H 5C 2S", "AC 3C QD"],
        table="6C",
        stock="4D 6D 4S 6S 4H 6H",
        options=Options(must_capture=False),
    )
    game.apply("low:7H=1 7H")  # dropped (allowed without must_capture): 7H stays an ace
    assert game.table == parse_mask("6C 7H")
    moves = {str(a) for a in game.legal_actions() if a.card == parse_card("AC") and a.capture}
    assert moves == {"AC:7H"}  # an ace is on the table: no sweep, it pairs the named 7H


def test_declaring_needs_three_cards_and_a_real_combination():
    game = position(["4C 3D 2S", "KC 3C QD"], table="6C", stock="4D 6D 4S 6S 4H 6H")
    before = snapshot(game)
    with pytest.raises(IllegalActionError) as info:
        game.apply("three 4C")
    assert info.value.rule == "declaration"
    assert snapshot(game) == before
    game.apply("low 4C")
    game.apply("KC:4C+6C")
    with pytest.raises(IllegalActionError) as info:
        game.apply("low 3D")
    assert info.value.rule == "declaration_timing"


def test_wild_holder_must_name_a_value():
    game = position(["7H 5C 2S", "KC 3C QD"], table="6C", stock="4D 6D 4S 6S 4H 6H")
    with pytest.raises(IllegalActionError) as info:
        game.apply("low 5C")
    assert info.value.rule == "declaration" and "name" in str(info.value)


def test_every_declaration_choice_is_its_own_action():
    game = position(["7H AC AD", "KC 3C QD"], table="6C", stock="4D 6D 4S 6S 4H 6H")
    decls = {str(a.declaration) for a in game.legal_actions() if a.declaration}
    assert decls == {"three:7H=1", *(f"low:7H={v}" for v in range(2, 8))}


# --------------------------------------------------------------------------- errors


def test_out_of_turn_card_not_in_hand_and_bad_capture_change_nothing():
    game = position(["5H 2D", "KC 3C"], table="2C 3S KS", stock="4D 6D 4S 6S 4H 6H")
    before = snapshot(game)
    cases = [
        (lambda: game.apply("KC", seat=1), "turn"),
        (lambda: game.apply("KC"), "card_in_hand"),
        (lambda: game.apply("5H:2C"), "capture"),
        (lambda: game.apply("5H:2C+4D"), "capture_on_table"),
    ]
    for call, rule in cases:
        with pytest.raises(IllegalActionError) as info:
            call()
        assert info.value.rule == rule, info.value
        assert f"[rule: {rule}]" in str(info.value)
        assert snapshot(game) == before


# --------------------------------------------------------------------------- game end


def split_rest(hands: list[str], table: str) -> list[int]:
    """The cards not in play, split between two sides by value parity (coins on both)."""
    used = parse_mask(table)
    for h in hands:
        used |= parse_mask(h)
    rest = [c for c in range(40) if not used >> c & 1]
    return [
        sum(1 << c for c in rest if (c // 4) % 2 == 0),
        sum(1 << c for c in rest if (c // 4) % 2 == 1),
    ]


def endgame(totals: list[int]) -> Game:
    hands, table = ["5H", "KC"], "2C 3S"
    return position(hands, table=table, captured=split_rest(hands, table), totals=totals)


def finish(game: Game) -> list:
    return game.apply("5H:2C+3S") + game.apply("KC")


def test_tied_top_above_target_plays_another_deal():
    trial = endgame([0, 0])
    finish(trial)
    p0, p1 = trial.totals
    game = endgame([60 - p0, 60 - p1])
    events = finish(game)
    assert next(e for e in events if isinstance(e, DealScored)).totals == (60, 60)
    assert game.winner is None and not any(isinstance(e, GameOver) for e in events)
    assert game.deal_no == 2 and game.to_move is not None


def test_game_ends_when_a_side_reaches_the_target_alone():
    trial = endgame([0, 0])
    finish(trial)
    p0, p1 = trial.totals
    assert p0 != p1
    leader = 0 if p0 > p1 else 1
    game = endgame([51 - trial.totals[leader] if i == leader else 0 for i in range(2)])
    events = finish(game)
    over = [e for e in events if isinstance(e, GameOver)]
    assert over and over[0].winner == leader and game.is_over and not game.cappotto
    assert game.totals[leader] == 51
    with pytest.raises(IllegalActionError) as info:
        game.apply("5H")
    assert info.value.rule == "game_over"


def test_cappotto_wins_at_once():
    coins = "AD 2D 3D 4D 5D 6D 7D JD QD"
    game = position(
        ["KD", "KC"],
        table="",
        captured=[parse_mask(coins), (1 << 40) - 1 & ~parse_mask(coins + " KD KC")],
    )
    game.apply("KD")
    events = game.apply("KC:KD")  # side 1 takes KD: no cappotto for side 0
    assert not game.cappotto
    game = position(
        ["KC", "KD"],
        table="5C",
        captured=[parse_mask(coins), (1 << 40) - 1 & ~parse_mask(coins + " KD KC 5C")],
        totals=[0, 40],
    )
    game.apply("KC:5C")
    events = game.apply("KD")  # KD left on the table goes to side 0, the last taker
    over = next(e for e in events if isinstance(e, GameOver))
    assert over.cappotto and over.winner == 0 and game.cappotto


def test_partnerships_score_as_one_side():
    game = position(["2D", "KC", "5H", "3D"], table="2C 3S", options=Options(players=4))
    events = []
    for action in ("2D:2C", "KC", "5H:KC", "3D:3S"):
        events += game.apply(action)
    sides = [(e.seat, e.side) for e in events if isinstance(e, CardPlayed)]
    assert sides == [(0, 0), (1, 1), (2, 0), (3, 1)]
    take = next(e for e in events if isinstance(e, LastTake))
    assert take.side == 1 and take.cards == 0
    scored = next(e for e in events if isinstance(e, DealScored))
    assert len(scored.score.sides) == 2 and len(scored.totals) == 2


def test_match_best_of_three_rotates_the_deal_and_stops_at_two_wins():
    import random

    rng = random.Random(1)
    match = Match(Options(target=11), best_of=3, seed=9)
    dealers = []
    while not match.is_over:
        if match.game.deal_no == 1 and (not dealers or dealers[-1][0] != len(match.games)):
            dealers.append((len(match.games), match.game.dealer))
        match.apply(rng.choice(match.game.legal_actions()))
    assert max(match.games_won) == 2 and match.winner == match.games_won.index(2)
    assert len(match.games) in (2, 3)
    with pytest.raises(IllegalActionError):
        match.apply(Action(0))


def test_setup_refuses_a_card_in_two_zones_or_in_none():
    with pytest.raises(DeckError, match="two zones"):
        position(["5H 2D", "KC 3C"], table="5H", captured=[0, 0])
    with pytest.raises(DeckError, match=r"missing: .*7D"):
        position(["5H 2D", "KC 3C"], table="2C", captured=[0, 0])
