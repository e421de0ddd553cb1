import pytest

from cirulla.rules import (
    Action,
    CardError,
    CardSet,
    Declaration,
    DeclarationKind,
    InvalidActionError,
    card_name,
    card_suit,
    card_value,
    parse_card,
    parse_mask,
)
from cirulla.rules.cards import COINS_MASK, SETTEBELLO, WILD, cards_of, format_cards, mask_of


def test_every_card_round_trips_and_is_case_insensitive():
    names = set()
    for card in range(40):
        name = card_name(card)
        names.add(name)
        assert parse_card(name) == card
        assert parse_card(name.lower()) == card
        assert parse_card(f"  {name.lower()} ") == card
    assert len(names) == 40


def test_card_values_and_suits():
    assert card_value(parse_card("AD")) == 1
    assert card_value(parse_card("7H")) == 7
    assert card_value(parse_card("JC")) == 8
    assert card_value(parse_card("QS")) == 9
    assert card_value(parse_card("KD")) == 10
    assert card_suit(parse_card("KD")) == card_suit(parse_card("AD")) == 0
    assert parse_card("7D") == SETTEBELLO and parse_card("7h") == WILD
    assert len(cards_of(COINS_MASK)) == 10
    assert all(card_name(c).endswith("D") for c in cards_of(COINS_MASK))


@pytest.mark.parametrize("bad", ["", "7", "7X", "1D", "10D", "8D", "ZZ", "7DD", "KH7"])
def test_bad_codes_are_rejected_with_the_code_in_the_message(bad):
    with pytest.raises(CardError) as info:
        parse_card(bad)
    assert repr(bad) in str(info.value)
    assert isinstance(info.value, ValueError)


def test_card_index_out_of_range():
    with pytest.raises(CardError):
        card_name(40)


def test_masks_and_cardset():
    mask = parse_mask("KD 2c 7h")
    assert mask == mask_of(parse_card(c) for c in ("2C", "7H", "KD"))
    assert [card_name(c) for c in cards_of(mask)] == ["2C", "7H", "KD"]
    cs = CardSet(mask)
    assert len(cs) == 3 and parse_card("7H") in cs and parse_card("7D") not in cs
    assert str(cs) == "2C 7H KD"
    assert eval(repr(cs)) == cs
    with pytest.raises(CardError):
        parse_mask("2C 2C")


@pytest.mark.parametrize(
    "text",
    ["5H", "5H:2C+3S", "low 4C:4S", "three:7H=3 3C", "low:7H=1 7H:4C+KS", "KD:2D+2S+6C"],
)
def test_action_notation_round_trips(text):
    action = Action.parse(text)
    assert str(action) == text
    assert Action.from_int(action.to_int()) == action
    assert eval(repr(action)) == action


def test_action_parse_normalises_case_and_capture_order():
    assert str(Action.parse("kd:6c+2s+2d")) == "KD:2D+2S+6C"
    assert Action.parse("THREE:7h=3 3c").declaration == Declaration(
        DeclarationKind.THREE_OF_A_KIND, 3
    )


@pytest.mark.parametrize(
    "bad",
    ["", "5X", "5H:", "5H:2C+", "5H:5H", "big 5H", "low:7H=11 5H", "low:7D=1 5H", "a b c"],
)
def test_action_syntax_errors(bad):
    with pytest.raises(InvalidActionError):
        Action.parse(bad)


def test_command_line_overrides_are_typed_and_keep_preset_checks():
    import subprocess
    import sys

    from cirulla.rules import OptionError, Options, parse_overrides

    overrides = parse_overrides(["must_capture=off", "piccola-max=10", "target = 101"])
    assert overrides == {"must_capture": False, "piccola_max": 10, "target": 101}
    assert Options.preset("genova-home", **overrides).piccola_max == 10
    for bad in (["must_capture=maybe"], ["target=ten"], ["colour=red"], ["target"]):
        with pytest.raises(OptionError):
            parse_overrides(bad)
    with pytest.raises(OptionError, match="2 players"):
        Options.preset("fantacarte", **parse_overrides(["players=3"]))
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "cirulla",
            "rules",
            "demo",
            "--preset",
            "fantacarte",
            "--rule",
            "players=3",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 2 and "2 players" in out.stderr


def test_a_negative_mask_is_refused_not_looped_over() -> None:
    """A negative int's lowest set bit never runs out: cards_of used to loop for ever on
    one (a zone edited by hand, then the game shown). Found by test_gamestate's property
    test."""
    with pytest.raises(ValueError, match="-1 is not a card mask"):
        cards_of(-1)
    with pytest.raises(ValueError, match="not a card mask"):
        format_cards(-(1 << 45))
