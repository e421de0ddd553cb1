"""protobuf <-> server domain, match settings and submitted actions: what a client asks
for, validated into a ``MatchConfig`` (every refusal names its field), and back.

One of three conversion modules (``convert.settings``, ``convert.live``,
``convert.records``): the session never builds a protobuf message and the servicer never
looks inside a rules object. Names: ``X_pb`` builds a protobuf message, ``X_from_pb``
reads one. Plain values (cards, actions, rule options) go through ``cirulla.wire``, the
implementation the bots decode with.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable

from cirulla import wire
from cirulla.rules import DeckError, Options, parse_deck
from cirulla.rules.match import check_best_of
from cirulla.server.clock import TimeControl
from cirulla.server.decisions import ByAction, ByIndex, Choice, Unreadable
from cirulla.server.documents import (
    PublicConfig,
)
from cirulla.server.errors import InvalidArgument
from cirulla.server.limits import MAX_CARD_CODE, check_text, check_time_ms
from cirulla.server.match_config import MatchConfig, public_config
from cirulla.v1 import (
    cards_pb2,
    game_pb2,
    match_settings_pb2,
    play_pb2,
    rules_pb2,
)

_POLICY = {0: "play_default_action", 1: "forfeit_game", 2: "play_default_action"}
POLICY_PB: dict[str, match_settings_pb2.TimeoutPolicy] = {
    "forfeit_game": match_settings_pb2.TIMEOUT_POLICY_FORFEIT_GAME,
    "play_default_action": match_settings_pb2.TIMEOUT_POLICY_PLAY_DEFAULT_ACTION,
}


def time_control_from_pb(tc: match_settings_pb2.TimeControl) -> TimeControl:
    """The server's TimeControl; an increment without a bank has nothing to add to, and
    no time is over a week (``limits.MAX_TIME_MS``)."""
    field = "MatchSettings.time_control"
    check_time_ms(tc.move_limit_ms, f"{field}.move_limit_ms")
    check_time_ms(tc.game_bank_ms, f"{field}.game_bank_ms")
    check_time_ms(tc.increment_ms, f"{field}.increment_ms")
    check_time_ms(tc.margin_ms, f"{field}.margin_ms")
    if tc.increment_ms and not tc.game_bank_ms:
        raise InvalidArgument(
            "MatchSettings.time_control.increment_ms: an increment is added to the game "
            "bank, so it needs game_bank_ms > 0"
        )
    return TimeControl(tc.move_limit_ms, tc.game_bank_ms, tc.increment_ms, tc.margin_ms)


#: One ``Options`` object per rule set, shared by every match that plays it (at most
#: ``_SHARED_MAX`` rule sets; more get their own object).
_SHARED_OPTIONS: dict[Options, Options] = {}
_SHARED_MAX = 256


def shared_options(options: Options) -> Options:
    """The one object of ``options``' rule set. The rules core's native calls (every
    move's legal actions and apply) keep the options they last read, by identity: with
    an object per match, 100 matches at once made them read nine attributes again at
    almost every call (docs/performance-log.md, "The match server")."""
    shared = _SHARED_OPTIONS.get(options)
    if shared is None:
        if len(_SHARED_OPTIONS) >= _SHARED_MAX:
            return options
        shared = _SHARED_OPTIONS[options] = options
    return shared


@functools.lru_cache(maxsize=1024)
def _card(suit: cards_pb2.Suit, rank: cards_pb2.Rank, code: str) -> int:
    """A card's number, once per spelling (``wire.card_from_proto``)."""
    return wire.card_from_proto(cards_pb2.Card(suit=suit, rank=rank, code=code))


def deck_from_pb(deck: match_settings_pb2.DeckOrder, field: str) -> list[int]:
    """A deck order's cards; an unreadable card is named by ``wire.cards_from_proto``.
    Its field name is only made for an error: one per card (42,000 in a 255 KB
    CreateMatch) was most of the decoding, and scattered the heap with short-lived
    strings among the matches' long-lived objects."""
    try:
        return [_card(c.suit, c.rank, c.code) for c in deck.cards]
    except wire.WireError:
        return wire.cards_from_proto(deck.cards, field)  # raises, naming the card


def config_from_pb(settings: match_settings_pb2.MatchSettings) -> MatchConfig:
    """Validate and resolve requested settings; raises WireError/DeckError/InvalidArgument."""
    preset, overrides, options = wire.rules_from_proto(settings.rules, "MatchSettings.rules")
    options = shared_options(options)
    decks = None
    seed = None
    source = settings.WhichOneof("deck_source")
    if source == "seed":
        seed = settings.seed
    elif source == "deck_orders":
        field = "MatchSettings.deck_orders.decks"
        packed = []
        for i, deck in enumerate(settings.deck_orders.decks):
            check_codes(deck.cards, f"{field}[{i}].cards")
            try:
                packed.append(bytes(parse_deck(deck_from_pb(deck, f"{field}[{i}].cards"))))
            except DeckError as exc:
                raise InvalidArgument(f"{field}[{i}]: {exc}") from None
        if not packed:
            raise InvalidArgument(f"{field}: deck_orders is set but lists no deck")
        # 40 bytes a deck, the one copy the match's DeckSource holds too (a list of 40
        # ints a deck, twice, made 1,050 decks cost the server ~680 KB)
        decks = b"".join(packed)
    first_dealer = settings.first_dealer if settings.HasField("first_dealer") else None
    if first_dealer is not None and first_dealer >= options.players:
        raise InvalidArgument(
            f"MatchSettings.first_dealer: {first_dealer} is not a seat 0..{options.players - 1}"
        )
    check_best_of(settings.best_of or 1)
    policy = _POLICY.get(settings.timeout_policy)
    if policy is None:
        raise InvalidArgument(f"MatchSettings.timeout_policy: {settings.timeout_policy} is unknown")
    return MatchConfig(
        options=options,
        preset=preset,
        overrides=overrides,
        best_of=settings.best_of or 1,
        time=time_control_from_pb(settings.time_control),
        timeout_policy=policy,
        seed=seed,
        decks=decks,
        first_dealer=first_dealer,
        disconnect_grace_ms=check_time_ms(
            settings.disconnect_grace_ms, "MatchSettings.disconnect_grace_ms"
        ),
    )


def check_code(card: cards_pb2.Card, field: str) -> None:
    """``card.code`` at most ``MAX_CARD_CODE`` characters, before a decoder quotes an
    unknown code in its error (a 200,000-character code came back whole)."""
    check_text(card.code, f"{field}.code", MAX_CARD_CODE)


def check_codes(cards: Iterable[cards_pb2.Card], field: str) -> None:
    """``check_code`` of each of ``cards`` (``field[i]``), the field named only for an
    offender (a name per card was half the decoding of 42,000 cards)."""
    for i, card in enumerate(cards):
        if len(card.code) > MAX_CARD_CODE:
            check_code(card, f"{field}[{i}]")


def settings_pb(config: PublicConfig | MatchConfig) -> match_settings_pb2.MatchSettings:
    """Public settings (deck source always cleared) from a MatchConfig or its public dict."""
    if isinstance(config, MatchConfig):
        config = public_config(config)
    out = match_settings_pb2.MatchSettings(
        rules=wire.rules_to_proto(config["preset"], config["overrides"]),
        effective_rules=rules_pb2.RuleOptions(**config["options"]),
        best_of=config["best_of"],
        time_control=match_settings_pb2.TimeControl(
            move_limit_ms=config["move_limit_ms"],
            game_bank_ms=config["game_bank_ms"],
            # Records saved before the increment and margin existed have neither.
            increment_ms=config.get("increment_ms", 0),
            margin_ms=config.get("margin_ms", 0),
        ),
        timeout_policy=POLICY_PB[config["timeout_policy"]],
        disconnect_grace_ms=config["disconnect_grace_ms"],
    )
    first_dealer = config.get("first_dealer")
    if first_dealer is not None:
        out.first_dealer = first_dealer
    return out


# ---------------------------------------------------------------------- actions


@functools.lru_cache(maxsize=8192)
def legal_parts(code: int) -> tuple[game_pb2.Action, str]:
    """Wire action and notation of a code (shared; every decision lists a few codes)."""
    return wire.action_to_proto(code), wire.notation(code)


def choice_from_pb(submit: play_pb2.SubmitAction) -> Choice:
    """The index or the action chosen; ``Unreadable`` when it cannot be decoded or no
    choice is set (the session rejects it as INVALID)."""
    kind = submit.WhichOneof("choice")
    try:
        if kind == "legal_action_index":
            return ByIndex(submit.legal_action_index)
        if kind == "action":
            action = submit.action
            check_code(action.card, "SubmitAction.action.card")
            check_codes(action.captures, "SubmitAction.action.captures")
            return ByAction(wire.action_from_proto(action, "SubmitAction.action"))
        if kind == "notation":
            return ByAction(wire.parse_notation(submit.notation, "SubmitAction.notation"))
    except (ValueError, InvalidArgument) as exc:
        return Unreadable(str(exc), rule="")
    return Unreadable(
        "SubmitAction.choice is empty: set legal_action_index, action or notation", rule="choice"
    )
