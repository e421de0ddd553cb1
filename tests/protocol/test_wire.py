"""cirulla.wire: every value the server and the bots exchange comes back as it went out,
and every malformed field is refused with its name in the message."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cirulla.rules import (
    CARD_NAMES,
    PRESETS,
    WILD,
    Action,
    CirullaError,
    Declaration,
    DeclarationKind,
    Options,
    mask_of,
)
from cirulla.v1 import cards_pb2, game_pb2, rules_pb2
from cirulla.wire import (
    WireError,
    action_from_proto,
    action_to_proto,
    card_from_proto,
    card_to_proto,
    cards_from_proto,
    cards_to_proto,
    mask_from_proto,
    notation,
    options_from_proto,
    options_to_proto,
    parse_notation,
    preset_from_proto,
    preset_to_proto,
    rules_from_proto,
    rules_to_proto,
)


def test_all_40_cards_round_trip_in_every_accepted_form() -> None:
    for c in range(40):
        msg = card_to_proto(c)
        assert (msg.code, msg.suit, msg.rank) == (CARD_NAMES[c], c % 4 + 1, c // 4 + 1)
        assert card_from_proto(msg) == c
        assert card_from_proto(cards_pb2.Card(code=CARD_NAMES[c].lower())) == c
        assert card_from_proto(cards_pb2.Card(suit=msg.suit, rank=msg.rank)) == c


def test_bad_cards_name_the_field() -> None:
    cases = [
        (cards_pb2.Card(code="ZZ"), "unknown card code 'ZZ'"),
        (cards_pb2.Card(), "empty card"),
        (cards_pb2.Card(suit=cards_pb2.SUIT_HEARTS), "needs both suit and rank"),
        (cards_pb2.Card(suit=9, rank=3), "needs both suit and rank"),
        (cards_pb2.Card(suit=cards_pb2.SUIT_HEARTS, rank=7, code="7D"), "disagrees"),
    ]
    for card, problem in cases:
        with pytest.raises(WireError, match=problem) as exc:
            card_from_proto(card, "Deck.cards[3]")
        assert str(exc.value).startswith("Deck.cards[3]: ")
        assert exc.value.field == "Deck.cards[3]"
        assert isinstance(exc.value, CirullaError) and isinstance(exc.value, ValueError)


@given(st.integers(min_value=0, max_value=(1 << 40) - 1))
def test_masks_round_trip(mask: int) -> None:
    cards = cards_to_proto(mask)
    assert [card_from_proto(c) for c in cards] == sorted(card_from_proto(c) for c in cards)
    assert mask_from_proto(cards, "table") == mask
    assert mask_of(cards_from_proto(cards, "deck")) == mask


def test_a_set_refuses_repeats_and_a_list_keeps_its_order() -> None:
    twice = [cards_pb2.Card(code="2C"), cards_pb2.Card(code="5H"), cards_pb2.Card(code="2c")]
    with pytest.raises(WireError, match=r"^view\.table\[2\]: 2C is listed twice$"):
        mask_from_proto(twice, "view.table")
    order = [cards_pb2.Card(code=code) for code in ("KS", "AD", "7H")]
    assert cards_from_proto(order, "deck") == [39, 0, WILD]


def every_declaration() -> list[Declaration | None]:
    out: list[Declaration | None] = [None]
    for kind in DeclarationKind:
        out.append(Declaration(kind))
        out += [Declaration(kind, w) for w in range(1, 11)]
    return out


@given(
    st.integers(0, 39),
    st.integers(min_value=0, max_value=(1 << 40) - 1),
    st.sampled_from(every_declaration()),
)
def test_every_action_kind_round_trips(card: int, capture: int, decl: Declaration | None) -> None:
    action = Action(card, capture & ~(1 << card), decl)
    msg = action_to_proto(action)
    assert msg == action_to_proto(action.to_int())
    assert action_from_proto(msg) == action
    assert parse_notation(notation(action)) == action
    assert notation(action.to_int()) == str(action)


def test_declarations_with_the_named_wild_on_the_wire() -> None:
    action = Action.parse("three:7H=5 5C:5S")
    msg = action_to_proto(action)
    assert msg.declaration == game_pb2.DECLARATION_KIND_THREE_OF_A_KIND
    assert msg.HasField("wild_value") and msg.wild_value == 5
    plain = action_to_proto(Action.parse("low 4C"))
    assert plain.declaration == game_pb2.DECLARATION_KIND_LOW_HAND
    assert not plain.HasField("wild_value")
    # The short form names the wild value without "7H".
    assert parse_notation("THREE=5 5C:5S") == action


def test_bad_actions_name_the_field() -> None:
    field = "SubmitAction.action"

    def bad(problem: str, **kw: object) -> None:
        with pytest.raises(WireError, match=problem):
            action_from_proto(game_pb2.Action(**kw), field)

    card = cards_pb2.Card(code="5H")
    bad(r"^SubmitAction\.action\.card: missing")
    bad(r"^SubmitAction\.action\.card: unknown card code 'ZZ'", card=cards_pb2.Card(code="ZZ"))
    captures = [cards_pb2.Card(code="2C"), cards_pb2.Card(code="3S"), cards_pb2.Card(code="1X")]
    bad(
        r"^SubmitAction\.action\.captures\[2\]: unknown card code '1X'",
        card=card,
        captures=captures,
    )
    bad(r"^SubmitAction\.action: 5H cannot capture itself", card=card, captures=[card])
    bad(r"^SubmitAction\.action\.declaration: unknown declaration kind 7", card=card, declaration=7)
    bad(
        r"^SubmitAction\.action\.wild_value: 11 is not a value 1\.\.10",
        card=card,
        declaration=1,
        wild_value=11,
    )
    bad(r"^SubmitAction\.action\.wild_value: 0 is not", card=card, declaration=2, wild_value=0)
    bad(r"^SubmitAction\.action\.wild_value: set without a declaration", card=card, wild_value=3)
    with pytest.raises(WireError, match=r"^SubmitAction\.notation: cannot parse action '5H:'"):
        parse_notation("5H:", "SubmitAction.notation")


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_options_and_presets_round_trip(preset: str) -> None:
    options = PRESETS[preset]
    wire_options = options_to_proto(options)
    assert all(wire_options.HasField(f) for f in Options().to_dict())
    assert options_from_proto(wire_options) == options
    assert preset_from_proto(preset_to_proto(preset)) == preset
    overrides = {"target": 26, "must_capture": False}
    assert rules_from_proto(rules_to_proto(preset, overrides)) == (
        preset,
        overrides,
        Options.preset(preset, **overrides),
    )
    # Unset overrides keep the preset; "genova_home" is the same preset as "genova-home".
    assert rules_from_proto(rules_to_proto(preset.replace("-", "_")))[2] == options


def test_unspecified_preset_is_standard_and_unset_options_keep_the_base() -> None:
    assert rules_from_proto(rules_pb2.Rules())[0] == "standard"
    base = Options(players=4, target=26)
    assert options_from_proto(rules_pb2.RuleOptions(target=101), base) == Options(
        players=4, target=101
    )


def test_bad_rule_options_name_the_field() -> None:
    with pytest.raises(WireError, match=r"^MatchSettings\.rules\.preset: unknown preset 9"):
        rules_from_proto(rules_pb2.Rules(preset=9), "MatchSettings.rules")
    with pytest.raises(WireError, match=r"^MatchSettings\.rules\.overrides: option players"):
        overrides = rules_pb2.RuleOptions(players=5)
        rules_from_proto(rules_pb2.Rules(overrides=overrides), "MatchSettings.rules")
    fantacarte_3 = rules_pb2.Rules(
        preset=rules_pb2.PRESET_FANTACARTE, overrides=rules_pb2.RuleOptions(players=3)
    )
    with pytest.raises(WireError, match=r"rules\.overrides: preset fantacarte is for 2 players"):
        rules_from_proto(fantacarte_3)
    with pytest.raises(WireError, match=r"^NewGame\.rules: option piccola_max must be 3\.\.10"):
        options_from_proto(rules_pb2.RuleOptions(piccola_max=11), field="NewGame.rules")
    with pytest.raises(WireError, match="unknown preset 'casual'"):
        preset_to_proto("casual")
