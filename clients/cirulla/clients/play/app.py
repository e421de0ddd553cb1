"""The Textual screens of ``cirulla play`` and ``cirulla watch``.

``WatchApp`` follows a match through the Spectate stream (public information only).
``PlayApp`` is a watcher that also holds a seat: its Play stream brings the own hand
and the decisions; the player picks a card, then a capture, sees what the action would
take, and confirms. Both run their gRPC streams as workers on Textual's own event loop.
"""

from __future__ import annotations

import asyncio
import time
from typing import ClassVar

import grpc
from rich.markup import escape
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Footer, OptionList, Static

from cirulla.clients.play.choices import CardChoice, capture_label, card_choices, preview
from cirulla.clients.play.table import TableState
from cirulla.clients.play.widgets import ConfirmQuit, EventLog
from cirulla.server.client import Outbox
from cirulla.v1 import events_pb2, game_pb2, match_service_pb2, match_service_pb2_grpc, play_pb2
from cirulla.version import PROTOCOL_VERSION, __version__

CSS = """
#status { height: auto; background: $boost; padding: 0 1; }
#main { height: 1fr; }
#left { width: 3fr; padding: 0 1; }
#log { width: 2fr; border-left: solid $primary; }
#table, #sides, #hand, #prompt, #scores { height: auto; margin-bottom: 1; }
#choices { height: auto; max-height: 12; }
"""


class CirullaApp(App[None]):
    """What play and watch share: the layout, the table state, the Spectate stream."""

    CSS = CSS
    #: Follow the match's Spectate stream (a seat has its own Play stream instead).
    SPECTATE = True
    BINDINGS: ClassVar[list[BindingType]] = [Binding("q", "quit", "Quit")]

    def __init__(self, server: str, match_id: str) -> None:
        super().__init__()
        self.address = server
        self.match_id = match_id
        self.table = TableState(match_id=match_id)
        self.channel: grpc.aio.Channel | None = None
        self.error_text = ""
        self.texts: dict[str, str] = {}

    def compose(self) -> ComposeResult:
        yield Static(id="status")
        with Horizontal(id="main"):
            with Vertical(id="left"):
                yield Static(id="table")
                yield Static(id="sides")
                yield Static(id="hand")
                yield Static(id="prompt")
                yield OptionList(id="choices")
                yield Static(id="scores")
            yield EventLog(id="log")
        yield Footer()

    def on_mount(self) -> None:
        self.channel = grpc.aio.insecure_channel(self.address)
        self.stub = match_service_pb2_grpc.MatchServiceStub(self.channel)
        self.query_one("#choices", OptionList).display = False
        if self.SPECTATE:
            self.run_worker(self.spectate(), name="spectate", exit_on_error=False)
        self.set_interval(1.0, self.redraw)
        self.redraw()

    async def on_unmount(self) -> None:
        if self.channel is not None:
            await self.channel.close(grace=None)

    async def spectate(self) -> None:
        request = match_service_pb2.SpectateRequest(match_id=self.match_id)
        try:
            async for msg in self.stub.Spectate(request):
                self.handle_spectate(msg)
        except grpc.aio.AioRpcError as exc:
            if exc.code() != grpc.StatusCode.CANCELLED:
                self.fail(f"watching the match failed: {exc.code().name} {exc.details()}")

    def handle_spectate(self, msg: match_service_pb2.SpectateResponse) -> None:
        kind = msg.WhichOneof("body")
        st = self.table
        if kind == "welcome":
            st.on_welcome(msg.welcome)
        elif kind == "new_game":
            st.on_new_game(msg.new_game)
        elif kind == "view":
            st.on_view(msg.view)
        elif kind == "event":
            self.take_event(msg.event)
        elif kind == "match_result":
            st.on_match_result(msg.match_result)
            self.write_log()
        elif kind == "goodbye":
            st.on_goodbye(msg.goodbye)
        self.redraw()

    def take_event(self, event: events_pb2.Event) -> None:
        self.table.on_event(event)
        self.write_log()

    def write_log(self) -> None:
        log = self.query_one("#log", EventLog)
        while self.table.log:
            log.add(Text.from_markup(self.table.log.popleft()))

    def fail(self, message: str) -> None:
        self.error_text = message
        self.table.log.append(f"[b red]{escape(message)}[/]")
        self.write_log()
        self.redraw()

    def clock_left(self) -> float | None:
        return None

    def redraw(self) -> None:
        st = self.table
        self.show("status", st.status_text(self.clock_left()))
        self.show("table", st.table_text())
        self.show("sides", st.sides_text())
        self.show("hand", st.hand_text())
        self.show("scores", st.scores_text())
        self.show("prompt", self.prompt_text())

    def show(self, wid: str, markup: str) -> None:
        self.texts[wid] = markup
        self.query_one(f"#{wid}", Static).update(markup)

    def prompt_text(self) -> str:
        if self.error_text:
            return f"[b red]{escape(self.error_text)}[/]  (q quits)"
        if self.table.match_result is not None or self.table.goodbye:
            return "[b]The match is over.[/b] Press q to quit."
        return ""

    def screen_text(self) -> str:
        """Everything on the screen as plain text (for tests and logs)."""
        parts = []
        for wid in ("status", "table", "sides", "hand", "prompt", "scores"):
            parts.append(Text.from_markup(self.texts.get(wid, "")).plain)
        parts.extend(line.plain for line in self.query_one("#log", EventLog).texts)
        return "\n".join(parts)


