"""The bridge: a text-protocol engine as a bot kit policy (``cirulla bot text -- CMD``).

The kit does the gRPC side (handshake, reconnects, clock); this policy turns what the
seat receives into text commands for the engine (``rules``, ``newgame``, ``event``,
``hand``) and each decision into ``state`` + ``genmove``. An answer that is not a legal
action (a bad index, an action that is not legal, garbage, a ``?`` error) is submitted so
that the server counts it as an illegal action, after which the kit plays the server's
default action; an engine that does not answer within its time gets the default action
too, and its late answer is dropped by id.

One worker thread talks to the engine, command after command, in the order the seat saw
things; ``observe`` (called on the kit's event loop) only queues commands, so an engine
that is slow, or still busy with a genmove past its deadline, never blocks the seat's
stream: decisions are answered in time with the default action while the engine catches
up. An engine that does not answer some other command within ``command_timeout`` ends
the seat (the next ``observe`` raises ``EngineError``).
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Sequence

from cirulla.bots.policy import RawAnswer, decision_cancelled
from cirulla.bots.text.engine_io import (
    COMMAND_TIMEOUT,
    STOP_GRACE,
    Answer,
    EngineError,
    EngineProcess,
)
from cirulla.bots.text.limits import DEFAULT_LIMITS, EngineLimits
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
from cirulla.bots.text.violations import printable, quote
from cirulla.rules.actions import Action
from cirulla.rules.options import Options
from cirulla.rules.views import View
from cirulla.v1 import match_service_pb2
from cirulla.wire import mask_from_proto, options_from_proto

log = logging.getLogger("cirulla.bots.text")

Violation = Callable[[str, str], None]

#: Seconds a decision waits past its deadline for the worker to hand on its outcome.
WORKER_LAG = 0.02
#: Characters kept of the engine's name and version.
NAME_CHARS = 64
#: Seconds between two reapings of the engine's exited orphans during play.
REAP_EVERY = 5.0


class TextEnginePolicy:
    """Plays a seat by asking a text-protocol engine (see docs/text-protocol.md)."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        on_violation: Violation | None = None,
        command_timeout: float = COMMAND_TIMEOUT,
        limits: EngineLimits = DEFAULT_LIMITS,
    ) -> None:
        self.command_timeout = command_timeout
        self.engine = EngineProcess(argv, on_violation=on_violation, limits=limits)
        self.name = "text-engine"
        self.engine_version = ""
        self.seat: int | None = None
        self.options = Options()
        self._jobs: queue.SimpleQueue[Callable[[], None] | None] = queue.SimpleQueue()
        self._failed: EngineError | None = None
        self._worker = threading.Thread(target=self._work, name="engine-worker", daemon=True)
        self._worker.start()

    @property
    def violations(self) -> list[tuple[str, str]]:
        """(problem, the exchange that showed it) of the first violations, in order
        (``violations_total`` counts them all)."""
        return self.engine.violations.kept

    @property
    def violations_total(self) -> int:
        return self.engine.violations.total

    def _flag(self, problem: str) -> None:
        self.engine.violations.add(problem, self.engine.exchange())

    # ------------------------------------------------------------------ handshake

    def start(self) -> None:
        """The admin commands: protocol version, name, version, the commands it knows."""
        answer = self.engine.call("protocol_version", self.command_timeout)
        major = answer.text.split(".")[0].strip()
        if not answer.ok or major != TEXT_PROTOCOL_VERSION.split(".")[0]:
            self._flag(
                f"protocol_version answered {quote(answer.text)}; this bridge speaks "
                f"{TEXT_PROTOCOL_VERSION} (the major version must match)"
            )
            raise EngineError(
                f"the engine speaks text protocol {quote(answer.text)}, not {TEXT_PROTOCOL_VERSION}"
            )
        name = self.engine.call("name", self.command_timeout)
        if name.ok and name.text:
            self.name = printable(name.text.split("\n")[0][:NAME_CHARS])
        else:
            self._flag("name: no name in the answer")
        version = self.engine.call("version", self.command_timeout)
        self.engine_version = printable(version.text[:NAME_CHARS]) if version.ok else ""
        listed = self.engine.call("list_commands", self.command_timeout)
        known = set(listed.text.split()) if listed.ok else set()
        missing = [c for c in REQUIRED_COMMANDS if c not in known]
        if missing:
            self._flag(f"list_commands does not list {', '.join(missing)}")
        probe = self.engine.call("known_command genmove", self.command_timeout)
        if not probe.ok or probe.text != "true":
            self._flag(f"known_command genmove answered {quote(probe.text)}, expected 'true'")
        log.info(
            "engine %s %s speaks text protocol %s", self.name, self.engine_version, answer.text
        )

    def _tell(self, command: str) -> None:
        answer = self.engine.call(command, self.command_timeout)
        if not answer.ok:
            self._flag(f"the engine refused {command.split()[0]!r}: ?{quote(answer.text)}")

    # ------------------------------------------------------------------ the worker

    def _work(self) -> None:
        """Run the queued engine jobs in order; after a failure, skip the rest. Between
        jobs, now and then, reap the engine's orphans that have exited (the bridge adopts
        them), so they do not pile up as zombies until the seat ends."""
        reaped = time.monotonic()
        while (job := self._jobs.get()) is not None:
            if self._failed is not None:
                continue
            try:
                job()
            except EngineError as exc:
                self._failed = exc
            if time.monotonic() - reaped > REAP_EVERY:
                self.engine.tree.alive()
                reaped = time.monotonic()

    def _check(self) -> None:
        if self._failed is not None:
            raise self._failed

    def alive(self) -> bool:
        """True while the engine runs and has not failed: it can play another match
        (``cirulla.bots.text.served`` keeps it between matches while this holds)."""
        return self._failed is None and self.engine.proc.poll() is None

    def _post(self, command: str) -> None:
        """Queue a command for the engine; raises the worker's failure if it had one."""
        self._check()
        self._jobs.put(lambda: self._tell(command))

    # ------------------------------------------------------------------ what the seat sees

    def observe(self, response: match_service_pb2.PlayResponse) -> None:
        """Called by the kit with every message of the seat's stream."""
        kind = response.WhichOneof("body")
        if kind == "welcome" and response.welcome.HasField("seat"):
            self.seat = response.welcome.seat
        elif kind == "new_game":
            game = response.new_game
            self.options = options_from_proto(game.rules)
            self._post(f"rules {rules_text(self.options)}")
            side = self.options.side_of(self.seat or 0)
            self._post(
                f"newgame game={game.game_number} seat={self.seat} side={side} "
                f"dealer={game.dealer} best_of={game.best_of}"
            )
        elif kind == "event":
            event = response.event
            if event.WhichOneof("body") == "hand_dealt":
                if event.hand_dealt.seat == self.seat:
                    cards = mask_from_proto(event.hand_dealt.cards, "hand_dealt.cards")
                    self._post(f"hand {cards_text(cards)}")
                return
            text = event_text(event)
            if text is not None:
                self._post(f"event {text}")

    # ------------------------------------------------------------------ decisions

    def choose(
        self, view: View, legal: Sequence[Action], time_left: float | None
    ) -> int | RawAnswer:
        self._check()
        deadline = None if time_left is None else time.monotonic() + time_left
        box: list[tuple[Answer | None, int] | Exception] = []
        started, done = threading.Event(), threading.Event()

        def decide() -> None:
            started.set()
            try:
                box.append(self._genmove(view, legal, deadline))
            except EngineError as exc:  # raised below too, in the deciding thread
                box.append(exc)
                raise
            except Exception as exc:
                box.append(exc)
            finally:
                done.set()

        self._jobs.put(decide)
        while not done.wait(0.05 if deadline is None else max(0.0, deadline - time.monotonic())):
            if decision_cancelled():
                break
            if deadline is not None and time.monotonic() >= deadline:
                # the worker's own wait for the answer ends at the same deadline
                if started.is_set():
                    done.wait(WORKER_LAG)
                break
        if not box:  # the worker is still busy with earlier commands
            ms = 0 if time_left is None else int(time_left * 1000)
            self._flag(
                f"no answer to genmove within its {ms} ms (still busy with earlier commands)"
            )
            raise TimeoutError(f"the engine did not answer genmove within {ms} ms")
        result = box[0]
        if isinstance(result, Exception):
            raise result
        answer, time_ms = result
        if answer is None:
            self._flag(f"no answer to genmove within its {time_ms} ms")
            raise TimeoutError(f"the engine did not answer genmove within {time_ms} ms")
        if not answer.ok:
            self._flag(f"genmove answered with an error: ?{quote(answer.text)}")
            return RawAnswer(answer.text, index=len(legal))
        choice = read_choice(answer.text, legal)
        if choice.index is not None:
            return choice.index
        self._flag(f"genmove: {choice.problem}")
        return RawAnswer(answer.text, index=None if choice.well_formed else len(legal))

    def _genmove(
        self, view: View, legal: Sequence[Action], deadline: float | None
    ) -> tuple[Answer | None, int]:
        """``state`` and ``genmove`` (on the worker); (None, ms) if no answer in time,
        and no genmove at all if its deadline passed while earlier commands ran."""
        if deadline is not None and time.monotonic() >= deadline:
            return None, 0
        self._tell(f"state {state_text(view)}")
        time_left = None if deadline is None else deadline - time.monotonic()
        if time_left is not None and time_left <= 0.001:
            return None, 0
        time_ms = 0 if time_left is None else max(1, int(time_left * 1000))
        ident = self.engine.send(f"genmove {genmove_args(time_ms, legal)}")
        return self.engine.wait(ident, time_left), time_ms

    def close(self, quit_first: bool = True, grace: float = STOP_GRACE) -> int | None:
        """Stop the worker (letting it send what it has queued, for at most ``grace``
        seconds, when ``quit_first``) and the engine, and everything it started."""
        self._jobs.put(None)
        if quit_first:
            self._worker.join(grace)
        return self.engine.close(quit_first, grace)
