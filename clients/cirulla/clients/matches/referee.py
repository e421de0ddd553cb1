"""Plays one scheduled game: creates the match on the server, starts one process per seat,
watches them and the match, and turns what happened into a journal entry.

The server is the referee of the cards: a bot that hangs, keeps sending illegal actions
or disconnects runs out of its move clock, and with ``TIMEOUT_POLICY_FORFEIT_GAME`` its
side loses the game. What the server cannot see is a bot that never joins (it crashed at
start or the command is wrong): the match would wait forever, so once such a process has
exited this module declares the forfeit itself. A wall-clock limit per game is the last
resort against anything else. Either way the match is then aborted on the server
(``AbortMatch``), so its database does not keep it waiting or running forever.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import grpc

from cirulla.bots.botspec import BotSpec
from cirulla.bots.cgroups import BotLimits, parse_limits
from cirulla.clients.matches.bot_pool import BotPool, BotStartError
from cirulla.clients.matches.files import safe_name, write_atomic
from cirulla.clients.matches.journal import GameResult, Settings
from cirulla.clients.matches.log_budget import earlier_logs
from cirulla.clients.matches.outcome import Outcome
from cirulla.clients.matches.sandbox import Confinement
from cirulla.clients.matches.schedule import ScheduledGame, bot_seed
from cirulla.clients.matches.seat_argv import bot_argv, is_served_spec, seat_env, seat_values
from cirulla.clients.matches.seat_players import (
    NOT_STARTED,
    CommandSeat,
    SeatPlayer,
    ServedSeat,
)
from cirulla.clients.matches.supervise import Child, ServedBot
from cirulla.rules.cards import parse_card
from cirulla.rules.options import side_count, side_of
from cirulla.server import records as record_files
from cirulla.v1 import (
    events_pb2,
    match_pb2,
    match_service_pb2,
    match_service_pb2_grpc,
    match_settings_pb2,
)
from cirulla.wire import card_to_proto, rules_to_proto

POLL_SECONDS = 0.2
#: How long bots may take to leave on their own after the match ended.
EXIT_GRACE = 5.0
#: How long a seat's exited process is given before a never-joined seat is forfeited
#: (a process may exit right after its hello reached the server).
JOIN_GRACE = 1.0
RPC_TIMEOUT = 10.0

_FINAL = (match_pb2.MATCH_STATUS_FINISHED, match_pb2.MATCH_STATUS_ABORTED)


def match_settings(
    settings: Settings, seed: int, deal_set: int | None = None
) -> match_settings_pb2.MatchSettings:
    """The protobuf settings of every tournament match: one game, forfeit on timeout.

    Dealt from ``seed``, or from the explicit deck orders ``--deals`` gives deck set
    ``deal_set``."""
    decks = deck_orders(settings, deal_set)
    return match_settings_pb2.MatchSettings(
        rules=rules_to_proto(settings.preset, settings.rules),
        best_of=1,
        time_control=match_settings_pb2.TimeControl(
            move_limit_ms=settings.move_limit_ms,
            game_bank_ms=settings.game_bank_ms,
            increment_ms=settings.increment_ms,
            margin_ms=settings.margin_ms,
        ),
        timeout_policy=match_settings_pb2.TIMEOUT_POLICY_FORFEIT_GAME,
        seed=None if decks is not None else seed,
        deck_orders=decks,
        disconnect_grace_ms=settings.disconnect_grace_ms,
    )


def deck_orders(settings: Settings, deal_set: int | None) -> match_settings_pb2.DeckOrders | None:
    """The ``--deals`` line's explicit deck orders for ``deal_set``; None: deal from a seed."""
    if not settings.deals or deal_set is None:
        return None
    entry = settings.deals[deal_set % len(settings.deals)]
    if "decks" not in entry:
        return None
    return match_settings_pb2.DeckOrders(
        decks=[
            match_settings_pb2.DeckOrder(cards=[card_to_proto(parse_card(c)) for c in deck])
            for deck in entry["decks"]
        ]
    )


def forfeit_kind(info: match_pb2.SeatInfo | None, crashed: bool) -> Outcome:
    """Why a seat forfeited on its clock, from the server's typed counts: illegal actions
    first (they are why the clock ran out), then a crash, a dropped stream, plain time."""
    if info is not None and info.illegal_actions:
        return Outcome.ILLEGAL
    if crashed:
        return Outcome.CRASH
    if info is not None and info.disconnects:
        return Outcome.DISCONNECT
    return Outcome.TIMEOUT


