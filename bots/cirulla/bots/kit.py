"""The bot kit: everything between a decision function and the match server.

``run_bot(policy)`` joins one seat and plays until the match ends. Where to connect
comes from the environment the tournament runner and the ladder set for every bot
(``CIRULLA_SERVER``, ``CIRULLA_MATCH``, ``CIRULLA_TOKEN``, ``CIRULLA_TLS_CA``) unless given
as arguments, so a bot needs no argument parsing. The kit answers the handshake, turns
each ``decision_request`` into a rules-core ``View`` and numbered ``Action`` list, calls
the policy with the time it may use, and answers with the chosen index. If the stream
drops it reconnects with jittered backoff and resumes from the last event it saw; if the policy
overruns its time it answers with the server's default action rather than let the clock
run out, and signals the policy to stop (``decision_cancelled()``).
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, cast

import grpc

from cirulla.bots.convert import (
    ProtocolDataError,
    clock_seconds,
    decision_from_fields,
    decision_from_proto,
    ms_seconds,
)
from cirulla.bots.kit_stream import (
    Brief,
    PlayStream,
    UnreadableMessage,
    parse_response,
    read_entries,
    submit_bytes,
)
from cirulla.bots.policy import (
    DecisionFunction,
    FunctionPolicy,
    Policy,
    RawAnswer,
    decision_scope,
    resolve_choice,
)
from cirulla.bots.thinking import OVERRUN_GRACE, Thinker, time_budget
from cirulla.logs import setup_logging as logfmt  # one format in every process
from cirulla.rules.actions import Action
from cirulla.rules.options import Options
from cirulla.rules.views import View
from cirulla.v1 import match_service_pb2, play_pb2
from cirulla.version import PROTOCOL_VERSION, __version__, protocol_compatible
from cirulla.wire import options_from_proto

if TYPE_CHECKING:  # the native reader's entries (its stub)
    from cirulla.bots._decode import DecisionEntry, PlayEntry

log = logging.getLogger("cirulla.bots.kit")

#: The jitter of every reconnection delay: one generator per process, seeded by the
#: operating system, so clients restarted together draw different schedules.
JITTER = random.Random()


def reconnect_delay(
    failures: int, base: float, cap: float, rng: random.Random | None = None
) -> float:
    """Seconds to wait before reconnection attempt ``failures`` (0 after a stream that
    made progress, 1, 2, ... after attempts in a row that failed): "full jitter",
    uniform in [0, min(cap, base * 2**(failures - 1))].

    Why jitter: when a server restarts, every bot and ladder client it served loses
    its stream at the same instant; with a plain doubling schedule they would all come
    back in the same few milliseconds, attempt after attempt. Drawing each delay
    uniformly below the exponential ceiling spreads them over the whole window.
    """
    exponent = min(max(0, failures - 1), 32)  # bounded: base * 2**n stays a float
    ceiling = min(cap, base * 2**exponent)
    return (rng or JITTER).uniform(0.0, ceiling)


# Statuses that retrying cannot fix: report them at once.
FATAL_CODES = {
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.NOT_FOUND,
    grpc.StatusCode.UNAUTHENTICATED,
    grpc.StatusCode.PERMISSION_DENIED,
    grpc.StatusCode.FAILED_PRECONDITION,
    grpc.StatusCode.UNIMPLEMENTED,
}
JOIN_TIMEOUT = 600.0  # seconds to wait, once joined, for the other seats (then give up)
WAIT_NOTICE = 2.0  # say we are waiting for the others after this long, then every ...
WAIT_REPEAT = 30.0  # ... this many seconds

#: The environment variables a bot reads its connection from (CONTRACTS D).
ENV_SERVER = "CIRULLA_SERVER"
ENV_MATCH = "CIRULLA_MATCH"
ENV_TOKEN = "CIRULLA_TOKEN"
ENV_TLS_CA = "CIRULLA_TLS_CA"


class BotError(RuntimeError):
    """The bot cannot play on: refused by the server, replaced, or out of retries."""


@dataclass(frozen=True)
class Connection:
    """Where a bot plays: server ``host:port``, match id, seat token, optional TLS CA file."""

    server: str
    match_id: str
    token: str
    tls_ca: str | None = None


def connection_from_env(
    server: str | None = None,
    match_id: str | None = None,
    token: str | None = None,
    tls_ca: str | None = None,
    env: Mapping[str, str] | None = None,
) -> Connection:
    """The arguments given, else ``CIRULLA_SERVER``/``_MATCH``/``_TOKEN``/``_TLS_CA``.

    Raises ``BotError`` naming the flag and the variable of whatever is missing.
    """
    env = os.environ if env is None else env
    given = {"server": server, "match": match_id, "token": token}
    names = {"server": ENV_SERVER, "match": ENV_MATCH, "token": ENV_TOKEN}
    values = {key: given[key] or env.get(names[key], "") for key in names}
    missing = [f"--{key} (or ${names[key]})" for key, value in values.items() if not value]
    if missing:
        raise BotError(f"no {', '.join(missing)}: the bot does not know where to play")
    return Connection(
        values["server"], values["match"], values["token"], tls_ca or env.get(ENV_TLS_CA) or None
    )


def open_channel(server: str, tls_ca: str | Path | None = None) -> grpc.Channel:
    """A channel to ``server``: TLS checked against the CA certificate file ``tls_ca``
    (PEM) when given, plaintext otherwise."""
    if not tls_ca:
        return grpc.insecure_channel(server, options=KIT_CHANNEL_OPTIONS)
    try:
        roots = Path(tls_ca).read_bytes()
    except OSError as exc:
        raise BotError(f"cannot read the TLS CA certificate {tls_ca}: {exc.strerror}") from None
    return grpc.secure_channel(
        server, grpc.ssl_channel_credentials(root_certificates=roots), options=KIT_CHANNEL_OPTIONS
    )


#: The kit's channel options. gRPC's retry machinery (on by default; here it could only
#: ever make transparent retries of a stream that never reached the server) holds on to
#: every message a call sends, which cost a bot about a tenth of its CPU per game; the
#: kit reconnects and resumes by itself instead (``BotClient.run``). gRPC's own
#: reconnect backoff (1 s growing by 1.6 up to 120 s) is capped at 2 s: while it runs,
#: every call on the channel fails at once with the last connection error, so after a
#: long outage a bot would stay away for minutes from a server that is back; the kit's
#: jittered delays already space the attempts.
KIT_CHANNEL_OPTIONS: tuple[tuple[str, int], ...] = (
    ("grpc.enable_retries", 0),
    ("grpc.initial_reconnect_backoff_ms", 250),
    ("grpc.min_reconnect_backoff_ms", 250),
    ("grpc.max_reconnect_backoff_ms", 2000),
)


def open_aio_channel(server: str, tls_ca: str | Path | None = None) -> grpc.aio.Channel:
    """``open_channel`` for asyncio: the kit's own connection."""
    if not tls_ca:
        return grpc.aio.insecure_channel(server, options=KIT_CHANNEL_OPTIONS)
    try:
        roots = Path(tls_ca).read_bytes()
    except OSError as exc:
        raise BotError(f"cannot read the TLS CA certificate {tls_ca}: {exc.strerror}") from None
    return grpc.aio.secure_channel(
        server, grpc.ssl_channel_credentials(root_certificates=roots), options=KIT_CHANNEL_OPTIONS
    )


