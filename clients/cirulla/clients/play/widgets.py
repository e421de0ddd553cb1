"""Two widgets of the table screens: the wrapped event log and the quit confirmation."""

from __future__ import annotations

from collections import deque
from typing import ClassVar

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import RichLog, Static


class EventLog(RichLog):
    """The log, each line wrapped to the panel's width (never cut), re-wrapped when the
    panel changes width.

    ``RichLog`` lays each line out once, at least ``min_width`` (78) columns wide, so in
    a narrower panel the end of a line is cut off; here lines are laid out at the
    panel's width, and kept so that a resize lays them out again.
    """

    KEEP = 500

    def __init__(
        self, *, name: str | None = None, id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(wrap=True, min_width=1, name=name, id=id, classes=classes)
        self.texts: deque[Text] = deque(maxlen=self.KEEP)
        self._laid_out_at = 0

    def add(self, line: Text) -> None:
        self.texts.append(line)
        self.write(line)

    def on_resize(self, event: events.Resize) -> None:
        width = self.scrollable_content_region.width
        if width != self._laid_out_at and self.texts:
            self._laid_out_at = width
            self.clear()
            for line in self.texts:
                self.write(line)


class ConfirmQuit(ModalScreen[bool]):
    """ "Leave the game?" while it runs: ``q`` by mistake must not give a seat away."""

    DEFAULT_CSS = """
    ConfirmQuit { align: center middle; }
    ConfirmQuit > Vertical {
        width: 64; height: auto; padding: 1 2; border: thick $warning; background: $panel;
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Quit"),
        Binding("q", "answer(True)", "Quit", show=False),
        Binding("n", "answer(False)", "Stay"),
        Binding("escape", "answer(False)", "Stay", show=False),
    ]

    def __init__(self, message: str) -> None:
        super().__init__()
        self.message = message

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self.message, id="confirm")

    def action_answer(self, quit_now: bool) -> None:
        self.dismiss(quit_now)
