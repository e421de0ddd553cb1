"""The bot kit: everything between a decision function and the match server.

``run_bot(policy, server=..., match_id=..., token=...)`` joins one seat and plays until
the match ends. The kit answers the handshake, turns each ``decision_request`` into a
rules-core ``View`` and numbered ``Action`` list, calls the policy with the time it may
use, and answers with the chosen index. If the stream drops it reconnects with backoff
and resumes from the last event it saw; if the policy overruns its time it answers with
the server's default action rather than let the clock run out.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import grpc

from cirulla import PROTOCOL_VERSION, __version__
from cirulla.bots.convert import (
    ProtocolDataError,
    clock_seconds,
    legal_from_proto,
    view_from_proto,
)
from cirulla.bots.policy import DecisionFunction, FunctionPolicy, Policy, resolve_choice
from cirulla.rules.actions import Action
from cirulla.rules.options import Options
from cirulla.rules.views import View
from cirulla.v1 import match_service_pb2, match_service_pb2_grpc, play_pb2
from cirulla.wire import options_from_proto

log = logging.getLogger("cirulla.bots.kit")

# Statuses that retrying cannot fix: report them at once.
FATAL_CODES = {
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.NOT_FOUND,
    grpc.StatusCode.UNAUTHENTICATED,
    grpc.StatusCode.PERMISSION_DENIED,
    grpc.StatusCode.FAILED_PRECONDITION,
    grpc.StatusCode.UNIMPLEMENTED,
}
MOVE_SAFETY = 0.15  # keep this share of the per-move time for the network
MIN_MARGIN = 0.1  # ... and at least this many seconds
BANK_SHARE = 30  # spend at most 1/30 of the game bank on one decision
OVERRUN_GRACE = 0.05  # how long past its budget a policy may answer (inside MIN_MARGIN)


class BotError(RuntimeError):
    """The bot cannot play on: refused by the server, replaced, or out of retries."""


@dataclass
class MatchOutcome:
    """What the kit saw of the match: the seat it played, the winner and its own record."""

    seat: int | None = None
    winner_side: int | None = None
    games_won: list[int] = field(default_factory=list)
    decisions: int = 0
    defaults_played: int = 0
    rejected: int = 0


def time_budget(move_left: float | None, bank_left: float | None) -> float | None:
    """Seconds a decision may take, from the clock the server reported (None: no limit)."""
    budgets = []
    if move_left is not None:
        budgets.append(move_left - max(MIN_MARGIN, MOVE_SAFETY * move_left))
    if bank_left is not None:
        budgets.append(bank_left / BANK_SHARE - MIN_MARGIN / 2)
    if not budgets:
        return None
    return max(0.0, min(budgets))


class _Stream:
    """One Play call: a queue feeding the request iterator, and the response iterator."""

    def __init__(self, stub: match_service_pb2_grpc.MatchServiceStub, hello: play_pb2.Hello):
        self.requests: queue.Queue[match_service_pb2.PlayRequest | None] = queue.Queue()
        self.send(match_service_pb2.PlayRequest(hello=hello))
        self.call = stub.Play(self._iter())

    def _iter(self) -> Iterator[match_service_pb2.PlayRequest]:
        while True:
            item = self.requests.get()
            if item is None:
                return
            yield item

    def send(self, request: match_service_pb2.PlayRequest) -> None:
        log.debug("send %s", _brief(request))
        self.requests.put(request)

    def close(self) -> None:
        self.requests.put(None)
        self.call.cancel()


def _brief(message: object) -> str:
    return " ".join(str(message).split())[:400]


class BotClient:
    """Plays one seat of one match with one policy (see ``run_bot``)."""

    def __init__(
        self,
        policy: Policy,
        *,
        server: str,
        match_id: str,
        token: str,
        name: str | None = None,
        retries: int = 8,
        backoff: float = 0.2,
        max_backoff: float = 5.0,
    ) -> None:
        self.policy = policy
        self.server = server
        self.match_id = match_id
        self.token = token
        self.name = name or policy.name
        self.retries = retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.options = Options()
        self.last_sequence = 0
        self.outcome = MatchOutcome()
        self._finished = False
        self._pending: tuple[int, int] | None = None  # (open decision id, default index)

    def hello(self, resume: bool) -> play_pb2.Hello:
        hello = play_pb2.Hello(
            protocol_version=PROTOCOL_VERSION,
            name=self.name,
            version=__version__,
            match_id=self.match_id,
            seat_token=self.token,
        )
        if resume:
            hello.resume.last_event_sequence = self.last_sequence
        return hello

    def run(self) -> MatchOutcome:
        """Play until the match ends; reconnect with backoff when the stream drops."""
        failures = 0
        resume = False
        with grpc.insecure_channel(self.server) as channel:
            stub = match_service_pb2_grpc.MatchServiceStub(channel)
            while True:
                try:
                    progressed = self._play(stub, resume)
                except grpc.RpcError as exc:
                    code = exc.code() if hasattr(exc, "code") else None
                    detail = exc.details() if hasattr(exc, "details") else str(exc)
                    if self._finished:
                        return self.outcome
                    if code in FATAL_CODES:
                        raise BotError(f"server refused the bot: {code.name}: {detail}") from None
                    progressed = False
                    log.warning("stream failed (%s: %s)", code.name if code else "?", detail)
                if self._finished:
                    return self.outcome
                failures = 0 if progressed else failures + 1
                if failures > self.retries:
                    raise BotError(f"gave up after {self.retries} failed reconnection attempts")
                delay = min(self.max_backoff, self.backoff * 2 ** max(0, failures - 1))
                log.info("reconnecting in %.1fs (resume after event %d)", delay, self.last_sequence)
                time.sleep(delay)
                resume = self.outcome.seat is not None

    def _play(self, stub: match_service_pb2_grpc.MatchServiceStub, resume: bool) -> bool:
        """One stream, until it ends. True if the server welcomed us (progress was made)."""
        stream = _Stream(stub, self.hello(resume))
        welcomed = False
        try:
            for response in stream.call:
                kind = response.WhichOneof("body")
                log.debug("recv %s", _brief(response))
                if kind == "welcome":
                    welcomed = True
                    self._on_welcome(response.welcome)
                elif kind == "new_game":
                    self.options = options_from_proto(response.new_game.rules, self.options)
                    log.info(
                        "game %d starts (dealer seat %d)",
                        response.new_game.game_number,
                        response.new_game.dealer,
                    )
                elif kind == "event":
                    self.last_sequence = max(self.last_sequence, response.event.sequence)
                elif kind == "view":
                    self.last_sequence = max(self.last_sequence, response.view.event_sequence)
                elif kind == "decision_request":
                    self._decide(stream, response.decision_request)
                elif kind == "action_rejected":
                    self._on_rejected(stream, response.action_rejected)
                elif kind == "match_result":
                    result = response.match_result
                    # no winner_side means no side won (a tie): not "side 0"
                    winner = result.winner_side if result.HasField("winner_side") else None
                    self.outcome.winner_side = winner
                    self.outcome.games_won = list(result.games_won)
                    self._finished = True
                    log.info(
                        "match over: side %s wins, games %s",
                        "none" if winner is None else winner,
                        list(result.games_won),
                    )
                elif kind == "goodbye":
                    return self._on_goodbye(response.goodbye) or welcomed
        finally:
            stream.close()
        return welcomed

    def _on_welcome(self, welcome: play_pb2.Welcome) -> None:
        if welcome.protocol_version != PROTOCOL_VERSION:
            raise BotError(
                f"server speaks {welcome.protocol_version!r}, this kit {PROTOCOL_VERSION!r}"
            )
        self.outcome.seat = welcome.seat if welcome.HasField("seat") else None
        log.info(
            "joined match %s as seat %s%s",
            welcome.match_id,
            self.outcome.seat,
            " (resumed)" if welcome.resumed else "",
        )

    def _on_goodbye(self, goodbye: play_pb2.Goodbye) -> bool:
        reason = play_pb2.GoodbyeReason.Name(goodbye.reason)
        log.info("goodbye: %s %s", reason, goodbye.message)
        if goodbye.reason in (
            play_pb2.GOODBYE_REASON_MATCH_FINISHED,
            play_pb2.GOODBYE_REASON_CLIENT_QUIT,
        ):
            self._finished = True
            return True
        if goodbye.reason == play_pb2.GOODBYE_REASON_SERVER_SHUTDOWN:
            return False  # the server may come back: reconnect and resume
        raise BotError(f"the server ended the stream: {reason} {goodbye.message}".strip())

    def _on_rejected(self, stream: _Stream, rejected: play_pb2.ActionRejected) -> None:
        self.outcome.rejected += 1
        log.warning(
            "action rejected: %s [rule: %s] %s",
            play_pb2.RejectReason.Name(rejected.reason),
            rejected.rule,
            rejected.message,
        )
        pending = self._pending
        if (
            pending is not None
            and rejected.HasField("open_decision_id")
            and rejected.open_decision_id == pending[0]
        ):
            # Our own answer was refused and the decision is open: fall back, once, to the
            # server's default action.
            self._pending = None
            self._submit(stream, pending[0], pending[1])

    def _decide(self, stream: _Stream, request: play_pb2.DecisionRequest) -> None:
        received = time.monotonic()
        self._pending = (request.decision_id, request.default_action_index)
        try:
            view = view_from_proto(request.view, self.options)
            legal = legal_from_proto(request.legal_actions)
        except ProtocolDataError as exc:
            log.error(
                "cannot read decision %d (%s); playing the default action", request.decision_id, exc
            )
            self._submit(stream, request.decision_id, request.default_action_index)
            return
        budget = time_budget(*clock_seconds(request.clock))
        index = self._think(view, legal, budget, received, request.default_action_index)
        self.outcome.decisions += 1
        log.debug(
            "decision %d: %s (%.3fs)",
            request.decision_id,
            legal[index],
            time.monotonic() - received,
        )
        self._submit(stream, request.decision_id, index)

    def _think(
        self,
        view: View,
        legal: Sequence[Action],
        budget: float | None,
        received: float,
        default: int,
    ) -> int:
        """Run the policy, in a thread when there is a clock, so an overrun cannot stall us."""
        if budget is None:
            try:
                return resolve_choice(self.policy.choose(view, legal, None), legal)
            except Exception as exc:
                log.error(
                    "the policy failed (%s: %s): playing the default action",
                    type(exc).__name__,
                    exc,
                )
                self.outcome.defaults_played += 1
                return default
        box: list[int | BaseException] = []

        def work() -> None:
            try:
                left = max(0.0, budget - (time.monotonic() - received))
                box.append(resolve_choice(self.policy.choose(view, legal, left), legal))
            except BaseException as exc:  # reported below, in the kit's thread
                box.append(exc)

        thread = threading.Thread(target=work, name="bot-decision", daemon=True)
        thread.start()
        thread.join(max(0.0, budget + OVERRUN_GRACE - (time.monotonic() - received)))
        if not box:
            self.outcome.defaults_played += 1
            log.warning("the policy overran its %.2fs budget: playing the default action", budget)
            return default
        result = box[0]
        if isinstance(result, BaseException):
            log.error(
                "the policy failed (%s: %s): playing the default action",
                type(result).__name__,
                result,
            )
            self.outcome.defaults_played += 1
            return default
        return result

    def _submit(self, stream: _Stream, decision_id: int, index: int) -> None:
        stream.send(
            match_service_pb2.PlayRequest(
                submit_action=play_pb2.SubmitAction(
                    decision_id=decision_id, legal_action_index=index
                )
            )
        )


def run_bot(
    policy: Policy | DecisionFunction,
    *,
    server: str,
    match_id: str,
    token: str,
    name: str | None = None,
    retries: int = 8,
    on_client: Callable[[BotClient], None] | None = None,
) -> MatchOutcome:
    """Play one seat of ``match_id`` on ``server`` (``host:port``) until the match ends.

    ``policy`` is a ``Policy`` or a plain function ``(view, legal, time_left) -> index``.
    """
    if not hasattr(policy, "choose"):
        policy = FunctionPolicy(policy)  # type: ignore[arg-type]
    client = BotClient(
        policy, server=server, match_id=match_id, token=token, name=name, retries=retries
    )  # type: ignore[arg-type]
    if on_client is not None:
        on_client(client)
    return client.run()