def setup_logging(level: str | int = "info", name: str = "bot") -> None:
    """Log to stderr at ``level`` unless the program configured logging itself: a bot's
    log (which the tournament keeps per seat) is never empty by accident."""
    logfmt(level, name, force=False)


@dataclass
class MatchOutcome:
    """What the kit saw of the match: the seat it played, the winner and its own record."""

    seat: int | None = None
    winner_side: int | None = None
    games_won: list[int] = field(default_factory=list)
    decisions: int = 0
    defaults_played: int = 0
    rejected: int = 0


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
        tls_ca: str | None = None,
        join_timeout: float = JOIN_TIMEOUT,
        auto_play_forced: bool | None = None,
        jitter: random.Random | None = None,
    ) -> None:
        self.policy = policy
        self.server = server
        self.match_id = match_id
        self.token = token
        self.name = name or policy.name
        self.retries = retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.jitter = jitter  # the reconnection delays' generator (None: JITTER)
        self.tls_ca = tls_ca
        self.join_timeout = join_timeout
        #: Let the server play decisions with one legal action (never asked for them):
        #: the policy's ``auto_play_forced`` attribute unless given.
        self.auto_play_forced = (
            bool(getattr(policy, "auto_play_forced", False))
            if auto_play_forced is None
            else auto_play_forced
        )
        self.options = Options()
        self.last_sequence = 0
        self.outcome = MatchOutcome()
        self._finished = False
        self._pending: tuple[int, int] | None = None  # (open decision id, default index)
        self._started = False  # a game started (or the match ended)
        self._began: asyncio.Event | None = None  # ... as an event of the running loop
        self._watch: asyncio.Task[None] | None = None  # the join watch of this stream
        self._welcomed = False  # the current stream got its welcome
        self._join_expired = False
        # optional hooks of richer policies (the text-engine bridge): every message seen
        self._observe = getattr(policy, "observe", None)
        self._thinker = Thinker()
        self._not_cancelled = threading.Event()  # the cancellation of an inline decision

    def hello(self, resume: bool) -> play_pb2.Hello:
        hello = play_pb2.Hello(
            protocol_version=PROTOCOL_VERSION,
            name=self.name,
            version=__version__,
            match_id=self.match_id,
            seat_token=self.token,
            accept_batches=True,
            defer_events=True,
            auto_play_forced=self.auto_play_forced,
        )
        if resume:
            hello.resume.last_event_sequence = self.last_sequence
        return hello

    def run(self) -> MatchOutcome:
        """Play until the match ends; reconnect with backoff when the stream drops.

        Runs an event loop of its own in the calling thread (the kit's gRPC is asyncio),
        so call it from plain synchronous code or a thread, not from a coroutine.
        """
        return asyncio.run(self.run_async())

    async def run_async(self, channel: grpc.aio.Channel | None = None) -> MatchOutcome:
        """``run`` on the running event loop, on ``channel`` when given (the caller's: it
        stays open, so a bot playing match after match keeps one connection and one loop
        for all of them) or else on a channel of its own to ``server``."""
        try:
            if channel is not None:
                return await self._run(channel)
            async with open_aio_channel(self.server, self.tls_ca) as own:
                return await self._run(own)
        finally:
            self._thinker.close()

    async def _run(self, channel: grpc.aio.Channel) -> MatchOutcome:
        failures = 0
        resume = False
        self._began = asyncio.Event()
        if self._started:
            self._began.set()
        while True:
            try:
                progressed = await self._play(channel, resume)
            except grpc.RpcError as exc:
                code = exc.code() if hasattr(exc, "code") else None
                detail = exc.details() if hasattr(exc, "details") else str(exc)
                if self._finished:
                    return self.outcome
                if self._join_expired:
                    raise BotError(self._join_message()) from None
                if code is not None and code in FATAL_CODES:
                    raise BotError(f"server refused the bot: {code.name}: {detail}") from None
                progressed = False
                log.warning("stream failed (%s: %s)", code.name if code else "?", detail)
            if self._finished:
                return self.outcome
            if self._join_expired:
                raise BotError(self._join_message())
            failures = 0 if progressed else failures + 1
            if failures > self.retries:
                raise BotError(f"gave up after {self.retries} failed reconnection attempts")
            delay = reconnect_delay(failures, self.backoff, self.max_backoff, self.jitter)
            log.info(
                "reconnecting to match %s in %.2fs (resume after event %d)",
                self.match_id,
                delay,
                self.last_sequence,
            )
            await asyncio.sleep(delay)
            resume = self.outcome.seat is not None

    async def _play(self, channel: grpc.aio.Channel, resume: bool) -> bool:
        """One stream, until it ends. True if the server welcomed us (progress was made)."""
        stream = PlayStream(channel)
        self._welcomed = False
        # each message read natively (kit_stream) unless each must be a PlayResponse:
        # for an observe hook, or a debug line
        native = self._observe is None and not stream.debug
        try:
            hello = match_service_pb2.PlayRequest(hello=self.hello(resume))
            await stream.send(hello.SerializeToString())
            async for data in stream.call:
                found = read_entries(data) if native else None
                if found is not None:
                    if await self._handle_entries(stream, data, found):
                        return self._welcomed
                    continue
                message = parse_response(data)
                if message.WhichOneof("body") == "batch":
                    for item in message.batch.responses:
                        if await self._handle(stream, item):
                            return self._welcomed
                elif await self._handle(stream, message):
                    return self._welcomed
        except UnreadableMessage as exc:
            log.error("%s", exc)
            raise BotError(str(exc)) from None
        except asyncio.CancelledError:
            if not self._join_expired:  # we end the stream ourselves only then
                raise
        finally:
            if self._watch is not None:
                self._watch.cancel()
                self._watch = None
            stream.close()
        return self._welcomed

    async def _handle_entries(
        self, stream: PlayStream, data: bytes, found: list[PlayEntry]
    ) -> bool:
        """``_handle`` for a message read natively (``kit_stream.read_entries``): what the kit
        reads of events and decision requests, every other message through ``_handle``.
        True when the server ended the stream for good."""
        for entry in found:
            if isinstance(entry, int):  # events', views' and acceptances' sequence
                if entry > self.last_sequence:
                    self.last_sequence = entry
                if not self._started:
                    self._begin()
            elif len(entry) == 3:
                if await self._handle(stream, parse_response(data[entry[1] : entry[2]])):
                    return True
            else:
                if not self._started:
                    self._begin()
                await self._decide_entry(stream, data, entry)
        return False

    def _begin(self) -> None:
        self._started = True
        if self._began is not None:
            self._began.set()

    async def _handle(self, stream: PlayStream, response: match_service_pb2.PlayResponse) -> bool:
        """Act on one server message; True when the server ended the stream for good."""
        kind = response.WhichOneof("body")
        if stream.debug:
            log.debug("recv %s", Brief(response))
        if kind != "welcome" and not self._started:
            self._begin()
        if kind == "welcome":
            self._welcomed = True
            self._on_welcome(response.welcome)
            if not self._started and self._watch is None:
                self._watch = asyncio.create_task(self._watch_join(stream, response.welcome))
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
            await self._decide(stream, response.decision_request)
        elif kind == "action_rejected":
            await self._on_rejected(stream, response.action_rejected)
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
            # the stream ends here; a finished match counts as progress
            self._welcomed = self._on_goodbye(response.goodbye) or self._welcomed
            return True
        if self._observe is not None:
            self._observe(response)
        return False

    def _join_message(self) -> str:
        return (
            f"no game started within {self.join_timeout:g}s of joining match "
            f"{self.match_id}: the other seats never joined"
        )

    async def _watch_join(self, stream: PlayStream, welcome: play_pb2.Welcome) -> None:
        """Until the first game starts: say that we wait for the others, and give up (end
        the stream) after ``join_timeout`` seconds."""
        joined = sum(1 for s in welcome.seats if s.connected)
        seats = len(welcome.seats)
        began = self._began
        assert began is not None
        waited = 0.0
        step = WAIT_NOTICE
        while waited < self.join_timeout:
            step = min(step, self.join_timeout - waited)
            try:
                await asyncio.wait_for(began.wait(), step)
                return
            except TimeoutError:
                pass
            waited += step
            if waited < self.join_timeout:
                log.info(
                    "waiting for the other players (%d of %d seats had joined when we "
                    "did; %.0fs of the %.0fs join timeout used)",
                    joined,
                    seats,
                    waited,
                    self.join_timeout,
                )
            step = WAIT_REPEAT
        self._join_expired = True
        log.error("no game started within %gs of joining: giving up", self.join_timeout)
        stream.close()

    def _on_welcome(self, welcome: play_pb2.Welcome) -> None:
        if not protocol_compatible(welcome.protocol_version):
            raise BotError(
                f"server speaks {welcome.protocol_version!r}, this kit {PROTOCOL_VERSION!r} "
                "(the major version must match)"
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

    async def _on_rejected(self, stream: PlayStream, rejected: play_pb2.ActionRejected) -> None:
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
            await self._submit(stream, pending[0], pending[1])

    async def _decide(
        self,
        stream: PlayStream,
        request: play_pb2.DecisionRequest,
        received: float | None = None,
    ) -> None:
        received = time.monotonic() if received is None else received
        self._pending = (request.decision_id, request.default_action_index)
        try:
            view, legal = decision_from_proto(request, self.options)
        except ProtocolDataError as exc:
            log.error(
                "cannot read decision %d (%s); playing the default action", request.decision_id, exc
            )
            await self._submit(stream, request.decision_id, request.default_action_index)
            return
        budget = time_budget(*clock_seconds(request.clock), request.clock.increment_ms / 1000)
        await self._answer(
            stream, request.decision_id, request.default_action_index, view, legal, budget, received
        )

    async def _decide_entry(self, stream: PlayStream, data: bytes, entry: DecisionEntry) -> None:
        """``_decide`` for a decision request read natively (no debug line: a stream read
        natively has none)."""
        received = time.monotonic()
        (_, start, end, decision_id, default, move_ms, bank_ms, increment_ms, fields, codes) = entry
        read = decision_from_fields(fields, codes, self.options)
        if read is None:  # the Python reader reads it, and names what is wrong
            request = parse_response(data[start:end]).decision_request
            await self._decide(stream, request, received)
            return
        self._pending = (decision_id, default)
        budget = time_budget(*ms_seconds(move_ms, bank_ms), increment_ms / 1000)
        await self._answer(stream, decision_id, default, read[0], read[1], budget, received)

    async def _answer(
        self,
        stream: PlayStream,
        decision_id: int,
        default: int,
        view: View,
        legal: Sequence[Action],
        budget: float | None,
        received: float,
    ) -> None:
        """The policy's answer to a decision read, however it was read, sent."""
        choice = await self._think(view, legal, budget, received, default)
        self.outcome.decisions += 1
        if log.isEnabledFor(logging.DEBUG):
            log.debug(
                "decision %d: %s (%.3fs)",
                decision_id,
                choice.text if isinstance(choice, RawAnswer) else legal[choice],
                time.monotonic() - received,
            )
        await self._submit(stream, decision_id, choice)

    async def _think(
        self,
        view: View,
        legal: Sequence[Action],
        budget: float | None,
        received: float,
        default: int,
    ) -> int | RawAnswer:
        """Run the policy, in a thread when there is a clock, so an overrun cannot stall us
        (unless the policy says it is ``instant``, as random and greedy are).

        The decision's cancellation event (``decision_cancelled()`` in the policy's thread)
        is set when the kit stops waiting for it.
        """
        result: int | RawAnswer | BaseException | None
        if budget is None or getattr(self.policy, "instant", False):
            # no clock to keep to, or a policy that cannot overrun it: in this thread,
            # where nothing cancels it (one event, never set, for every such decision)
            result = self._choose(view, legal, budget, received, self._not_cancelled)
        else:
            cancel = threading.Event()
            box: list[int | RawAnswer | BaseException] = []

            def work() -> None:
                box.append(self._choose(view, legal, budget, received, cancel))

            await self._thinker.run(
                work, max(0.0, budget + OVERRUN_GRACE - (time.monotonic() - received))
            )
            result = box[0] if box else None
            if result is None:
                cancel.set()
        if result is None:
            self.outcome.defaults_played += 1
            log.warning("the policy overran its %.2fs budget: playing the default action", budget)
            return default
        if isinstance(result, BaseException):
            if not isinstance(result, Exception):
                raise result  # KeyboardInterrupt, SystemExit: not the policy's failure
            # the first failure with its traceback (where the bug is), unless its message
            # is the whole story (plain_failure: a text engine that exited, say)
            plain = self.outcome.defaults_played or getattr(result, "plain_failure", False)
            text = "the policy failed (%r): playing the default action"
            log.error(text, result, exc_info=None if plain else result)
            self.outcome.defaults_played += 1
            return default
        return result

    def _choose(
        self,
        view: View,
        legal: Sequence[Action],
        budget: float | None,
        received: float,
        cancel: threading.Event,
    ) -> int | RawAnswer | BaseException:
        """The policy's choice as a legal index (or its raw answer), or what it raised
        (reported by ``_think``, in the kit's thread)."""
        try:
            left = None if budget is None else max(0.0, budget - (time.monotonic() - received))
            with decision_scope(cancel):
                choice = self.policy.choose(view, legal, left)
            return choice if isinstance(choice, RawAnswer) else resolve_choice(choice, legal)
        except BaseException as exc:  # reported by _think, in the kit's thread
            return exc

    async def _submit(self, stream: PlayStream, decision_id: int, choice: int | RawAnswer) -> None:
        await stream.send(submit_bytes(decision_id, choice))


def run_bot(
    policy: Policy | DecisionFunction,
    *,
    server: str | None = None,
    match_id: str | None = None,
    token: str | None = None,
    name: str | None = None,
    retries: int = 8,
    tls_ca: str | None = None,
    join_timeout: float = JOIN_TIMEOUT,
    log_level: str | int = "info",
    on_client: Callable[[BotClient], None] | None = None,
    auto_play_forced: bool | None = None,
    runner: Callable[[BotClient], MatchOutcome] | None = None,
) -> MatchOutcome:
    """Play one seat of a match until it ends; returns what the kit saw of it.

    ``policy`` is a ``Policy`` or a plain function ``(view, legal, time_left) -> index``.
    ``server`` (``host:port``), ``match_id``, ``token`` and ``tls_ca`` (a PEM CA file: use
    TLS) default to ``$CIRULLA_SERVER``, ``$CIRULLA_MATCH``, ``$CIRULLA_TOKEN`` and
    ``$CIRULLA_TLS_CA``, which the tournament runner and the ladder set for every bot.
    Logs to stderr at ``log_level`` unless the program configured logging itself.
    Raises ``BotError`` when it cannot play on (refused, no game within
    ``join_timeout`` seconds of joining, out of reconnection attempts).
    ``auto_play_forced`` (default: the policy's attribute of that name, else False) asks
    the server to play decisions with a single legal action without asking the policy
    (``Hello.auto_play_forced``): fewer messages, but ``choose`` then misses those turns,
    so a policy that keeps its own account of the game between calls leaves it off. Runs its own
    asyncio event loop in the calling thread: call it from synchronous code (a thread
    of its own is fine), not from inside a coroutine. ``runner``, when given, plays the
    client instead (``cirulla.bots.loop`` runs every match on one loop and channel).
    """
    if not hasattr(policy, "choose"):
        policy = FunctionPolicy(policy)
    brain = cast(Policy, policy)
    setup_logging(log_level, name or brain.name)
    where = connection_from_env(server, match_id, token, tls_ca)
    client = BotClient(
        brain,
        server=where.server,
        match_id=where.match_id,
        token=where.token,
        name=name,
        retries=retries,
        tls_ca=where.tls_ca,
        join_timeout=join_timeout,
        auto_play_forced=auto_play_forced,
    )
    if on_client is not None:
        on_client(client)
    return client.run() if runner is None else runner(client)
