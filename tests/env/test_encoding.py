"""The fixed encoding: its layout, and the action index <-> rules action code mapping,
checked against the rules core's legal actions on every step of random games."""

from __future__ import annotations

import random

import numpy as np
import pytest

import cirulla.rules.encoding as enc
from cirulla.env.vector import SplitmixDecks
from cirulla.rules.cards import parse_mask
from cirulla.rules.game import Game
from cirulla.rules.options import Options

CONFIGS = [
    (2, "standard", {}),
    (3, "standard", {}),
    (4, "standard", {}),
    (2, "fantacarte", {}),
    (3, "genova-home", {}),
    (4, "standard", {"pairing_precedence": True, "ace_sweep_scopa": False}),
]


def random_games(options: Options, games: int, seed: int):
    """Every position (game, legal codes) of ``games`` random-policy games."""
    rng = random.Random(seed)
    for g in range(games):
        game = Game(options, deck_source=SplitmixDecks(seed * 1000 + g))
        while game.to_move is not None:
            codes = game.legal_codes()
            yield game, codes
            game.apply_code(codes[rng.randrange(len(codes))])


def test_layout_is_contiguous_and_documented() -> None:
    at = 0
    for name, (offset, length) in enc.OBS_FIELDS.items():
        assert offset == at, name
        assert f"\n{name} " in enc.__doc__  # every field has its row in the docstring table
        at += length
    assert at == enc.OBS_SIZE == 451
    assert enc.NUM_ACTIONS == 12 * 3 * 64
    assert sum(n for _, n in enc.FEATURE_FIELDS.values()) == enc.FEATURE_SIZE


@pytest.mark.parametrize(("players", "preset", "rules"), CONFIGS)
def test_mask_is_exactly_the_legal_actions(players: int, preset: str, rules: dict) -> None:
    """On every step: one distinct index per legal code, the mask marks exactly those, and
    index -> code -> index round-trips; illegal indices are refused."""
    options = Options.preset(preset, players=players, **rules)
    positions = 0
    for game, codes in random_games(options, 12, seed=players):
        legal = enc.legal_actions(game)
        assert list(legal.codes) == codes
        if options.must_capture:
            assert legal.overflow == 0
        fixed = [i for i in legal.indices if i >= 0]
        assert len(set(fixed)) == len(fixed)
        mask = legal.mask()
        assert mask.dtype == np.uint8 and mask.shape == (enc.NUM_ACTIONS,)
        assert int(mask.sum()) == len(fixed) == len(codes) - legal.overflow
        for code, index in zip(legal.codes, legal.indices, strict=True):
            if index >= 0:
                assert legal.code_of(index) == code
        illegal = int(np.flatnonzero(mask == 0)[0])
        with pytest.raises(ValueError, match=f"action index {illegal} is not legal"):
            legal.code_of(illegal)
        positions += 1
    assert positions > 200


def test_index_fields_decode_to_the_action() -> None:
    """The index's variant, slot and rank name the declaration, the card and the capture."""
    hand = parse_mask("7H 2C 3S")  # card indices 25, 6, 11: 7H is slot 2, 2C slot 0
    low, named3 = 1 << 4, 1 << 4 | 3
    codes = [6, 25, 25 | low << 6, 25 | named3 << 6, 25 | named3 << 6 | 1 << 12]
    indices = enc.index_actions(codes, hand).indices
    assert indices == (
        (0 * 3 + 0) * 64,  # 2C, no declaration
        (0 * 3 + 2) * 64,  # 7H
        (1 * 3 + 2) * 64,  # a declaration not naming 7H: variant 1
        ((1 + 3) * 3 + 2) * 64,  # naming 7H a 3: variant 4
        ((1 + 3) * 3 + 2) * 64 + 1,  # the same card and declaration's second alternative
    )


def test_features_describe_the_action() -> None:
    table = parse_mask("2C 3S")
    code = parse_mask("5H").bit_length() - 1 | table << 12
    f = enc.action_features(code, table)
    card_at, _ = enc.FEATURE_FIELDS["card"]
    cap_at, _ = enc.FEATURE_FIELDS["captured"]
    extra, _ = enc.FEATURE_FIELDS["extra"]
    assert f[card_at + (code & 63)] == 1 and f[card_at : card_at + 40].sum() == 1
    assert f[cap_at : cap_at + 40].sum() == 2
    assert list(f[extra : extra + 2]) == [2, 1]  # two cards taken, the table cleared


def test_legal_features_cover_every_legal_action() -> None:
    options = Options()
    for game, codes in random_games(options, 2, seed=9):
        actions, feats = enc.legal_features(game)
        assert feats.shape == (len(codes), enc.FEATURE_SIZE)
        card_at, _ = enc.FEATURE_FIELDS["card"]
        played = feats[:, card_at : card_at + 40].argmax(axis=1)
        assert list(played) == [c & 63 for c in actions.codes]


def test_observation_fields_hold_the_view() -> None:
    options = Options(players=3)
    for game, _ in random_games(options, 1, seed=4):
        for seat in range(3):
            obs = enc.observe(game, seat)
            h, _ = enc.OBS_FIELDS["hand"]
            assert {int(c) for c in np.flatnonzero(obs[h : h + 40])} == {
                c for c in range(40) if game.hands[seat] >> c & 1
            }
            sizes, _ = enc.OBS_FIELDS["hand_sizes"]
            assert obs[sizes] == game.hands[seat].bit_count()
            assert obs[enc.OBS_FIELDS["stock"][0]] == len(game.stock)
            move = enc.OBS_FIELDS["to_move"][0]
            assert obs[move + (game.turn - seat) % 3] == 1


def test_the_old_module_name_gives_the_same_encoding() -> None:
    """``cirulla.env.encoding`` (the published examples import it) re-exports the encoding
    of ``cirulla.rules.encoding``: the very objects, every public function, class and
    constant of it."""
    import cirulla.env.encoding as old

    public = {
        name
        for name, value in vars(enc).items()
        if not name.startswith("_")
        and (name.isupper() or getattr(value, "__module__", None) == enc.__name__)
    }
    assert set(old.__all__) >= public - {"NUM_CARDS"}  # the cards' count is the rules'
    for name in old.__all__:
        assert getattr(old, name) is getattr(enc, name), name
