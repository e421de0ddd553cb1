"""The text engine protocol's lines (docs/text-protocol.md): one definition of each form.

Both ends use this module: the bridge (``cirulla bot text``) writes rules, events, hands,
states and legal-action lists; the built-in engine (``cirulla engine``) and the checker
read them back. Cards are the rules core's names (``7D``), lists are comma-separated
(``-`` for none), per-seat or per-side lists are separated by ``/``, and every field is a
``key=value`` token, so a line splits on spaces.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields

from cirulla.bots.text.violations import quote
from cirulla.rules.actions import Action, DeclarationKind
from cirulla.rules.cards import names_of, parse_mask
from cirulla.rules.errors import CirullaError
from cirulla.rules.options import Options
from cirulla.rules.views import View
from cirulla.v1 import events_pb2
from cirulla.wire import GAME_END_REASON_NAMES, WireError, mask_from_proto, parse_notation

#: The protocol version an engine answers to ``protocol_version``; the major number must
#: match (the same rule as the gRPC protocol's, ``cirulla.protocol_compatible``).
TEXT_PROTOCOL_VERSION = "1"

#: Commands every engine must know (answer ``=`` to), in the order of a session.
ADMIN_COMMANDS = ("protocol_version", "name", "version", "known_command", "list_commands", "quit")
GAME_COMMANDS = ("rules", "newgame", "event", "hand", "state", "genmove")
REQUIRED_COMMANDS = ADMIN_COMMANDS + GAME_COMMANDS

NONE = "-"


class TextProtocolError(ValueError):
    """A line that does not follow the text protocol; the message says what is wrong."""


# ---------------------------------------------------------------------- cards and lists


def cards_text(mask: int) -> str:
    """``3C,4D`` (rules-core order), ``-`` for no card."""
    return ",".join(names_of(mask)) or NONE


def cards_mask(text: str, field: str) -> int:
    if text == NONE or text == "":
        return 0
    try:
        return parse_mask(text.split(","))
    except CirullaError as exc:
        raise TextProtocolError(f"{field}: {exc}") from None


def ints_text(values: Iterable[int]) -> str:
    return ",".join(str(v) for v in values)


def ints_parse(text: str, field: str) -> tuple[int, ...]:
    try:
        return tuple(int(v) for v in text.split(","))
    except ValueError:
        raise TextProtocolError(
            f"{field}: expected comma-separated integers, not {text!r}"
        ) from None


def opt_text(value: int | None) -> str:
    return NONE if value is None else str(value)


def opt_parse(text: str, field: str) -> int | None:
    if text == NONE:
        return None
    try:
        return int(text)
    except ValueError:
        raise TextProtocolError(f"{field}: expected an integer or '-', not {text!r}") from None


def fields_of(tokens: Iterable[str], line: str) -> dict[str, str]:
    """``["a=1", "b=x"]`` -> ``{"a": "1", "b": "x"}``; a token without ``=`` is an error."""
    out: dict[str, str] = {}
    for token in tokens:
        key, sep, value = token.partition("=")
        if not sep or not key:
            raise TextProtocolError(f"expected key=value, got {token!r} in {line!r}")
        out[key] = value
    return out


def _need(values: dict[str, str], key: str, line: str) -> str:
    if key not in values:
        raise TextProtocolError(f"missing {key}= in {line!r}")
    return values[key]


# ---------------------------------------------------------------------- rules


def rules_text(options: Options) -> str:
    """``players=2 target=51 must_capture=1 ...``: every rule option, booleans as 0/1."""
    return " ".join(f"{f.name}={int(getattr(options, f.name))}" for f in fields(Options))


def rules_parse(args: str) -> Options:
    values = fields_of(args.split(), args)
    kinds = {f.name: f.type for f in fields(Options)}
    typed: dict[str, int | bool] = {}
    for key, raw in values.items():
        if key not in kinds:
            continue  # a newer option this engine does not know: ignore it
        try:
            number = int(raw)
        except ValueError:
            raise TextProtocolError(f"rules: {key}={raw!r} is not an integer") from None
        typed[key] = bool(number) if kinds[key] in ("bool", bool) else number
    try:
        return Options(**typed)  # type: ignore[arg-type]
    except CirullaError as exc:
        raise TextProtocolError(f"rules: {exc}") from None


# ---------------------------------------------------------------------- the state line

_STATE_KEYS = (
    "seat",
    "deal",
    "dealer",
    "round",
    "to_move",
    "hand",
    "table",
    "wild",
    "sizes",
    "declared",
    "captured",
    "scope",
    "stock",
    "totals",
    "last_taker",
)


def state_text(view: View) -> str:
    """A seat's view in one line, fixed key order; nothing the seat may not see."""
    parts = {
        "seat": opt_text(view.seat),
        "deal": str(view.deal),
        "dealer": str(view.dealer),
        "round": str(view.round),
        "to_move": opt_text(view.to_move),
        "hand": cards_text(view.hand),
        "table": cards_text(view.table),
        "wild": str(view.wild_value),
        "sizes": ints_text(view.hand_sizes),
        "declared": "/".join(cards_text(m) for m in view.declared),
        "captured": "/".join(cards_text(m) for m in view.captured),
        "scope": ints_text(view.scope),
        "stock": str(view.stock),
        "totals": ints_text(view.totals),
        "last_taker": opt_text(view.last_taker),
    }
    return " ".join(f"{k}={parts[k]}" for k in _STATE_KEYS)


