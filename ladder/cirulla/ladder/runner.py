"""The worker loop: claim a scheduled match, host it on a match server, start its managed
bots, report the result. One unit shared by ``cirulla ladder serve`` (threads inside the
ladder process) and ``cirulla ladder worker`` (a process per machine on PostgreSQL).

A game is played by the tournament's ``Referee`` (create the match, one process per
seat, watch it, forfeits and wall-clock limit, abort on the server), so a ladder game
and a tournament game are judged the same way. The ladder adds three things, through the
referee's ``GameSeam``: the match is created with its duplicate pair's group size (twins
share deck orders, their records stay closed until both are over); its server id and
seat tokens are stored (``mark_running``) before any bot starts, so a restarted ladder
knows what was being played; and its kept-alive bots come from the worker's pool, which
starts each seat's version and never lets a process play both twins of a pair.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shlex
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import grpc
from sqlalchemy import func, select

from cirulla.bots.botspec import BotSpec
from cirulla.bots.cgroups import BotLimits
from cirulla.clients.matches.bot_pool import BotPool
from cirulla.clients.matches.files import log_tail, safe_name
from cirulla.clients.matches.journal import GameResult, Settings
from cirulla.clients.matches.log_budget import DEFAULT_BOT_LOGS, LogBudget
from cirulla.clients.matches.outcome import Outcome
from cirulla.clients.matches.referee import GameSeam, Referee
from cirulla.clients.matches.sandbox import Confinement
from cirulla.clients.matches.schedule import ScheduledGame, new_bot_seed_base
from cirulla.clients.matches.supervise import READY_TIMEOUT, ServedBot
from cirulla.ladder import endings, metrics
from cirulla.ladder.defaults import LEASE_SECONDS
from cirulla.ladder.earlier_logs import count_earlier_logs
from cirulla.ladder.idle import MOST_SECONDS, Backoff, nudges, wait_idle
from cirulla.ladder.schema import ladder_matches
from cirulla.ladder.store import (
    IN_FLIGHT,
    ClaimedMatch,
    LadderStore,
    MatchOutcome,
    SeatOutcome,
)
from cirulla.rules.options import side_of
from cirulla.v1 import match_service_pb2

log = logging.getLogger("cirulla.ladder")

#: Referee outcomes -> ladder seat outcomes (a seat that exited before joining is a crash).
_OUTCOMES: dict[str, str] = {Outcome.FORFEIT: Outcome.TIMEOUT}


class LeaseLost(RuntimeError):
    """The match was taken from this worker (lease expired, cancelled) before it started."""


def referee_settings(match: ClaimedMatch) -> Settings:
    """The tournament settings the referee needs for one ladder match."""
    config = match.config
    return Settings(
        # A connect-in seat's bot gets its assignment through its Enroll stream (any
        # ladder process, from the database); on this worker a stand-in process only
        # waits for it to join (ladder/cirulla/ladder/await_join.py).
        bots={
            s.bot_name: BotSpec.parse(CONNECT_IN_SEAT if s.connect_in else s.spec)
            for s in match.seats
        },
        players=match.players,
        rules={**config.rules, "players": match.players},
        preset=config.preset,
        move_limit_ms=config.move_limit_ms,
        disconnect_grace_ms=config.disconnect_grace_ms,
        game_timeout=config.game_timeout,
        # every match its own random base: the bots' CIRULLA_SEED values are neither the
        # same from match to match nor related to the deck
        bot_seed=new_bot_seed_base(),
        # each seat's version runs under its own limits (``ladder add --memory ...``)
        bot_limits={s.bot_name: s.limits for s in match.seats if s.limits},
    )


#: The seat process of a connect-in bot: waits until the remote bot joined its seat.
CONNECT_IN_SEAT = "cmd:" + shlex.join([sys.executable, "-m", "cirulla.ladder.await_join"])


def outcome_of(
    result: GameResult, out: Path, connect_in: frozenset[int] = frozenset()
) -> MatchOutcome:
    """A referee's GameResult as the ladder records it. A connect-in seat whose stand-in
    process exited before the seat was taken (``crash`` to the referee) is ``no-join``."""
    seats: list[SeatOutcome] = []
    for seat, kind in enumerate(result.seat_outcomes):
        kind = _OUTCOMES.get(kind, kind)
        if seat in connect_in and kind == Outcome.CRASH:
            kind = Outcome.NO_JOIN
        fault = ""
        tail = ""
        if kind != Outcome.OK:
            fault = "; ".join(n for n in result.notes if n.startswith(f"seat {seat} "))
            logged = result.logs[seat] if seat < len(result.logs) else ""
            if logged:
                tail = log_tail(out / logged, match_id=result.match_id)
            else:
                tail = log_tail(out / "logs" / f"{safe_name(result.match_id)}-{seat}.log")
        seats.append(SeatOutcome(seat, kind, fault, tail))
    void = result.winner is None and not result.forfeit_sides and result.deals == 0
    end, kind = endings.ending_of(
        {
            "end": _LADDER_END.get(result.end, ""),
            "forfeit_sides": list(result.forfeit_sides),
            "void": void,
            "winner": result.winner,
            "totals": list(result.totals),
        },
        [
            {"side": side_of(s.seat, len(seats)), "outcome": s.outcome, "fault": s.fault}
            for s in seats
        ],
        None,
    )
    if result.end == "never-joined" or (result.end == "time-limit" and result.forfeit_sides):
        # the referee's own words: the forfeiting seat never took its seat
        end, kind = endings.FORFEIT, "never-joined"
    return MatchOutcome(
        winner=result.winner,
        totals=tuple(result.totals),
        seats=tuple(seats),
        deals=result.deals,
        forfeit_sides=tuple(result.forfeit_sides),
        void=void,
        notes=tuple(result.notes),
        end=end,
        forfeit_kind=kind,
        logs=tuple(result.logs),
    )


#: The referee's end reasons the ladder keeps as they are (``endings.END_REASONS``); a
#: forfeit's kind and a never-joined seat are worked out from the seats.
_LADDER_END = {
    "target": endings.TARGET,
    "cappotto": endings.CAPPOTTO,
    "time-limit": endings.TIME_LIMIT,
    "void": endings.VOID,
}


class LadderBotPool(BotPool):
    """The kept-alive bots of one worker, shared by all its matches.

    A bot process is started at its first match here and plays match after match
    (``cirulla.bots.loop``), like the tournament's; a process that crashed or hung is
    stopped by the referee and the next match starts a fresh one. The pool is keyed by
    bot name, and each acquisition says which spec (version) the seat runs: a process
    of an older version is stopped rather than reused. Idle processes stop after
    ``BOT_IDLE_SECONDS``, so a ladder with many bots keeps only those it is playing.
    With ``confinement`` every process runs sandboxed.

    A process that played a game of a duplicate pair plays nothing else until the pair
    is over (``BotPool``: quarantined): the runner reports each pair match it ended
    (``game_over``), and ``settled`` (the ladder's database: no match of the pair
    scheduled, claimed or running) covers a twin played or cancelled elsewhere.
    """

    def __init__(
        self,
        logs: Path,
        confinement: Confinement | None = None,
        settled: Callable[[str], bool] | None = None,
        log_budget: LogBudget | None = None,
    ) -> None:
        # tied: its processes die with the ladder, even by SIGKILL
        super().__init__(
            {}, logs, tied=True, confinement=confinement, settled=settled, log_budget=log_budget
        )

    def acquire(
        self,
        bot: str,
        timeout: float = READY_TIMEOUT,
        spec: BotSpec | None = None,
        deal_group: str | None = None,
        limits: BotLimits | None = None,
        group_size: int | None = None,
        *,
        pair_id: str | None = None,
    ) -> ServedBot:
        """A process of ``bot`` running ``spec`` (the pool has no specs of its own: each
        match's seat says its version's); for a twin of duplicate pair ``pair_id`` (the
        ladder's deal group, two games) only one that has not played the other twin; and
        never one that played a game of a pair still open."""
        if spec is None:
            raise ValueError(f"bot {bot}: the ladder's pool needs the spec the seat runs")
        if pair_id is not None:
            return super().acquire(
                bot, timeout, spec, deal_group=pair_id, limits=limits, group_size=2
            )
        return super().acquire(
            bot, timeout, spec, deal_group=deal_group, limits=limits, group_size=group_size
        )

    def release(self, bot: str, served: ServedBot) -> None:
        """Back to the pool; a process whose log passed ``BOT_LOG_BYTES`` is stopped
        instead, so the next match starts a fresh one with a new log: bot logs rotate
        (the old file goes with ``--keep-records``) and never reach the output limit
        (64 MiB by default), which would stop the bot mid-game."""
        try:
            size = served.log_path.stat().st_size
        except OSError:
            size = 0
        if size >= BOT_LOG_BYTES:
            log.info("ladder_bot_log_rotated bot=%s log=%s bytes=%d", bot, served.log_path, size)
            self.discard(served)
            return
        super().release(bot, served)

    def _twin_spawned(self, bot: str) -> None:
        metrics.BOT_RESTARTS.labels("duplicate_twin").inc()

    def _spawn(
        self, bot: str, argv: list[str], number: int, limits: BotLimits | None = None
    ) -> ServedBot:
        metrics.BOT_STARTS.inc()
        return super()._spawn(bot, argv, number, limits)


#: A kept-alive bot whose log reached this size is replaced after its match (4 MiB: a
#: random bot writes about 0.7 KB a game, so about 6,000 games a process; the logs of
#: the processes running stay under 4 MiB each, the others go with --keep-records).
#: $CIRULLA_LADDER_BOT_LOG_BYTES sets another, as the retention test does to see it.
BOT_LOG_BYTES = int(os.environ.get("CIRULLA_LADDER_BOT_LOG_BYTES") or 4 * 1024 * 1024)
#: Seconds a kept-alive bot may stay idle before its worker stops it.
BOT_IDLE_SECONDS = 120.0


@dataclass
class MatchRunner:
    """Plays claimed ladder matches on one match server.

    ``out`` gets the bots' logs and the games' records (``logs/``, ``records/``), as
    with a tournament. Several threads may share one runner; each ``run_one`` call
    plays one match from claim to result.
    """

    store: LadderStore
    server_address: str
    out: Path
    worker_id: str
    admin_token: str | None = None
    stop: threading.Event = field(default_factory=threading.Event)
    lease_seconds: float = LEASE_SECONDS
    #: called with (match id, outcome or None) after each match, for logs and benches
    on_done: Callable[[str, MatchOutcome | None], None] | None = None
    #: how the managed bots run: sandboxed (``ladder serve``'s default) or not (None)
    confinement: Confinement | None = None
    #: the address this runner's referee dials (default ``server_address``, which is
    #: what the ladder stores and connect-in bots get: with TLS the public port, while
    #: the referee uses the ladder's own plaintext loopback port)
    dial: str | None = None
    #: ``--bot-logs``: what each bot's logs may hold on disk in all, across its matches
    bot_logs: int = DEFAULT_BOT_LOGS

    def __post_init__(self) -> None:
        #: Kept-alive bot processes, shared by every match this runner plays; with them
        #: each bot's log budget, which its ``cmd:`` seats' logs count in too, and the
        #: logs an earlier ladder process left in the folder (the budget holds across
        #: restarts).
        budget = LogBudget(self.bot_logs)
        try:
            count_earlier_logs(self.store, self.out / "logs", budget)
        except Exception:  # the ladder plays on; its earlier logs are only not counted
            log.exception("ladder_bot_logs_count_failed logs=%s", self.out / "logs")
        self.bots = LadderBotPool(self.out / "logs", self.confinement, self.pair_over, budget)

    def pair_over(self, pair_id: str) -> bool:
        """No match of duplicate pair ``pair_id`` is scheduled, claimed or running any
        more (each finished or was cancelled): its bots' processes may play again."""
        with self.store.engine.connect() as conn:
            left = conn.execute(
                select(func.count())
                .select_from(ladder_matches)
                .where(
                    ladder_matches.c.pair_id == pair_id,
                    ladder_matches.c.status.in_(IN_FLIGHT),
                )
            ).scalar_one()
        return left == 0

    def close(self) -> None:
        """Stop the kept-alive bots (once the threads playing matches have stopped)."""
        self.bots.close()

    def run_one(self) -> str | None:
        """Claim and play one match; its id, or None when nothing was waiting."""
        self.bots.stop_idle(BOT_IDLE_SECONDS)
        claimed = self.store.matches.claim(self.worker_id, self.server_address, self.lease_seconds)
        if claimed is None:
            return None
        outcome: MatchOutcome | None = None
        over = False  # the match ended for good: finished or cancelled, never replayed
        try:
            outcome = self.play(claimed)
            over = outcome is not None
        except LeaseLost as exc:  # re-queued (it may be played again) or cancelled
            log.warning("ladder_lease_lost match=%s %s", claimed.id, exc)
        except Exception as exc:  # the ladder goes on; the match ends with the reason
            log.exception("ladder_match_failed match=%s", claimed.id)
            self.store.matches.cancel(claimed.id, f"the worker failed to play it: {exc}")
            over = True
        if over and claimed.pair_id:
            # the pair's processes play again once both of its matches are over
            self.bots.game_over(claimed.pair_id, claimed.id, 2)
        if self.on_done is not None:
            self.on_done(claimed.id, outcome)
        return claimed.id

    def play(self, match: ClaimedMatch) -> MatchOutcome | None:
        """Host ``match`` on the server, play it with the referee, record the result."""
        names = [s.bot_name for s in match.seats]
        game = ScheduledGame(0, tuple(dict.fromkeys(names)), 0, match.seed, tuple(names))
        settings = referee_settings(match)
        referee = Referee(
            settings,
            self.dial or self.server_address,
            self.out,
            self.admin_token,
            self.stop,
            bot_pool=self.bots,
            confinement=self.confinement,
            # records/*.json.gz: a ladder keeps its records for months (docs/ladder.md,
            # "Running it for months")
            compress_records=True,
        )
        seam = GameSeam(
            # twins share deck orders; their records stay closed until both are over
            deal_group_size=2 if match.pair_id else 0,
            on_created=lambda created: self._created(match, referee, created),
            acquire=lambda bot, spec, limits: self.bots.acquire(
                bot, spec=spec, pair_id=match.pair_id, limits=limits
            ),
        )
        try:
            result = referee.play(game, seam)
        finally:
            referee.close()
        if result is None:  # stopping: the restart decides (finished or cancelled)
            return None
        remote = frozenset(s.seat for s in match.seats if s.connect_in)
        outcome = outcome_of(result, self.out, remote)
        if self.store.results.finish(match.id, outcome):
            metrics.match_played(match.queue, (s.outcome for s in outcome.seats))
            log.info(
                "ladder_match_finished match=%s server_match=%s winner=%s totals=%s",
                match.id,
                result.match_id,
                outcome.winner,
                outcome.totals,
            )
        return outcome

    def _created(
        self,
        match: ClaimedMatch,
        referee: Referee,
        created: match_service_pb2.CreateMatchResponse,
    ) -> None:
        """Store the server's id and seat tokens before any bot starts (``running``), or
        abort the match and give up when the claim was lost meanwhile."""
        server_id = created.match.match_id
        tokens = {t.seat: t.token for t in created.seat_tokens}
        if not self.store.matches.mark_running(match.id, self.worker_id, server_id, tokens):
            with contextlib.suppress(grpc.RpcError):
                referee.stub.AbortMatch(
                    match_service_pb2.AbortMatchRequest(
                        match_id=server_id, reason="the ladder took this match back"
                    ),
                    timeout=10,
                    metadata=referee.metadata,
                )
            raise LeaseLost(f"match {match.id} is no longer claimed by {self.worker_id}")

    def loop(self, idle_poll: float = MOST_SECONDS) -> None:
        """Play matches until ``stop`` is set; whenever none is waiting, wait a little
        longer each time, up to ``idle_poll`` seconds (``cirulla.ladder.idle``)."""
        backoff = Backoff(most=idle_poll)
        while not self.stop.is_set():
            seen = nudges(self.stop)
            try:
                played = self.run_one()
            except Exception:
                log.exception("ladder_worker_error worker=%s", self.worker_id)
                played = None
            if played is None:
                wait_idle(self.stop, backoff, seen)
            else:
                backoff.reset()


def heartbeat_loop(
    store: LadderStore, worker_id: str, stop: threading.Event, lease_seconds: float
) -> None:
    """Keep the worker's leases alive (every third of a lease) until ``stop``."""
    while not stop.wait(lease_seconds / 3):
        try:
            store.workers.heartbeat(worker_id, lease_seconds)
        except Exception:
            log.exception("ladder_heartbeat_failed worker=%s", worker_id)
