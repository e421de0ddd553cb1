"""What a person at the table (or watching it) sees, folded from protocol messages.

The public part of the screen is the latest ``View`` the server sent, with every later
public event folded onto it (``fold``: the server sends no View after a deal's or the
game's last move, so the board would otherwise be one play behind there); the player
adds only its own hand and open decision from its Play stream. Each event becomes one short log
line. Rendering is plain text with Rich markup, shared by ``cirulla play`` and
``cirulla watch``.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field

from rich.markup import escape

from cirulla.clients.play.fold import fold_event, new_deal_view
from cirulla.server.records import score_line
from cirulla.v1 import cards_pb2, events_pb2, game_pb2, match_pb2, play_pb2

DECLARATIONS = {
    game_pb2.DECLARATION_KIND_LOW_HAND: "low hand",
    game_pb2.DECLARATION_KIND_THREE_OF_A_KIND: "three of a kind",
}
_REASONS = {1: "target reached", 2: "cappotto", 3: "forfeit", 4: "aborted"}
_RED = {cards_pb2.SUIT_HEARTS, cards_pb2.SUIT_DIAMONDS}


def card(c: cards_pb2.Card, markup: bool = True) -> str:
    if not markup:
        return c.code
    return f"[bold red]{c.code}[/]" if c.suit in _RED else f"[bold]{c.code}[/]"


def cards(cs: Iterable[cards_pb2.Card], markup: bool = True, empty: str = "-") -> str:
    text = " ".join(card(c, markup) for c in cs)
    return text or empty


@dataclass
class TableState:
    """Everything the screen shows; ``seat`` is None for a spectator."""

    seat: int | None = None
    match_id: str = ""
    names: dict[int, str] = field(default_factory=dict)
    sides: dict[int, int] = field(default_factory=dict)
    players: int = 2
    game_number: int = 0
    best_of: int = 1
    games_won: list[int] = field(default_factory=list)
    view: game_pb2.View | None = None
    hand: list[cards_pb2.Card] = field(default_factory=list)
    decision: play_pb2.DecisionRequest | None = None
    deal_results: list[events_pb2.DealResult] = field(default_factory=list)
    game_result: events_pb2.GameResult | None = None
    totals: list[int] = field(default_factory=list)  # game totals after the last deal
    last_take: events_pb2.LastTake | None = None  # the last finished deal's
    match_result: match_pb2.MatchResult | None = None
    goodbye: str = ""
    log: deque[str] = field(default_factory=lambda: deque(maxlen=200))

    # ------------------------------------------------------------------ folding

    def seat_name(self, seat: int) -> str:
        """Markup naming ``seat``: its name is the player's own text (``[/x]`` in it would
        end a style the screen opened, or fail to parse), so it is escaped."""
        name = escape(self.names.get(seat, ""))
        me = " (you)" if seat == self.seat else ""
        return f"seat {seat} {name}{me}".rstrip() if name else f"seat {seat}{me}"

    def side_name(self, side: int) -> str:
        seats = [s for s, sd in sorted(self.sides.items()) if sd == side]
        who = ", ".join(self.seat_name(s) for s in seats)
        return f"side {side} ({who})" if who else f"side {side}"

    def on_seats(self, seats: Iterable[match_pb2.SeatInfo]) -> None:
        for s in seats:
            if s.name:
                self.names[s.seat] = s.name
            self.sides[s.seat] = s.side
        self.players = max(self.players, len(self.sides))

    def on_welcome(self, w: play_pb2.Welcome) -> None:
        self.match_id = w.match_id
        if w.HasField("seat"):
            self.seat = w.seat
        self.on_seats(w.seats)
        self.best_of = max(1, w.settings.best_of)

    def on_new_game(self, g: play_pb2.NewGame) -> None:
        self.game_number = g.game_number
        self.games_won = list(g.games_won)
        self.best_of = max(1, g.best_of)
        self.players = g.rules.players or self.players
        self.on_seats(g.seats)
        self.deal_results.clear()
        self.game_result = None
        self.totals = []
        self.log.append(f"[b]Game {g.game_number}[/b] starts; dealer {self.seat_name(g.dealer)}")

    def on_view(self, v: game_pb2.View) -> None:
        """A spectator view replaces the public part; a seat view also gives the hand."""
        if self.view is not None and v.event_sequence < self.view.event_sequence:
            return  # an older snapshot (the other stream lags): keep the newer one
        self.view = game_pb2.View()
        self.view.CopyFrom(v)  # a copy: events are folded onto it
        self.view.ClearField("hand")  # the hand is ``self.hand``
        self.players = v.players or self.players
        for s in v.seats:
            if s.name:
                self.names[s.seat] = s.name
            self.sides[s.seat] = s.side
        if v.HasField("seat") and v.seat == self.seat:
            self.hand = list(v.hand)

    def on_decision(self, d: play_pb2.DecisionRequest) -> None:
        self.decision = d
        self.on_view(d.view)

    def side_of(self, seat: int) -> int:
        return self.sides.get(seat, seat % 2 if self.players == 4 else seat)

    def fold(self, e: events_pb2.Event) -> None:
        """Bring the board to the position after ``e`` (unless a View already shows it)."""
        v = self.view
        if v is not None and e.sequence <= v.event_sequence:
            return
        if e.WhichOneof("body") == "deal_started":
            names = lambda seat: self.names.get(seat, "")  # noqa: E731
            self.view = new_deal_view(e, self.players, self.side_of, names, self.totals, v)
        elif v is not None:
            fold_event(v, e)

    def on_event(self, e: events_pb2.Event) -> None:
        kind = e.WhichOneof("body")
        line = self.describe(e)
        self.fold(e)
        if kind == "hand_dealt" and e.hand_dealt.seat == self.seat:
            self.hand = list(e.hand_dealt.cards)
        elif kind == "card_played" and e.card_played.seat == self.seat:
            code = e.card_played.card.code
            self.hand = [c for c in self.hand if c.code != code]
        elif kind == "last_take":
            self.last_take = e.last_take
        elif kind == "deal_scored":
            self.deal_results.append(e.deal_scored)
            self.totals = list(e.deal_scored.totals)
        elif kind == "game_over":
            self.game_result = e.game_over
            self.games_won = list(e.game_over.games_won)
        if line:
            self.log.append(line)

    def on_match_result(self, r: match_pb2.MatchResult) -> None:
        self.match_result = r
        won = "-".join(str(n) for n in r.games_won)
        if r.HasField("winner_side"):
            self.log.append(f"[b]Match over[/b]: {self.side_name(r.winner_side)} wins ({won})")
        else:
            self.log.append(f"[b]Match over[/b]: no winner ({won})")

    def on_goodbye(self, g: play_pb2.Goodbye) -> None:
        self.goodbye = g.message or play_pb2.GoodbyeReason.Name(g.reason)
        self.decision = None

    def describe(self, e: events_pb2.Event) -> str:
        """One log line per event (empty for ones the screen shows anyway)."""
        kind = e.WhichOneof("body")
        if kind == "deal_started":
            d = e.deal_started
            return (
                f"[b]Deal {d.deal_number}[/b], dealer {self.seat_name(d.dealer)}; "
                f"table {cards(d.table)}"
            )
        if kind == "redeal":
            return f"Redeal (attempt {e.redeal.attempt}): table {cards(e.redeal.table)}"
        if kind == "hand_dealt":
            if e.hand_dealt.seat == self.seat:
                return f"Your hand: {cards(e.hand_dealt.cards)}"
            return ""
        if kind == "round_dealt":
            return f"Round {e.round_dealt.round} dealt; {e.round_dealt.stock_count} cards left"
        if kind == "dealer_bonus":
            b = e.dealer_bonus
            return (
                f"Dealer's bonus: {self.seat_name(b.dealer)} takes {cards(b.cards)} "
                f"(+{b.scope} scope)"
            )
        if kind == "declaration":
            declared = e.declaration
            wild = (
                f", 7H counted as {declared.wild_value}" if declared.HasField("wild_value") else ""
            )
            return (
                f"{self.seat_name(declared.seat)} declares "
                f"{DECLARATIONS.get(declared.kind, '?')} {cards(declared.cards)}{wild}: "
                f"+{declared.scope} scope"
            )
        if kind == "card_played":
            p = e.card_played
            wild = f" (as {p.wild_value})" if p.HasField("wild_value") else ""
            what = f"takes {cards(p.captured)}" if p.captured else "lays it on the table"
            extra = ""
            if p.ace_sweep:
                extra += " [b yellow]ACE SWEEP[/]"
            if p.scopa:
                extra += " [b yellow]SCOPA![/]"
            if p.by_timeout:
                extra += " (out of time: default action)"
            return f"{self.seat_name(p.seat)} plays {card(p.card)}{wild}, {what}{extra}"
        if kind == "last_take":
            lt = e.last_take
            if lt.HasField("side") and lt.cards:
                return f"Last take: {self.side_name(lt.side)} gets {cards(lt.cards)}"
            return ""
        if kind == "deal_scored":
            r = e.deal_scored
            totals = " - ".join(str(t) for t in r.totals)
            return f"[b]Deal {r.deal_number} scored[/b]: game {totals}"
        if kind == "game_over":
            g = e.game_over
            totals = " - ".join(str(t) for t in g.totals)
            reason = _REASONS.get(g.reason, "")
            if g.HasField("winner_side"):
                return f"[b]Game over[/b]: {self.side_name(g.winner_side)} wins {totals} ({reason})"
            return f"[b]Game over[/b]: no winner {totals} ({reason})"
        if kind == "timeout":
            return f"{self.seat_name(e.timeout.seat)} ran out of time"
        if kind == "player_disconnected":
            return f"{self.seat_name(e.player_disconnected.seat)} disconnected"
        if kind == "player_reconnected":
            return f"{self.seat_name(e.player_reconnected.seat)} is back"
        return ""

    # ------------------------------------------------------------------ rendering

    def status_text(self, clock_s: float | None = None) -> str:
        v = self.view
        parts = [f"match {self.match_id}" if self.match_id else "waiting for the match"]
        if self.game_number:
            won = "-".join(str(n) for n in self.games_won) or "0-0"
            parts.append(f"game {self.game_number} of best of {self.best_of} (won {won})")
        if v is not None:
            parts.append(f"deal {v.deal_number}, round {v.round}")
            parts.append(f"dealer {self.seat_name(v.dealer)}")
        turn = self.turn_text()
        if turn:
            parts.append(turn)
        if clock_s is not None:
            parts.append(f"your clock {clock_s:.0f}s")
        return " · ".join(parts)

    def turn_text(self) -> str:
        if self.match_result is not None or self.goodbye:
            return "[b]the match is over[/b]"
        v = self.view
        if v is None or not v.HasField("to_move"):
            return ""
        if v.to_move == self.seat:
            return "[b reverse] your turn [/]"
        return f"to move: {self.seat_name(v.to_move)}"

    def table_text(self) -> str:
        v = self.view
        if v is None:
            return "Waiting for every seat to join..."
        lines = [f"Table:  {cards(v.table, empty='(empty)')}"]
        wild = (
            f"7H is counted as {v.wild_value}"
            if v.HasField("wild_value")
            else "7H (wild) has no named value"
        )
        lines.append(f"Stock:  {v.stock_count} cards    {wild}")
        if v.HasField("last_taker_side"):
            lines.append(f"Last to capture: {self.side_name(v.last_taker_side)}")
        return "\n".join(lines)

    def sides_text(self) -> str:
        v = self.view
        if v is None:
            return ""
        lines = []
        for s in v.sides:
            coins = sum(1 for c in s.captured if c.suit == cards_pb2.SUIT_DIAMONDS)
            lines.append(
                f"[b]{self.side_name(s.side)}[/b]: game {s.game_total} · "
                f"scope {s.scope} · took {len(s.captured)} cards ({coins} coins)"
            )
            lines.append(f"   {cards(s.captured, empty='(nothing yet)')}")
        for st in v.seats:
            info = f"{self.seat_name(st.seat)}: {st.hand_count} in hand"
            if st.declared_cards:
                info += f", declared {cards(st.declared_cards)}"
            if not st.connected:
                info += " (not connected)"
            lines.append(info)
        return "\n".join(lines)

    def hand_text(self) -> str:
        if self.seat is None:
            return ""
        return f"Your hand:  {cards(self.hand, empty='(empty)')}"

    def scores_text(self) -> str:
        """The last deal's breakdown, and the game result once there is one."""
        if not self.deal_results:
            return ""
        r = self.deal_results[-1]
        lines = [f"[b]Deal {r.deal_number} score[/b]"]
        for s in r.scores:
            cap = " CAPPOTTO" if s.cappotto else ""
            lines.append(
                f"  {self.side_name(s.side)}: {s.card_count} cards taken, {s.coin_count} "
                f"coins; {score_line(s)} (game {s.game_total}){cap}"
            )
        lt = self.last_take
        if lt is not None and lt.HasField("side") and lt.cards:
            lines.append(f"  the last take: {self.side_name(lt.side)} got {cards(lt.cards)}")
        if self.game_result is not None:
            g = self.game_result
            totals = " - ".join(str(t) for t in g.totals)
            who = (
                f"{self.side_name(g.winner_side)} wins"
                if g.HasField("winner_side")
                else "no winner"
            )
            lines.append(f"[b]Game {g.game_number} over: {who}, {totals}[/b]")
        return "\n".join(lines)
