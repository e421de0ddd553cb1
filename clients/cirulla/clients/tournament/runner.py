"""Runs a tournament: schedule, concurrent games, journal, live progress, final tables.

The main thread owns the journal, the standings and the screen; worker threads only play
games (``Referee.play``) and hand back results. Ctrl-C or an error stops every bot and
the local server; finished games are already journaled, so ``--resume`` goes on from
there.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from cirulla.clients.matches.bot_pool import BotPool
from cirulla.clients.matches.files import printable, read_tail
from cirulla.clients.matches.journal import (
    RESULTS_FILE,
    GameResult,
    Journal,
    Settings,
    private_tree,
    write_json_atomic,
)
from cirulla.clients.matches.log_budget import DEFAULT_BOT_LOGS, LogBudget
from cirulla.clients.matches.referee import Referee, deal_group
from cirulla.clients.matches.relay import ServerRelay
from cirulla.clients.matches.sandbox import Confinement, check_installation
from cirulla.clients.matches.schedule import ScheduledGame, build_schedule, games_per_set
from cirulla.clients.matches.seat_argv import is_served_spec
from cirulla.clients.matches.supervise import LIVE, LocalServer
from cirulla.clients.tournament.deals import deal_seeds
from cirulla.clients.tournament.results import (
    GameCounts,
    Standings,
    Tally,
    bots_table,
    pairs_table,
    results_document,
    standings,
)
from cirulla.clients.tournament.stats import Sprt
from cirulla.console import output_console

if TYPE_CHECKING:
    from cirulla.clients.tournament.pool import PoolReferee


@dataclass
class RunOptions:
    """How this run goes (not saved: may differ between a run and its resume)."""

    out: Path
    concurrency: int = 2
    server: str | None = None
    admin_token: str | None = None
    max_games: int | None = None
    #: Print the standings every N finished games (None: only at the end).
    report_every: int | None = None
    #: The worker pool's database (``--db``): its workers play the games (contract H).
    db: str | None = None
    #: ``--recover`` (cutechess's and fastchess's ``-recover``): a bot that never joins
    #: START_FAILURES games in a row does not stop the tournament; its games go on as
    #: forfeits, its log's tail is printed once, and the run ends with status 1.
    recover: bool = False
    #: ``--server-bot-socket``: the given server's socket for sandboxed bots (its
    #: ``--bot-socket``: Play only); without it they reach ``server``'s port.
    server_bot_socket: Path | None = None
    #: ``--bot-logs``: what each bot's logs may hold on disk in all (``log_budget``)
    bot_logs: int = DEFAULT_BOT_LOGS


#: The standings behind the progress line and ``results.json`` are refreshed at most this
#: often while games run (and always at the end, on Ctrl-C and for ``--report-every``):
#: both take time linear in the games played, so redoing them after every game made a long
#: tournament quadratic (5,000 games: about 0.45 s a game). With ``--sprt`` the pairings'
#: counts are still recomputed after every game (without the ratings, most of the cost),
#: so no decided pairing starts a new deck set.
REFRESH_SECONDS = 1.0
#: Set by the command's Ctrl-C and SIGTERM handler. The handler also raises
#: KeyboardInterrupt, but one raised while the main thread runs a finalizer (``__del__``)
#: is printed and dropped by Python, so the game loop checks this flag as well.
INTERRUPTED = threading.Event()
#: ... and at most this share of the runner's main thread (which also starts the games):
#: past some thousands of games a refresh takes a good part of a second.
REFRESH_SHARE = 0.1


def refresh_interval(cost: float) -> float:
    """Seconds until the next refresh after one that took ``cost`` seconds."""
    return max(REFRESH_SECONDS, cost / REFRESH_SHARE)


#: Games in a row in which a bot never joined its match, after which the tournament stops.
START_FAILURES = 3
#: Lines of the bot's log shown when it is stopped for that.
LOG_TAIL = 15


class BotNeverJoins(RuntimeError):
    """A bot crashed at start or never joined several games in a row: its command or
    installation is broken, and every further game would be a forfeit."""


def log_tail(path: Path, lines: int = LOG_TAIL) -> str:
    """The last ``lines`` lines of a bot's log, indented and printable, for the report."""
    try:
        text = read_tail(path)
    except OSError as exc:
        return f"  (cannot read {path}: {exc.strerror})"
    tail = printable(text).splitlines()[-lines:]  # a bot's output is data, not terminal codes
    return "\n".join(f"  {line}" for line in tail) if tail else "  (the log is empty)"


