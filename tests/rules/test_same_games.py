"""The rules core plays the same games after every speed change: fingerprints recorded
before the change.

Each case plays seeded random games and hashes every step (the chosen action, how many
were legal, the events) into one digest. The digests below were produced by the core as
it was before the fast paths (legal moves cached per state, interned actions, the
incremental table sums of the native loop) and are committed as they came out: a core
that plays a single different move, offers one action more or less, or scores a deal
differently changes its digest and fails here. ``python -m tests.rules.test_same_games``
prints the digests of the running core (to record them again only after a deliberate rule
change, which docs/rules.md would say).
"""

from __future__ import annotations

import hashlib
import json
import random

import pytest

from cirulla.rules import Game, Options
from cirulla.rules.core import native, options_tuple

#: (preset, players, deals) -> (digest, actions) of ``_native.random_deals_digest``, seed 1:
#: the benchmark's own native loop (``cirulla bench rules``, ``cores.native``).
NATIVE_LOOP = {
    ("standard", 2, 3000): (15250423777458574789, 108000),
    ("standard", 3, 1000): (3006034589574413793, 36000),
    ("standard", 4, 1000): (17990543173021831927, 36000),
    ("genova-home", 2, 3000): (3541663936398725667, 108000),
    ("fantacarte", 2, 1000): (16534235737679103660, 36000),
    ("wide", 3, 3000): (7475876211349531549, 108000),
}

#: (preset, players, games) -> sha256 of the Python API's games (``_api_digest``).
API_GAMES = {
    ("standard", 2, 4): "4f7c969325596e49f5a0601fe97c2bdebfa94eb987872f8f7c720b133e7f9db5",
    ("genova-home", 4, 2): "092359d656c8ae7415343dbf1e1dc14dd5e5f4e94983d577f241a4e1294012e2",
    ("fantacarte", 2, 2): "220ffafd6a203972f9fc620f8270e47e29be752f0f1c48c6570d6a04c41f85c4",
    ("wide", 3, 2): "e79d52b8997e2790cd6ed9ce8f657e42d8b1877d2fb950cf23a5cb9083724445",
}

OVERRIDES = {"wide": {"must_capture": False, "pairing_precedence": True, "players": 3}}


def _options(preset: str, players: int) -> Options:
    if preset in OVERRIDES:
        return Options(**OVERRIDES[preset])
    return Options.preset(preset, players=players)


def _api_digest(options: Options, games: int, seed: int, *, codes: bool) -> str:
    """Seeded random games through ``Game``: ``codes`` plays ``legal_codes``/``apply_code``
    (the search path, events collected), else ``legal_actions``/``apply`` (the API)."""
    rng = random.Random(seed)
    h = hashlib.sha256()
    for _ in range(games):
        game = Game(options, seed=rng.getrandbits(32))
        while game.winner is None:
            if codes:
                legal_codes = game.legal_codes()
                code = legal_codes[rng.randrange(len(legal_codes))]
                events: list = []
                game.apply_code(code, events)
                h.update(f"{code}/{len(legal_codes)}".encode())
            else:
                legal = game.legal_actions()
                action = legal[rng.randrange(len(legal))]
                events = game.apply(action, game.turn)
                h.update(f"{action.to_int()}/{len(legal)}".encode())
            for event in events:
                h.update(json.dumps(event.to_dict(), sort_keys=True).encode())
        h.update(f"|{game.winner}:{game.totals}:{game.cappotto}|".encode())
    return h.hexdigest()


@pytest.mark.parametrize("listed", [False, True], ids=["counted", "listed"])
@pytest.mark.parametrize(("preset", "players", "deals"), list(NATIVE_LOOP))
def test_the_native_loop_plays_the_recorded_games(
    preset: str, players: int, deals: int, listed: bool
) -> None:
    """Both picks, the code drawn built alone (``random_code``) and the code drawn from the
    whole list of legal codes (``legal_codes``), play the recorded games."""
    assert native is not None
    got = native.random_deals_digest(options_tuple(_options(preset, players)), deals, 1, listed)
    assert got == NATIVE_LOOP[preset, players, deals]


def test_a_different_game_changes_the_native_digest() -> None:
    """The fingerprint sees a change: another seed, or one deal fewer, is another digest."""
    assert native is not None
    opts = options_tuple(_options("standard", 2))
    recorded = NATIVE_LOOP["standard", 2, 3000]
    assert native.random_deals_digest(opts, 3000, 2) != recorded
    assert native.random_deals_digest(opts, 2999, 1)[0] != recorded[0]


@pytest.mark.parametrize("codes", [False, True], ids=["legal_actions+apply", "codes"])
@pytest.mark.parametrize(("preset", "players", "games"), list(API_GAMES))
def test_the_python_api_plays_the_recorded_games(
    preset: str, players: int, games: int, codes: bool
) -> None:
    options = _options(preset, players)
    assert _api_digest(options, games, 7, codes=codes) == API_GAMES[preset, players, games]


def record() -> None:
    """Print the digests of the running core, in the tables' format."""
    for preset, players, deals in NATIVE_LOOP:
        opts = options_tuple(_options(preset, players))
        print((preset, players, deals), native.random_deals_digest(opts, deals, 1))
    for preset, players, games in API_GAMES:
        options = _options(preset, players)
        api = _api_digest(options, games, 7, codes=False)
        assert api == _api_digest(options, games, 7, codes=True)
        print((preset, players, games), api)


if __name__ == "__main__":
    record()