def state_parse(line: str, options: Options) -> View:
    """The inverse of ``state_text`` (``options`` from the ``rules`` command)."""
    v = fields_of(line.split(), line)
    for key in _STATE_KEYS:
        _need(v, key, line)
    view = View(
        seat=opt_parse(v["seat"], "seat"),
        options=options,
        deal=int(v["deal"]),
        dealer=int(v["dealer"]),
        round=int(v["round"]),
        to_move=opt_parse(v["to_move"], "to_move"),
        hand=cards_mask(v["hand"], "hand"),
        table=cards_mask(v["table"], "table"),
        wild_value=int(v["wild"]),
        hand_sizes=ints_parse(v["sizes"], "sizes"),
        declared=tuple(cards_mask(t, "declared") for t in v["declared"].split("/")),
        captured=tuple(cards_mask(t, "captured") for t in v["captured"].split("/")),
        scope=ints_parse(v["scope"], "scope"),
        stock=int(v["stock"]),
        totals=ints_parse(v["totals"], "totals"),
        last_taker=opt_parse(v["last_taker"], "last_taker"),
        winner=None,
    )
    if len(view.hand_sizes) != options.players or len(view.declared) != options.players:
        raise TextProtocolError(f"state: sizes and declared need {options.players} seats")
    if len(view.captured) != options.sides or len(view.totals) != options.sides:
        raise TextProtocolError(f"state: captured and totals need {options.sides} sides")
    return view


# ---------------------------------------------------------------------- genmove


def genmove_args(time_ms: int, legal: Sequence[Action]) -> str:
    """``1500 7H;7H:3C+4S;low:7H=1 7H:4C+KS``: milliseconds (0 = no clock), then the
    legal actions in index order, separated by ``;``."""
    return f"{time_ms} " + ";".join(str(a) for a in legal)


def genmove_parse(args: str) -> tuple[int, list[Action]]:
    head, _, rest = args.strip().partition(" ")
    try:
        time_ms = int(head)
    except ValueError:
        raise TextProtocolError(f"genmove: expected milliseconds first, not {head!r}") from None
    try:
        legal = [parse_notation(a.strip()) for a in rest.split(";")]
    except WireError as exc:
        raise TextProtocolError(f"genmove: {exc}") from None
    return time_ms, legal


@dataclass(frozen=True, slots=True)
class Choice:
    """How an engine's genmove answer reads: a legal index, or why it is not one."""

    index: int | None
    problem: str = ""
    well_formed: bool = False  # syntactically an action (the server may judge it)


