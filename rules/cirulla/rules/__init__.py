"""The Cirulla rules core: cards, options, actions, the game state machine, views.

Pure Python with no gRPC or protobuf imports, so the server, the bots and third-party
tools share one implementation of the rules.
"""

from cirulla.rules.actions import Action, Declaration, DeclarationKind, declaration_codes
from cirulla.rules.captures import legal_captures
from cirulla.rules.cards import (
    CARD_NAMES,
    SETTEBELLO,
    WILD,
    CardSet,
    card_name,
    card_suit,
    card_value,
    cards_of,
    format_cards,
    mask_of,
    parse_card,
    parse_cards,
    parse_mask,
)
from cirulla.rules.decks import DeckSource, parse_deck
from cirulla.rules.errors import (
    CardError,
    CirullaError,
    DeckError,
    IllegalActionError,
    InvalidActionError,
    OptionError,
)
from cirulla.rules.events import Event
from cirulla.rules.game import Game, dealer_bonus
from cirulla.rules.match import Match, MatchOver
from cirulla.rules.options import PRESETS, Options, parse_overrides
from cirulla.rules.scoring import DealScore, SideScore, score_deal
from cirulla.rules.views import View, sample_world, view_of

__all__ = [
    "CARD_NAMES",
    "PRESETS",
    "SETTEBELLO",
    "WILD",
    "Action",
    "CardError",
    "CardSet",
    "CirullaError",
    "DealScore",
    "DeckError",
    "DeckSource",
    "Declaration",
    "DeclarationKind",
    "Event",
    "Game",
    "IllegalActionError",
    "InvalidActionError",
    "Match",
    "MatchOver",
    "OptionError",
    "Options",
    "SideScore",
    "View",
    "card_name",
    "card_suit",
    "card_value",
    "cards_of",
    "dealer_bonus",
    "declaration_codes",
    "format_cards",
    "legal_captures",
    "mask_of",
    "parse_card",
    "parse_cards",
    "parse_deck",
    "parse_mask",
    "parse_overrides",
    "sample_world",
    "score_deal",
    "view_of",
]