class WatchApp(CirullaApp):
    """``cirulla watch``: the public table, live."""

    TITLE = "cirulla watch"


class PlayApp(CirullaApp):
    """``cirulla play``: one seat, chosen with the keyboard."""

    TITLE = "cirulla play"
    #: The seat's Play stream brings every public event too, in order with the seat's
    #: own; a second stream's Views, running ahead of it, would skip the end of a deal.
    SPECTATE = False
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "Quit"),
        Binding("escape", "to_cards", "Back to the cards"),
        *[Binding(str(n), f"pick({n})", show=False) for n in range(1, 10)],
    ]

    def __init__(self, server: str, match_id: str, token: str, name: str = "human") -> None:
        super().__init__(server, match_id)
        self.token = token
        self.player_name = name
        self.outbox = Outbox()
        self.step = 0  # 0 nothing to choose, 1 card, 2 capture/confirm
        self.cards: list[CardChoice] = []
        self.picked: CardChoice | None = None
        self.deadline: float | None = None
        self.done = asyncio.Event()

    def on_mount(self) -> None:
        super().on_mount()
        self.run_worker(self.play(), name="play", exit_on_error=False)

    def clock_left(self) -> float | None:
        if self.deadline is None or self.table.decision is None:
            return None
        return max(0.0, self.deadline - time.monotonic())

    async def play(self) -> None:
        hello = play_pb2.Hello(
            protocol_version=PROTOCOL_VERSION,
            name=self.player_name,
            version=f"cirulla-play {__version__}",
            match_id=self.match_id,
            seat_token=self.token,
        )
        self.outbox.send(match_service_pb2.PlayRequest(hello=hello))
        try:
            async for msg in self.stub.Play(self.outbox):
                self.handle_play(msg)
        except grpc.aio.AioRpcError as exc:
            if exc.code() != grpc.StatusCode.CANCELLED:
                self.fail(f"the connection to {self.address} failed: {exc.details()}")
        finally:
            self.done.set()

    def handle_play(self, msg: match_service_pb2.PlayResponse) -> None:
        kind = msg.WhichOneof("body")
        st = self.table
        if kind == "welcome":
            st.on_welcome(msg.welcome)
        elif kind == "new_game":
            st.on_new_game(msg.new_game)
            self.write_log()
        elif kind == "view":
            st.on_view(msg.view)
        elif kind == "event":
            self.take_event(msg.event)
        elif kind == "decision_request":
            self.decide(msg.decision_request)
        elif kind == "action_rejected":
            r = msg.action_rejected
            st.log.append(f"[b red]Refused[/]: {escape(r.message or r.rule)}")
            self.write_log()
            if st.decision is not None:
                self.show_cards()
        elif kind == "match_result":
            st.on_match_result(msg.match_result)
            self.write_log()
        elif kind == "goodbye":
            st.on_goodbye(msg.goodbye)
            self.outbox.send(None)
            self.hide_choices()
        self.redraw()

    # ------------------------------------------------------------------ choosing

    def decide(self, request: play_pb2.DecisionRequest) -> None:
        self.table.on_decision(request)
        c = request.clock
        left = [ms for ms in (c.move_time_left_ms, c.bank_time_left_ms) if ms]
        self.deadline = time.monotonic() + min(left) / 1000 if left else None
        self.cards = card_choices(list(request.legal_actions))
        self.show_cards()
        self.bell()

    def show_cards(self) -> None:
        self.step = 1
        self.picked = None
        self.fill([f"{n}. {c.label}" for n, c in enumerate(self.cards, 1)])

    def show_captures(self, choice: CardChoice) -> None:
        self.step = 2
        self.picked = choice
        self.fill([f"{n}. {capture_label(la)}" for n, la in enumerate(choice.actions, 1)])

    def fill(self, labels: list[str]) -> None:
        options = self.query_one("#choices", OptionList)
        options.clear_options()
        options.add_options([Text.from_markup(label) for label in labels])
        options.display = True
        options.highlighted = 0
        options.focus()
        self.redraw()

    def hide_choices(self) -> None:
        self.step = 0
        options = self.query_one("#choices", OptionList)
        options.clear_options()
        options.display = False

    def prompt_text(self) -> str:
        base = super().prompt_text()
        if base or self.table.decision is None:
            return base
        if self.step == 1:
            return (
                "[b]Your move.[/b] Pick a card (arrows + Enter, or its number); a card "
                "with one way to play is played at once:"
            )
        if self.step == 2 and self.picked is not None:
            options = self.query_one("#choices", OptionList)
            i = options.highlighted or 0
            la = self.picked.actions[min(i, len(self.picked.actions) - 1)]
            return f"{preview(la)}\nEnter confirms, Esc goes back to the cards:"
        return ""

    def on_option_list_option_highlighted(self, _event: OptionList.OptionHighlighted) -> None:
        self.show("prompt", self.prompt_text())

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.choose(event.option_index)

    def action_pick(self, n: int) -> None:
        if isinstance(self.screen, ConfirmQuit):
            return
        options = self.query_one("#choices", OptionList)
        if self.step and 1 <= n <= options.option_count:
            options.highlighted = n - 1
            self.choose(n - 1)

    def action_to_cards(self) -> None:
        if self.step == 2:
            self.show_cards()

    def choose(self, index: int) -> None:
        if self.table.decision is None:
            return
        if self.step == 1 and index < len(self.cards):
            choice = self.cards[index]
            if len(choice.actions) == 1:
                # One way to play it (it takes nothing, or takes one set of cards, which
                # its label says): the choice is made, no second confirmation.
                self.submit(choice.actions[0])
            else:
                self.show_captures(choice)
        elif self.step == 2 and self.picked is not None and index < len(self.picked.actions):
            self.submit(self.picked.actions[index])

    def submit(self, la: game_pb2.LegalAction) -> None:
        decision = self.table.decision
        if decision is None:
            return
        self.outbox.send(
            match_service_pb2.PlayRequest(
                submit_action=play_pb2.SubmitAction(
                    decision_id=decision.decision_id, legal_action_index=la.index
                )
            )
        )
        self.table.decision = None
        self.deadline = None
        self.hide_choices()
        self.redraw()

    def running(self) -> bool:
        """A game is on and this seat is in it (quitting now gives the seat up)."""
        st = self.table
        return st.match_result is None and not st.goodbye and not self.error_text

    async def action_quit(self) -> None:
        if isinstance(self.screen, ConfirmQuit):
            return
        if not self.running():
            self.leave()
            return

        def answered(quit_now: bool | None) -> None:
            if quit_now:
                self.leave()

        self.push_screen(
            ConfirmQuit(
                "[b]Leave the match?[/b] The game is still on: your seat stops playing "
                "(the server plays its default action when its time runs out).\n\n"
                "[b]y[/b] or [b]q[/b] leaves, [b]n[/b] or Esc goes back to the table."
            ),
            answered,
        )

    def leave(self) -> None:
        if self.table.match_result is None and not self.table.goodbye:
            self.outbox.send(match_service_pb2.PlayRequest(quit=play_pb2.Quit(reason="quit")))
        self.outbox.send(None)
        self.exit()