def read_choice(answer: str, legal: Sequence[Action]) -> Choice:
    """An index (``2``) or an action in the notation (``low:7H=1 7H:4C+KS``)."""
    text = answer.strip()
    if re.fullmatch(r"\d+", text):
        if len(text) > 18:  # (and int() of thousands of digits is refused)
            return Choice(None, f"index {quote(text, 24)} is out of range 0..{len(legal) - 1}")
        index = int(text)
        if index < len(legal):
            return Choice(index)
        return Choice(None, f"index {index} is out of range 0..{len(legal) - 1}")
    try:
        action = parse_notation(text)
    except WireError:
        return Choice(None, f"{quote(text)} is neither an index nor an action in the notation")
    if action in legal:
        return Choice(list(legal).index(action))
    return Choice(None, f"{text} is not one of the legal actions", well_formed=True)


# ---------------------------------------------------------------------- events


def _cards(cards: Iterable[object], field: str) -> str:
    return cards_text(mask_from_proto(cards, field))  # type: ignore[arg-type]


def _opt(message: object, field: str) -> str:
    return str(getattr(message, field)) if message.HasField(field) else NONE  # type: ignore[attr-defined]


#: The declaration kinds the rules core knows, by code.
_KIND_CODES = frozenset(int(kind) for kind in DeclarationKind)


def event_text(event: events_pb2.Event) -> str | None:
    """A public event as the arguments of an ``event`` command, e.g. ``play seat=1 ...``;
    None for what has no text form (a PRIVATE hand: that is the ``hand`` command)."""
    kind = event.WhichOneof("body")
    if kind == "deal_started":
        d = event.deal_started
        return (
            f"deal deal={d.deal_number} dealer={d.dealer} table={_cards(d.table, 'table')} "
            f"sizes={ints_text(d.hand_sizes)} stock={d.stock_count}"
        )
    if kind == "redeal":
        r = event.redeal
        return (
            f"redeal deal={r.deal_number} dealer={r.dealer} table={_cards(r.table, 'table')} "
            f"attempt={r.attempt}"
        )
    if kind == "dealer_bonus":
        b = event.dealer_bonus
        return (
            f"bonus seat={b.dealer} side={b.side} cards={_cards(b.cards, 'cards')} "
            f"scope={b.scope} wild={_opt(b, 'wild_value')}"
        )
    if kind == "declaration":
        k = event.declaration
        label = DeclarationKind(k.kind).label if int(k.kind) in _KIND_CODES else str(k.kind)
        return (
            f"declare seat={k.seat} side={k.side} kind={label} "
            f"cards={_cards(k.cards, 'cards')} wild={_opt(k, 'wild_value')} scope={k.scope}"
        )
    if kind == "card_played":
        p = event.card_played
        card = _cards([p.card], "card")
        captured = _cards(p.captured, "captured")
        play = card if captured == NONE else f"{card}:{captured.replace(',', '+')}"
        return (
            f"play seat={p.seat} side={p.side} action={play} card={card} captured={captured} "
            f"scopa={int(p.scopa)} ace_sweep={int(p.ace_sweep)} wild={_opt(p, 'wild_value')} "
            f"timeout={int(p.by_timeout)}"
        )
    if kind == "round_dealt":
        n = event.round_dealt
        return f"round round={n.round} sizes={ints_text(n.hand_sizes)} stock={n.stock_count}"
    if kind == "last_take":
        t = event.last_take
        return f"lasttake side={_opt(t, 'side')} cards={_cards(t.cards, 'cards')}"
    if kind == "deal_scored":
        sc = event.deal_scored
        points = ints_text(s.total for s in sc.scores)
        return (
            f"scored deal={sc.deal_number} points={points} totals={ints_text(sc.totals)} "
            f"cappotto={_opt(sc, 'cappotto_side')}"
        )
    if kind == "game_over":
        g = event.game_over
        return (
            f"gameover game={g.game_number} winner={_opt(g, 'winner_side')} "
            f"totals={ints_text(g.totals)} reason={GAME_END_REASON_NAMES.get(g.reason, 'unknown')} "
            f"games_won={ints_text(g.games_won)}"
        )
    if kind == "timeout":
        return f"timeout seat={event.timeout.seat}"
    if kind == "player_disconnected":
        return f"disconnected seat={event.player_disconnected.seat}"
    if kind == "player_reconnected":
        return f"reconnected seat={event.player_reconnected.seat}"
    return None