#: The server's reason for a finished game, in ``GameResult.end``'s words.
_END_OF_REASON = {
    events_pb2.GAME_END_REASON_TARGET: "target",
    events_pb2.GAME_END_REASON_CAPPOTTO: "cappotto",
    events_pb2.GAME_END_REASON_FORFEIT: "forfeit",
    events_pb2.GAME_END_REASON_ABORTED: "void",
}


def abort_reason(never_joined: set[int], settings: Settings) -> str:
    """What AbortMatch tells the server (and its players) about a game decided here."""
    if never_joined:
        seats = ", ".join(str(s) for s in sorted(never_joined))
        return (
            f"decided by the tournament runner: seat {seats} exited without joining; "
            "its side forfeits"
        )
    return (
        f"decided by the tournament runner: wall-clock limit of {settings.game_timeout:.0f}s "
        "per game reached"
    )


NOT_LISTED = "record not saved: the server listed no record for this match"


def deal_group(seed: int) -> str:
    """The duplicate-deal group of a deck seed: every game dealt from it, whatever the
    pairing, shares its cards. The name does not reveal the seed."""
    return "deals-" + hashlib.sha256(f"cirulla-deals:{seed}".encode()).hexdigest()[:16]


@dataclass(frozen=True)
class GameSeam:
    """What a caller other than the tournament brings to one game (the ladder: its
    duplicate pair's deal group, its record of the created match, its shared pool).

    Every field is optional; the defaults play the game as a tournament does.
    """

    #: the match server's ``deal_group`` (default: the deck seed's, ``deal_group``)
    deal_group: str | None = None
    #: its ``deal_group_size``: games dealt alike (default: ``group_sizes`` of the seed)
    deal_group_size: int | None = None
    #: called with the CreateMatch response before any bot is given its seat (the
    #: ladder stores the server's id and seat tokens first); an exception it raises
    #: ends the game there, after the hook has done what the match needs (abort it)
    on_created: Callable[[match_service_pb2.CreateMatchResponse], None] | None = None
    #: how a kept-alive seat's process is taken, given the bot, the spec it must run and
    #: its limits (default: the referee's pool's, told when the game is over); the ladder's
    #: pool also keeps a process from both games of a pair, or any while the pair is open
    acquire: Callable[[str, BotSpec, BotLimits | None], ServedBot] | None = None


