"""The bridge: a text-protocol engine as a bot kit policy (``cirulla bot text -- CMD``).

The kit does the gRPC side (handshake, reconnects, clock); this policy turns what the
seat receives into text commands for the engine (``rules``, ``newgame``, ``event``,
``hand``) and each decision into ``state`` + ``genmove``. An answer that is not a legal
action (a bad index, an action that is not legal, garbage, a ``?`` error) is submitted so
that the server counts it as an illegal action, after which the kit plays the server's
default action; an engine that does not answer within its time gets the default action
too, and its late answer is dropped by id.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence

from cirulla.bots.policy import RawAnswer, decision_cancelled
from cirulla.bots.text.engine_io import COMMAND_TIMEOUT, EngineError, EngineProcess
from cirulla.bots.text.protocol import (
    REQUIRED_COMMANDS,
    TEXT_PROTOCOL_VERSION,
    cards_text,
    event_text,
    genmove_args,
    read_choice,
    rules_text,
    state_text,
)
from cirulla.rules.actions import Action
from cirulla.rules.options import Options
from cirulla.rules.views import View
from cirulla.v1 import match_service_pb2
from cirulla.wire import mask_from_proto, options_from_proto

log = logging.getLogger("cirulla.bots.text")

Violation = Callable[[str, str], None]


class TextEnginePolicy:
    """Plays a seat by asking a text-protocol engine (see docs/text-protocol.md)."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        on_violation: Violation | None = None,
        command_timeout: float = COMMAND_TIMEOUT,
    ) -> None:
        self._violations: list[tuple[str, str]] = []
        self._report = on_violation
        self.command_timeout = command_timeout
        self.engine = EngineProcess(argv, on_violation=self._violation)
        self.name = "text-engine"
        self.engine_version = ""
        self.seat: int | None = None
        self.options = Options()

    @property
    def violations(self) -> list[tuple[str, str]]:
        """(problem, the exchange that showed it), in order."""
        return list(self._violations)

    def _violation(self, problem: str, exchange: str) -> None:
        self._violations.append((problem, exchange))
        if self._report is not None:
            self._report(problem, exchange)

    def _flag(self, problem: str) -> None:
        log.warning("protocol violation: %s", problem)
        self._violation(problem, "\n".join(self.engine.transcript))

    # ------------------------------------------------------------------ handshake

    def start(self) -> None:
        """The admin commands: protocol version, name, version, the commands it knows."""
        answer = self.engine.call("protocol_version", self.command_timeout)
        major = answer.text.split(".")[0].strip()
        if not answer.ok or major != TEXT_PROTOCOL_VERSION.split(".")[0]:
            self._flag(
                f"protocol_version answered {answer.text!r}; this bridge speaks "
                f"{TEXT_PROTOCOL_VERSION} (the major version must match)"
            )
            raise EngineError(
                f"the engine speaks text protocol {answer.text!r}, not {TEXT_PROTOCOL_VERSION}"
            )
        name = self.engine.call("name", self.command_timeout)
        if name.ok and name.text:
            self.name = name.text.split("\n")[0][:64]
        else:
            self._flag("name: no name in the answer")
        version = self.engine.call("version", self.command_timeout)
        self.engine_version = version.text if version.ok else ""
        listed = self.engine.call("list_commands", self.command_timeout)
        known = set(listed.text.split()) if listed.ok else set()
        missing = [c for c in REQUIRED_COMMANDS if c not in known]
        if missing:
            self._flag(f"list_commands does not list {', '.join(missing)}")
        probe = self.engine.call("known_command genmove", self.command_timeout)
        if not probe.ok or probe.text != "true":
            self._flag(f"known_command genmove answered {probe.text!r}, expected 'true'")
        log.info(
            "engine %s %s speaks text protocol %s", self.name, self.engine_version, answer.text
        )

    def _tell(self, command: str) -> None:
        answer = self.engine.call(command, self.command_timeout)
        if not answer.ok:
            self._flag(f"the engine refused {command.split()[0]!r}: ?{answer.text}")

    # ------------------------------------------------------------------ what the seat sees

    def observe(self, response: match_service_pb2.PlayResponse) -> None:
        """Called by the kit with every message of the seat's stream."""
        kind = response.WhichOneof("body")
        if kind == "welcome" and response.welcome.HasField("seat"):
            self.seat = response.welcome.seat
        elif kind == "new_game":
            game = response.new_game
            self.options = options_from_proto(game.rules)
            self._tell(f"rules {rules_text(self.options)}")
            side = self.options.side_of(self.seat or 0)
            self._tell(
                f"newgame game={game.game_number} seat={self.seat} side={side} "
                f"dealer={game.dealer} best_of={game.best_of}"
            )
        elif kind == "event":
            event = response.event
            if event.WhichOneof("body") == "hand_dealt":
                if event.hand_dealt.seat == self.seat:
                    cards = mask_from_proto(event.hand_dealt.cards, "hand_dealt.cards")
                    self._tell(f"hand {cards_text(cards)}")
                return
            text = event_text(event)
            if text is not None:
                self._tell(f"event {text}")

    # ------------------------------------------------------------------ decisions

    def choose(
        self, view: View, legal: Sequence[Action], time_left: float | None
    ) -> int | RawAnswer:
        started = time.monotonic()
        self._tell(f"state {state_text(view)}")
        if time_left is not None:
            time_left = max(0.001, time_left - (time.monotonic() - started))
        time_ms = 0 if time_left is None else max(1, int(time_left * 1000))
        ident = self.engine.send(f"genmove {genmove_args(time_ms, legal)}")
        answer = self.engine.wait(ident, time_left, decision_cancelled)
        if answer is None:
            self._flag(f"no answer to genmove within its {time_ms} ms")
            raise TimeoutError(f"the engine did not answer genmove within {time_ms} ms")
        if not answer.ok:
            self._flag(f"genmove answered with an error: ?{answer.text}")
            return RawAnswer(answer.text, index=len(legal))
        choice = read_choice(answer.text, legal)
        if choice.index is not None:
            return choice.index
        self._flag(f"genmove: {choice.problem}")
        return RawAnswer(answer.text, index=None if choice.well_formed else len(legal))

    def close(self) -> int | None:
        return self.engine.close()