def schedule_of(settings: Settings) -> list[ScheduledGame]:
    sets = -(-settings.games // games_per_set(settings.players))
    return build_schedule(
        list(settings.bots),
        players=settings.players,
        fmt=settings.format,
        games=settings.games,
        seed=settings.seed,
        seeds=deal_seeds(settings.deals, settings.seed, sets) if settings.deals else None,
    )


def running_text(st: Standings) -> str:
    """One line for the progress bar: each bot's wins out of its games."""
    return "  ".join(f"{b.name} {b.wins}/{b.games}" for b in st.bots)


def _by_index(result: GameResult) -> int:
    return result.index


class Tournament:
    def __init__(self, settings: Settings, run: RunOptions, console: Console | None = None) -> None:
        self.settings = settings
        self.run_options = run
        self.out = run.out
        self.console = console or output_console()
        self.journal = Journal(self.out)
        self.schedule = schedule_of(settings)
        self.done: dict[int, GameResult] = self.journal.read()
        self.sprt = Sprt(*settings.sprt) if settings.sprt else None
        self.stop = threading.Event()
        self.record_errors: list[str] = []
        self.start_failures: dict[str, int] = {}
        #: Bots reported as never joining (``--recover``), each printed once.
        self.broken_bots: list[str] = []
        self.started_sets: set[tuple[tuple[str, ...], int]] = {
            (r.group, r.deal_set) for r in self.done.values()
        }
        #: every game before this one in the schedule is done (``_pending``'s start)
        self._front = 0
        #: the schedule's games by deck seed (a duplicate group), for ``_settle_groups``
        self._by_seed: dict[int, list[ScheduledGame]] = {}
        for game in self.schedule:
            self._by_seed.setdefault(game.seed, []).append(game)

    # -- scheduling -------------------------------------------------------------------

    def _decided(self, group: tuple[str, ...], st: Standings) -> bool:
        if self.sprt is None:
            return False
        return any(h.sprt_decision for h in st.head_to_head if tuple(group) == (h.first, h.second))

    def pending(self, st: Standings) -> list[ScheduledGame]:
        """Games still to play; SPRT-decided pairings start no new deck set."""
        return list(self._pending(st))

    def _is_pending(self, game: ScheduledGame, st: Standings) -> bool:
        return game.index not in self.done and not (
            self._decided(game.group, st) and (game.group, game.deal_set) not in self.started_sets
        )

    def _pending(self, st: Standings) -> Iterator[ScheduledGame]:
        """``pending`` as it is read: from the first game not done (the done ones before
        it are passed once for the run, not at every look: a look was linear in the
        schedule, three of them after every game)."""
        schedule, done = self.schedule, self.done  # done only grows
        while self._front < len(schedule) and schedule[self._front].index in done:
            self._front += 1
        for k in range(self._front, len(schedule)):
            if self._is_pending(schedule[k], st):
                yield schedule[k]

    def _pending_count(self, st: Standings, done_in_schedule: int) -> int:
        """``len(pending(st))``: without SPRT every scheduled game not done, counted."""
        if self.sprt is None:
            return len(self.schedule) - done_in_schedule
        return len(self.pending(st))

    # -- running ----------------------------------------------------------------------

    def run(self) -> Standings:
        """Play the schedule. Every file and folder it (and the local server, and the
        bots it starts) creates is the owner's only: records, logs, the journal, the
        settings with their seeds and the server's database hold hidden cards."""
        if self.settings.sandbox and self.run_options.db is None:
            # before the output folder is narrowed: it is not the installation bots run from
            check_installation((self.out,))
        previous = os.umask(0o077)
        try:
            private_tree(self.out)
            return self._run()
        finally:
            os.umask(previous)

    def _bot_target(self, relay: ServerRelay, server: LocalServer | None, address: str) -> str:
        """Where the sandboxed bots' relay forwards: a server of ours, its bot socket
        (Play only); one given (--server), the socket --server-bot-socket names, else
        its port (every rpc: said once at the start)."""
        if server is not None:
            return f"unix:{relay.server_socket}"
        if self.run_options.server_bot_socket is not None:
            return f"unix:{self.run_options.server_bot_socket}"
        self.console.print(
            f"[yellow]warning:[/] the sandboxed bots reach every rpc of --server {address} "
            "(other matches, records); give that server's --bot-socket with "
            "--server-bot-socket to let them reach Play only"
        )
        return address

    def _run(self) -> Standings:
        server: LocalServer | None = None
        address = self.run_options.server
        admin_token = self.run_options.admin_token
        pool: BotPool | None = None
        # --sandbox: the bots reach the server through this relay's socket, nothing else
        relay = ServerRelay() if self.settings.sandbox and self.run_options.db is None else None
        confinement = Confinement(relay, private=(self.out,)) if relay is not None else None
        try:
            if relay is not None:
                relay.start()
            if confinement is not None:
                self.console.print(confinement.open_groups())
            if self.run_options.db is not None:
                referee: Referee | PoolReferee = self._pool_referee(self.run_options.db)
            else:
                (self.out / "logs").mkdir(parents=True, exist_ok=True)
                pool = self._prestarted_pool(confinement)
                if address is None:
                    admin_token = admin_token or secrets.token_hex(16)
                    server = LocalServer(
                        self.out / "server.sqlite3",
                        self.out / "logs" / "server.log",
                        admin_token,
                        # the sandboxed bots' socket: Play only, nothing else of the server
                        bot_socket=relay.server_socket if relay is not None else None,
                    )
                    address = server.start()
                if relay is not None:
                    relay.point_at(self._bot_target(relay, server, address))
                referee = Referee(
                    self.settings,
                    address,
                    self.out,
                    admin_token,
                    self.stop,
                    group_sizes=dict(Counter(g.seed for g in self.schedule)),
                    bot_pool=pool,
                    confinement=confinement,
                )
            try:
                if isinstance(referee, Referee):
                    referee.restore_records(self.done.values())
                    referee.count_logs(self.done.values())
                self._play_all(referee)
            finally:
                referee.close()
                self.record_errors = list(referee.record_errors)
            for error in self.record_errors:
                self.console.print(f"[yellow]record not saved for {error}")
        except BaseException:
            self.stop.set()
            LIVE.stop_all()
            with contextlib.suppress(OSError):  # the error being raised may be this one
                # The journal is the truth: Ctrl-C may come between a game's journal line
                # and its entry in self.done (it often does, during the line's fsync).
                self.done.update(self.journal.read())
                self.write_results()  # refreshed at most once a second while games ran
            raise
        finally:
            if pool is not None:
                pool.close()
            if server is not None:
                server.stop()
            if relay is not None:
                relay.stop()
            if confinement is not None:
                confinement.close_groups()
        self.write_results()
        return standings(self.settings, self.done.values())

    def _prestarted_pool(self, confinement: Confinement | None) -> BotPool:
        """The kept-alive bots, those of the first games already starting: their start-up
        overlaps the match server's."""
        limits = {
            bot: confinement.limits_for(text)
            for bot, text in self.settings.bot_limits.items()
            if confinement is not None
        }
        pool = BotPool(
            self.settings.bots,
            self.out / "logs",
            tied=True,
            confinement=confinement,
            limits=limits,
            log_budget=LogBudget(self.run_options.bot_logs),
        )
        first = self.pending(standings(self.settings, self.done.values()))
        for game in first[: self.run_options.concurrency]:
            for bot in game.seats:
                if is_served_spec(self.settings.bots[bot]):
                    pool.prestart(bot)
        return pool

    def _tally(self) -> Tally:
        """The games played so far, summed for the SPRT's check (``results.Tally``)."""
        tally = Tally(self.settings)
        for result in self.done.values():
            tally.add(result)
        return tally

    def _pool_referee(self, db: str) -> PoolReferee:
        from cirulla.clients.tournament.pool import PoolReferee

        group_sizes = dict(Counter(g.seed for g in self.schedule))
        return PoolReferee(self.settings, db, self.out, self.stop, group_sizes)

    def _play_all(self, referee: Referee | PoolReferee) -> None:
        # the standings' sums, each game added once as it ends (the SPRT's check after
        # every game, the refreshes): as standings() gives them
        tally = self._tally()
        st = tally.standings(sorted(self.done.values(), key=_by_index))
        scheduled = {g.index for g in self.schedule}
        done_in_schedule = len(scheduled & self.done.keys())
        limit = self.run_options.max_games
        pending = len(self.pending(st))
        total = pending if limit is None else min(limit, pending)
        started = 0
        done_before = len(self.done)
        progress = Progress(
            TextColumn("[bold]games"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("{task.description}"),
            console=self.console,
            transient=False,
        )
        running: dict[Future[GameResult | None], ScheduledGame] = {}
        pool = ThreadPoolExecutor(self.run_options.concurrency)
        every = self.run_options.report_every
        stale = unwritten = False  # standings / results.json behind self.done
        refreshed = written = time.monotonic()
        interval = write_interval = REFRESH_SECONDS  # grow with the cost of a refresh
        try:
            with progress:
                task = progress.add_task(running_text(st), total=total)
                while True:
                    in_flight = {g.index for g in running.values()}
                    for game in self._pending(st):
                        if len(running) >= self.run_options.concurrency:
                            break
                        if limit is not None and started >= limit:
                            break
                        if game.index in in_flight:
                            continue
                        self.started_sets.add((game.group, game.deal_set))
                        running[pool.submit(referee.play, game)] = game
                        started += 1
                    if unwritten and time.monotonic() - written >= write_interval:
                        # After the next games started: writing is not on their path.
                        began = time.monotonic()
                        self.write_results()
                        unwritten, written = False, time.monotonic()
                        write_interval = refresh_interval(written - began)
                    if not running:
                        break
                    finished, _ = wait(running, timeout=0.5, return_when=FIRST_COMPLETED)
                    if INTERRUPTED.is_set():
                        raise KeyboardInterrupt
                    report_due = False
                    ended: set[int] = set()  # deck seeds of the games that ended
                    for future in finished:
                        game = running.pop(future)
                        ended.add(game.seed)
                        result = future.result()
                        if result is None:
                            continue
                        self.journal.append(result)
                        replaced = result.index in self.done
                        self.done[result.index] = result
                        done_in_schedule += not replaced and result.index in scheduled
                        if replaced:  # a game played again: its old result leaves the sums
                            tally = self._tally()
                        else:
                            tally.add(result)
                        stale = unwritten = True
                        finished_now = len(self.done) - done_before
                        report_due = report_due or bool(every and finished_now % every == 0)
                        for note in result.notes:
                            progress.console.print(  # a note may quote a bot: data
                                printable(f"game {game.index} {result.match_id}: {note}"),
                                style="yellow",
                                markup=False,
                            )
                        self._check_start_failures(result, progress.console)
                    if ended and isinstance(referee, Referee):
                        self._settle_groups(referee.pool, ended, running.values(), st)
                    now = time.monotonic()
                    if stale and (report_due or not running or now - refreshed >= interval):
                        st = tally.standings(sorted(self.done.values(), key=_by_index))
                        stale, refreshed = False, now
                        interval = refresh_interval(time.monotonic() - now)
                        progress.update(task, description=running_text(st))
                    elif stale and self.sprt is not None:
                        st = tally.standings()
                    if report_due:
                        self.print_tables(st, progress.console)
                    progress.update(task, completed=len(self.done) - done_before)
                    left = (
                        0
                        if limit is not None and started >= limit
                        else self._pending_count(st, done_in_schedule)
                    )
                    left = max(left, len(running))
                    progress.update(task, total=progress.tasks[task].completed + left)
        except BaseException:
            # Workers poll the stop flag: set it before anything waits for them.
            self.stop.set()
            LIVE.stop_all()
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def _settle_groups(
        self,
        pool: BotPool,
        seeds: set[int],
        running: Iterable[ScheduledGame],
        st: Standings,
    ) -> None:
        """Tell the pool which of ``seeds`` no game will be dealt from any more (none
        running, none pending): their processes may play again. The pool counts the
        games it saw end; this covers the games it never sees (played in an earlier
        run before ``--resume``, or skipped by SPRT), which would otherwise keep them
        idle until the end."""
        in_play = {g.seed for g in running} | {
            seed
            for seed in seeds
            if any(self._is_pending(game, st) for game in self._by_seed.get(seed, ()))
        }
        for seed in seeds - in_play:
            pool.group_over(deal_group(seed))

    def write_results(self) -> None:
        extra: GameCounts = {
            "scheduled_games": len(self.schedule),
            "finished_games": len(self.done),
        }
        write_json_atomic(
            self.out / RESULTS_FILE, results_document(self.settings, self.done.values(), extra)
        )

    def print_tables(self, st: Standings, console: Console | None = None) -> None:
        console = console or self.console
        console.print(bots_table(st))
        if st.head_to_head:
            console.print(pairs_table(st, self.sprt))

    def _check_start_failures(self, result: GameResult, console: Console | None = None) -> None:
        """Stop the tournament once a bot has not joined START_FAILURES games in a row;
        with ``--recover``, say so once (with its log's tail) and go on."""
        for bot in set(result.seats):
            seats = [s for s, name in enumerate(result.seats) if name == bot]
            if all(s in result.unjoined for s in seats):
                self.start_failures[bot] = self.start_failures.get(bot, 0) + 1
            else:
                self.start_failures[bot] = 0
            if self.start_failures[bot] < START_FAILURES or bot in self.broken_bots:
                continue
            log = result.logs[seats[0]] if len(result.logs) > seats[0] else ""
            where = self.out / log if log else None
            tail = log_tail(where) if where is not None else "  (no log)"
            what = (
                f"bot {bot} did not join its last {START_FAILURES} games (it crashes at "
                f"start, or its command is wrong)"
            )
            if not self.run_options.recover:
                raise BotNeverJoins(
                    f"{what}; the tournament is stopped (--recover plays on with its games "
                    f"as forfeits). Last lines of {where or 'its log'}:\n{tail}"
                )
            self.broken_bots.append(bot)
            (console or self.console).print(
                f"{what}; --recover: its games go on as forfeits, the run will end with "
                f"status 1. Last lines of {where or 'its log'}:\n{tail}",
                style="red",
                markup=False,
                highlight=False,
            )

    def never_joined(self) -> list[str]:
        """Bots that joined none of their finished games (not already reported by
        ``--recover``), each with the tail of its last log: whatever the length of the
        run, such a bot is broken, not beaten, and the run must not pass for a result
        (cutechess prints the engine's error and fails likewise). Two games never reach
        the stop after START_FAILURES, so this is checked at the end as well."""
        seen: dict[str, tuple[int, int, str]] = {}  # bot -> (games, joined, last log)
        for _, result in sorted(self.done.items()):
            for bot in set(result.seats):
                seats = [s for s, name in enumerate(result.seats) if name == bot]
                games, joined, log = seen.get(bot, (0, 0, ""))
                joined += any(s not in result.unjoined for s in seats)
                if len(result.logs) > seats[0] and result.logs[seats[0]]:
                    log = result.logs[seats[0]]
                seen[bot] = (games + 1, joined, log)
        reports = []
        for bot, (games, joined, log) in seen.items():
            if joined or bot in self.broken_bots:
                continue
            where = self.out / log if log else None
            tail = log_tail(where) if where is not None else "  (no log)"
            reports.append(
                f"bot {bot} joined none of its {games} games (it crashes at start, or its "
                f"command is wrong). Last lines of {where or 'its log'}:\n{tail}"
            )
        return reports


def timed(fn: Callable[[], Standings]) -> tuple[Standings, float]:
    start = time.monotonic()
    return fn(), time.monotonic() - start