@dataclass
class Referee:
    """Shared by the worker threads: one channel to the server, the output folder."""

    settings: Settings
    server: str
    out: Path
    admin_token: str | None = None
    stop: threading.Event | None = None
    #: Games per deck seed in the whole schedule: the size of each duplicate-deal group.
    group_sizes: dict[int, int] = field(default_factory=dict)
    #: Kept-alive bots shared with other referees (a ladder worker keeps one pool for all
    #: its matches); its owner closes it, ``close()`` does not. Default: a pool of its own.
    bot_pool: BotPool | None = None
    #: Bots run sandboxed (``--sandbox``): ``cmd:`` seats here, kept-alive ones in
    #: ``bot_pool`` (built with the same confinement); both dial the server through it.
    confinement: Confinement | None = None
    #: Write ``records/<id>.json.gz`` and ``.txt.gz`` (gzip, about a tenth of the size)
    #: rather than ``.json`` and ``.txt``: the ladder, which keeps records for months.
    #: ``cirulla replay`` reads either; a tournament keeps plain files for its readers.
    compress_records: bool = False

    def __post_init__(self) -> None:
        self.channel = grpc.insecure_channel(self.server)
        self.stub = match_service_pb2_grpc.MatchServiceStub(self.channel)
        self.metadata = (
            (("authorization", f"Bearer {self.admin_token}"),) if self.admin_token else ()
        )
        (self.out / "logs").mkdir(parents=True, exist_ok=True)
        (self.out / "records").mkdir(parents=True, exist_ok=True)
        self.pool = self.bot_pool or BotPool(
            self.settings.bots, self.out / "logs", confinement=self.confinement
        )
        #: The server's address as the bots dial it.
        self.bot_server = self.confinement.server_address if self.confinement else self.server
        #: Records are fetched in the background, one at a time; failures are kept here.
        self.records = ThreadPoolExecutor(1, thread_name_prefix="records")
        self.record_errors: list[str] = []
        #: Matches whose record the server did not list yet: on a server without our
        #: admin token a twin's record is withheld until its whole deal group has
        #: finished (no peeking at decks still in play); fetched again at the end.
        self._unlisted: list[str] = []
        self._lock = threading.Lock()

    def close(self) -> None:
        """Stop the bots; fetch the records still due (none if the run is interrupted)."""
        if self.bot_pool is None:
            self.pool.close()
        if not self._stopping():
            # every game is over: withheld records are listed now (after those queued)
            self.records.submit(self._save_unlisted)
        self.records.shutdown(wait=True, cancel_futures=self._stopping())
        self.channel.close()

    def _stopping(self) -> bool:
        return self.stop is not None and self.stop.is_set()

    def play(self, game: ScheduledGame, seam: GameSeam | None = None) -> GameResult | None:
        """Play ``game`` to the end; None if the tournament was interrupted meanwhile.

        ``seam``: what a caller other than the tournament adds (see ``GameSeam``)."""
        seam = seam or GameSeam()
        group = deal_group(game.seed) if seam.deal_group is None else seam.deal_group
        pooled = group or deal_group(game.seed)  # the pool's group: never none
        size = self.group_sizes.get(game.seed, 0)
        size = size if seam.deal_group_size is None else seam.deal_group_size
        notes: list[str] = []
        # Kept-alive bots first: the match is created once they are ready to join it.
        ready: dict[int, ServedBot | None] = {}
        failed_logs: dict[int, Path | None] = {}
        for seat, bot in enumerate(game.seats):
            spec = self.settings.bots[bot]
            if is_served_spec(spec):
                try:
                    limits = self.limits_of(bot)
                    if seam.acquire is not None:
                        ready[seat] = seam.acquire(bot, spec, limits)
                    else:
                        ready[seat] = self.pool.acquire(
                            bot, spec=spec, deal_group=pooled, limits=limits, group_size=size
                        )
                except OSError as exc:
                    ready[seat] = None
                    failed_logs[seat] = exc.log_path if isinstance(exc, BotStartError) else None
                    notes.append(f"seat {seat} ({bot}) could not start: {exc}")
        seats: list[SeatPlayer] = []
        match: match_pb2.Match | None = None
        #: the runner aborted the match on the server (a seat never joined, wall-clock
        #: limit): it is over there too, and the seats that joined are told so
        aborted = False
        started = time.monotonic()  # the game's clock: bots' start-up is not part of it
        try:
            created = self.stub.CreateMatch(
                match_service_pb2.CreateMatchRequest(
                    settings=match_settings(self.settings, game.seed, game.deal_set),
                    deal_group=group,
                    deal_group_size=size,
                ),
                timeout=RPC_TIMEOUT,
                metadata=self.metadata,
            )
            if seam.on_created is not None:
                seam.on_created(created)
            match_id = created.match.match_id
            tokens = {t.seat: t.token for t in created.seat_tokens}
            wake = threading.Event()
            for seat, bot in enumerate(game.seats):
                values = seat_values(
                    server=self.bot_server,
                    match=match_id,
                    token=tokens[seat],
                    seat=seat,
                    name=bot,
                    seed=bot_seed(self.settings.bot_seed or 0, game.index, seat),
                )
                if seat in ready:
                    served = ready.pop(seat)
                    if served is None:
                        seats.append(CommandSeat(None, failed_logs.get(seat)))
                    else:
                        ticket = served.assign(values, wake)
                        seats.append(ServedSeat(self.pool, bot, served, ticket))
                else:
                    try:
                        seats.append(self._command_seat(bot, values))
                    except (OSError, ValueError) as exc:  # ValueError: a retired {token}
                        seats.append(CommandSeat(None, self._seat_log(values)))
                        notes.append(f"seat {seat} ({bot}) could not start: {exc}")
            match, forfeits, timed_out = self._watch(match_id, tokens[0], seats, started, wake)
            if match is None:
                return None
            if match.status not in _FINAL:
                # Decided here, not on the server: end the match there too.
                reason = abort_reason(forfeits, self.settings)
                finished, aborted = self._abort(match_id, reason, notes, tokens[0])
                if finished is not None:
                    match, forfeits, timed_out = finished, set(), False
        finally:
            for seat, served in ready.items():  # acquired, never assigned (an error)
                if served:
                    self.pool.release(game.seats[seat], served)
            # Bots of a match over on the server (finished, or aborted here: the seats
            # that joined get its goodbye) leave by themselves: a kept-alive one that
            # reports it within the grace goes back to its pool, even when the match
            # ended through another seat's fault; others wait for nothing.
            over = aborted or (match is not None and match.status in _FINAL)
            codes = self._reap(seats, EXIT_GRACE if over else 0.0)
            for ended in seats:  # each bot's logs back under --bot-logs
                if isinstance(ended, CommandSeat) and ended.child is not None:
                    self.pool.budget.closed(ended.child.log_path)
        for seat, player in enumerate(seats):
            killed = player.killed_by()
            if killed:
                notes.append(f"seat {seat} ({game.seats[seat]}) {killed}")
            throttled = player.throttled_by()
            if throttled:
                notes.append(f"seat {seat} ({game.seats[seat]}) {throttled}")
        logs = tuple(
            str(p.relative_to(self.out)) if p is not None and p.is_relative_to(self.out) else ""
            for p in (seat.log_path for seat in seats)
        )
        result = self._result(
            game, match_id, match, forfeits, timed_out, codes, notes, started, logs
        )
        if seam.acquire is None:  # over for good: its group's processes wait for the rest
            self.pool.game_over(pooled, game.index, size)
        return result

    def _seat_log(self, values: dict[str, str]) -> Path:
        """A ``cmd:`` seat's log (what it said, or why it could not start)."""
        return self.out / "logs" / f"{safe_name(values['match'])}-{values['seat']}.log"

    def _command_seat(self, bot: str, values: dict[str, str]) -> CommandSeat:
        """A ``cmd:`` bot: a fresh process for this seat of this game."""
        log = self._seat_log(values)
        argv = bot_argv(self.settings.bots[bot], values)
        limits = self.limits_of(bot) or (
            self.confinement.limits if self.confinement is not None else BotLimits()
        )
        # started by this game's thread, which lives until the seat is reaped
        child = Child(
            argv,
            log,
            seat_env(values),
            tied=True,
            confinement=self.confinement,
            bot=bot,
            limits=self.pool.budget.cap(limits),  # one log never passes --bot-logs alone
        )
        self.pool.budget.opened(bot, log)
        return CommandSeat(child)

    def count_logs(self, journaled: Iterable[GameResult]) -> None:
        """Count the logs an earlier run left here in their bots' budgets (``--bot-logs``):
        a resumed tournament's, or a pool tournament's whose referee is made again (a
        ladder restarted, or the referee closed while idle); ``log_budget.earlier_logs``
        says which file is whose."""
        self.pool.budget.count_earlier(earlier_logs(self.out, journaled, self.settings.bots))

    def limits_of(self, bot: str) -> BotLimits | None:
        """``bot``'s own limits (``Settings.bot_limits``) over the confinement's
        defaults; None: the defaults."""
        text = self.settings.bot_limits.get(bot)
        if not text:
            return None
        if self.confinement is not None:
            return self.confinement.limits_for(text)
        return parse_limits(text)

    def _watch(
        self,
        match_id: str,
        seat_token: str,
        seats: list[SeatPlayer],
        started: float,
        wake: threading.Event,
    ) -> tuple[match_pb2.Match | None, set[int], bool]:
        """Poll until the match is over, a seat can never join, or the game takes too long.

        Served bots report leaving the match (``wake``), so a finished game is seen at once
        rather than at the next poll.
        """
        exited_since: dict[int, float] = {}
        while True:
            if self._stopping():
                return None, set(), False
            wake.clear()
            match = self._get_match(match_id, seat_token)
            if match.status in _FINAL:
                return match, set(), False
            now = time.monotonic()
            for seat, player in enumerate(seats):
                player.check_limits()  # a tree over a hard limit is stopped now
                if player.gone():
                    exited_since.setdefault(seat, now)
            if match.status == match_pb2.MATCH_STATUS_WAITING:
                joined = {s.seat for s in match.seats if s.name or s.connected}
                gone = {
                    seat
                    for seat, since in exited_since.items()
                    if seat not in joined and now - since >= JOIN_GRACE
                }
                if gone:
                    return match, gone, False
            if now - started > self.settings.game_timeout:
                return match, set(), True
            wake.wait(POLL_SECONDS)

    def _abort(
        self, match_id: str, reason: str, notes: list[str], seat_token: str
    ) -> tuple[match_pb2.Match | None, bool]:
        """AbortMatch, so the server does not keep the match waiting or running forever.

        With the admin token when there is one; on an open server as the match's creator,
        which proves itself with one of the match's seat tokens.

        Returns the match if it finished on its own meanwhile (its result then counts),
        and whether the match is now over on the server (aborted, or finished); a failure
        is noted and otherwise ignored: the game is decided either way.
        """
        try:
            self.stub.AbortMatch(
                match_service_pb2.AbortMatchRequest(match_id=match_id, reason=reason),
                timeout=RPC_TIMEOUT,
                metadata=self.metadata or (("authorization", f"Bearer {seat_token}"),),
            )
            return None, True
        except grpc.RpcError as exc:
            failure = f"match not aborted on the server: {exc.code().name} {exc.details()}"
        try:
            match = self._get_match(match_id, seat_token)
        except grpc.RpcError:
            match = None
        if match is not None and match.status == match_pb2.MATCH_STATUS_FINISHED:
            return match, True
        notes.append(failure)
        return None, False

    def _get_match(self, match_id: str, seat_token: str) -> match_pb2.Match:
        """The match's summary, as its creator: a twin's is withheld from the public while
        its deal group plays (with the admin token, or one of the match's seat tokens)."""
        response = self.stub.GetMatch(
            match_service_pb2.GetMatchRequest(match_id=match_id),
            timeout=RPC_TIMEOUT,
            metadata=self.metadata or (("authorization", f"Bearer {seat_token}"),),
        )
        match: match_pb2.Match = response.match
        return match

    def _reap(self, seats: list[SeatPlayer], grace: float) -> list[int | None]:
        """Let the bots leave the match on their own for a moment, then stop what is left."""
        deadline = time.monotonic() + grace
        return [seat.finish(max(0.0, deadline - time.monotonic())) for seat in seats]

    def _clock(self) -> str:
        """The clock a seat ran out of: ``move clock 10 s``, with its bank if any."""
        clock = f"move clock {self.settings.move_limit_ms / 1000:g} s"
        if self.settings.game_bank_ms:
            clock += f", game bank {self.settings.game_bank_ms / 1000:g} s"
        return clock

    def _result(
        self,
        game: ScheduledGame,
        match_id: str,
        match: match_pb2.Match,
        forfeits: set[int],
        timed_out: bool,
        codes: list[int | None],
        notes: list[str],
        started: float,
        logs: tuple[str, ...],
    ) -> GameResult:
        players = len(game.seats)
        sides = side_count(players)
        outcomes: list[str] = [Outcome.OK] * players
        winner: int | None = None
        totals: tuple[int, ...] = (0,) * sides
        deals = 0
        forfeit_sides: set[int] = set()
        unjoined: set[int] = set()
        end = "void"
        seat_notes = {s.seat: list(s.notes) for s in match.seats}
        seat_info = {s.seat: s for s in match.seats}

        def crashed(seat: int) -> bool:
            return (codes[seat] or 0) != 0

        if match.status == match_pb2.MATCH_STATUS_FINISHED and match.games:
            result = match.games[-1]
            totals = tuple(result.totals) or totals
            deals = result.deals
            winner = result.winner_side if result.HasField("winner_side") else None
            end = _END_OF_REASON.get(result.reason, "void")
            if result.reason == events_pb2.GAME_END_REASON_TARGET and result.cappotto:
                end = "cappotto"
            if result.reason == events_pb2.GAME_END_REASON_FORFEIT:
                seat = result.forfeit_seat if result.HasField("forfeit_seat") else None
                if seat is not None:
                    kind = forfeit_kind(seat_info.get(seat), crashed(seat))
                    outcomes[seat] = kind
                    forfeit_sides.add(side_of(seat, players))
                    notes.append(
                        f"seat {seat} ({game.seats[seat]}) forfeited: {kind}"
                        + (f" ({self._clock()})" if kind == Outcome.TIMEOUT else "")
                        + (f", exit code {codes[seat]}" if codes[seat] else "")
                        + (
                            f" (its log: {logs[seat]})"
                            if kind == Outcome.CRASH and logs[seat]
                            else ""
                        )
                    )
        elif forfeits:
            end = "never-joined"
            unjoined |= forfeits
            for seat in sorted(forfeits):
                outcomes[seat] = Outcome.CRASH
                forfeit_sides.add(side_of(seat, players))
                # NOT_STARTED is no exit code of the bot's: its process never ran, or a
                # kept bot's exited before it was ready (the line before says how)
                how = (
                    "did not start"
                    if codes[seat] == NOT_STARTED
                    else f"exited with code {codes[seat]} without joining the match"
                )
                notes.append(f"seat {seat} ({game.seats[seat]}) {how}; forfeited")
        elif timed_out:
            end = "time-limit"
            notes.append(
                f"wall-clock limit of {self.settings.game_timeout:.0f}s reached "
                f"(match status {match_pb2.MatchStatus.Name(match.status)}); game void"
            )
            for seat in range(players):
                if not any(s.seat == seat and (s.name or s.connected) for s in match.seats):
                    unjoined.add(seat)
                    outcomes[seat] = Outcome.TIMEOUT
                    forfeit_sides.add(side_of(seat, players))
        else:
            notes.append(f"match ended as {match_pb2.MatchStatus.Name(match.status)}; game void")
        if winner is None and forfeit_sides:
            remaining = set(range(sides)) - forfeit_sides
            if len(remaining) == 1:
                winner = remaining.pop()
        for seat, code in enumerate(codes):
            # After a seat never joined (or the wall-clock limit), the runner aborts the
            # match, and the seats that did join end with it (their bots exit 1, or
            # report 1, on an aborted match): that is no fault of theirs, and naming it
            # blamed the healthy opponent of a dead bot.
            if code and outcomes[seat] == Outcome.OK and not forfeits and not timed_out:
                notes.append(f"seat {seat} ({game.seats[seat]}) exited with code {code}")
        for seat, seat_note in sorted(seat_notes.items()):
            if seat_note:
                notes.append(f"server on seat {seat} ({game.seats[seat]}): {'; '.join(seat_note)}")
        if match.status == match_pb2.MATCH_STATUS_FINISHED:
            # Off the game's path: the next game of this slot starts meanwhile.
            self.records.submit(self._save_records_noted, match_id)
        return GameResult(
            index=game.index,
            match_id=match_id,
            seats=game.seats,
            seed=game.seed,
            deal_set=game.deal_set,
            group=game.group,
            winner=winner,
            totals=totals,
            deals=deals,
            seat_outcomes=tuple(outcomes),
            notes=tuple(notes),
            forfeit_sides=tuple(sorted(forfeit_sides)),
            unjoined=tuple(sorted(unjoined)),
            seconds=round(time.monotonic() - started, 3),
            end=end,
            logs=logs,
        )

    def _save_records_noted(self, match_id: str, last_try: bool = False) -> None:
        error = self._save_records(match_id)
        with self._lock:
            if error == NOT_LISTED and not last_try:
                self._unlisted.append(match_id)
            elif error:
                self.record_errors.append(f"{match_id}: {error}")

    def _save_unlisted(self) -> None:
        with self._lock:
            unlisted, self._unlisted = self._unlisted, []
        for match_id in unlisted:
            self._save_records_noted(match_id, last_try=True)

    def _save_records(self, match_id: str) -> str | None:
        """records/<match_id>.json (the record file format) and its text form, .txt."""
        try:
            listed = self.stub.ListRecords(
                match_service_pb2.ListRecordsRequest(match_id=match_id),
                timeout=RPC_TIMEOUT,
                metadata=self.metadata,
            )
            records = [
                self.stub.GetRecord(
                    match_service_pb2.GetRecordRequest(record_id=summary.record_id),
                    timeout=RPC_TIMEOUT,
                    metadata=self.metadata,
                ).record
                for summary in listed.records
            ]
        except grpc.RpcError as exc:
            return f"record not saved: {exc.code().name} {exc.details()}"
        if not records:
            return NOT_LISTED
        path = self.record_path(match_id)
        text = "\n".join(record_files.record_text(r) for r in records)
        doc = record_files.dumps(record_files.record_document(records, match_id))
        gz = self.compress_records
        # text first, the .json last: a record file that exists is whole (restore_records)
        write_atomic(
            self.out / "records" / f"{safe_name(match_id)}.txt{'.gz' if gz else ''}", text, gz
        )
        write_atomic(path, doc, gz)
        return None

    def record_path(self, match_id: str) -> Path:
        suffix = ".json.gz" if self.compress_records else ".json"
        return self.out / "records" / f"{safe_name(match_id)}{suffix}"

    def restore_records(self, journaled: Iterable[GameResult]) -> int:
        """Queue the records of journaled games whose record file is missing.

        A game is journaled when it ends, its record saved in the background (a twin's
        only when its whole deal group is over), so a runner killed in between leaves a
        journaled game without its file; the server's database still holds the record,
        and --resume fetches it again. How many were queued."""
        missing = [
            r.match_id
            for r in journaled
            if r.match_id
            and (r.deals or r.winner is not None)
            and not self.record_path(r.match_id).exists()
        ]
        for match_id in missing:
            self.records.submit(self._save_records_noted, match_id)
        return len(missing)
