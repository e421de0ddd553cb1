"""A match's settings, once validated (``convert`` builds them from the request), and the
part of them anyone may see."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from cirulla.rules import Options
from cirulla.rules.options import OptionValue
from cirulla.server.clock import TimeControl
from cirulla.server.documents import PublicConfig

POLICIES = ("play_default_action", "forfeit_game")


@dataclass
class MatchConfig:
    """Settings of a match, already validated (``convert`` builds it from the request)."""

    options: Options
    preset: str = "standard"
    overrides: dict[str, OptionValue] = field(default_factory=dict)
    best_of: int = 1
    time: TimeControl = field(default_factory=TimeControl)
    timeout_policy: str = "play_default_action"
    seed: int | None = None
    #: explicit deck orders, 40 bytes a deck in order (``cirulla.rules.decks.pack_decks``)
    decks: bytes | None = None
    first_dealer: int | None = None
    disconnect_grace_ms: int = 0  # 0 = the server default


@functools.lru_cache(maxsize=256)
def _options_doc(options: Options) -> dict[str, OptionValue]:
    """``options.to_dict()`` (a deep copy through ``dataclasses.asdict``), once per rule
    set: a match's summary carries it, and is built at every change of the match."""
    return options.to_dict()


def options_doc(options: Options) -> dict[str, OptionValue]:
    """``options.to_dict()``: a fresh dict of the options' plain values."""
    return dict(_options_doc(options))


def public_config(config: MatchConfig) -> PublicConfig:
    """The settings anyone may see: the deck source (seed, decks) is left out."""
    return {
        "preset": config.preset,
        "overrides": dict(config.overrides),
        "options": options_doc(config.options),
        "best_of": config.best_of,
        "move_limit_ms": config.time.move_limit_ms,
        "game_bank_ms": config.time.game_bank_ms,
        "increment_ms": config.time.increment_ms,
        "margin_ms": config.time.margin_ms,
        "timeout_policy": config.timeout_policy,
        "first_dealer": config.first_dealer,
        "disconnect_grace_ms": config.disconnect_grace_ms,
    }
