"""``cirulla bench tournament``: what a tournament game costs beyond the bots' thinking.

Plays a small tournament of two cheap bots (random against greedy by default) on a fresh
local server in a temporary folder, twice: with the bots kept alive between games (how
the runner plays built-in kinds) and with one process per seat and game (how it plays a
``cmd:`` bot), and prints one JSON object with games per second of each and their ratio,
and where the CPU went (the runner; the server and the bots; per game; cores kept busy).
With cheap bots a game is almost all overhead: processes started, gRPC handshakes,
records fetched, the journal written.

Beside it, its baseline from the same run: the same bots on the same deals (the
tournament's deck seeds) played in process by ``cirulla bench strength``'s loop
(``strength.play_one``: policies called through the rules core, no gRPC, no processes),
and the ratio of the tournament's CPU per game to that loop's (docs/performance.md).

And what that ratio can reach at best while every decision crosses processes over gRPC
(``transport_floor``): a raw ``grpc.aio`` echo (the stack the server and the bot kit use,
bytes in and out: no protobuf, no rules, no records) doing one round trip per decision of
these games, its server's and clients' CPU per round trip times the games' decisions, over
the in-process game. No match server and bots speaking this protocol can cost less than a
bare round trip a decision, so a ``floor_ratio`` above the target says the target needs
fewer round trips (or none), not a cheaper server.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import resource
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from cirulla.bots.botspec import BotSpec
from cirulla.bots.strength import DECKS_PER_GAME, StrengthGame, play_one
from cirulla.clients.matches.journal import Settings
from cirulla.clients.tournament.runner import RunOptions, Tournament, schedule_of
from cirulla.console import output_console
from cirulla.rules.cards import NUM_CARDS
from cirulla.rules.decks import DeckSource
from cirulla.rules.options import Options
from cirulla.server.client import submit_index
from cirulla.server.echo import run_echo

MODES = ("both", "served", "per-game")


def register_bench(bench: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = bench.add_parser(
        "tournament",
        help="tournament overhead: games per second, bots kept alive vs one process per game",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--games", type=int, default=40, help="games to play per mode (default 40)")
    p.add_argument("--concurrency", type=int, default=2, help="games at a time (default 2)")
    p.add_argument("--target", type=int, default=51, help="game target (default 51)")
    p.add_argument("--a", default="random", help="first bot kind (default random)")
    p.add_argument("--b", default="greedy", help="second bot kind (default greedy)")
    p.add_argument(
        "--mode",
        choices=MODES,
        default="both",
        help="served: bots kept alive; per-game: a process per seat and game; both (default)",
    )
    p.add_argument("--json", action="store_true", help="accepted for symmetry: always JSON")
    p.set_defaults(func=run_bench)


def per_game_spec(kind: str) -> str:
    """A built-in kind as a ``cmd:`` spec: started afresh for every seat of every game."""
    # server, match and token come from the CIRULLA_* environment the runner sets
    return f"cmd:{{python}} -m cirulla bot {kind} --name={{name}} --seed={{seed}}"


def cpu_seconds(who: int) -> float:
    """User plus system CPU of this process (``RUSAGE_SELF``, every thread) or of its
    children that have exited and been waited for (``RUSAGE_CHILDREN``)."""
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


class ChildCpu:
    """The CPU of the match server and of the bots apart, read from Linux ``/proc`` while
    they run: ``RUSAGE_CHILDREN`` gives only their sum.

    Every ``interval`` seconds a thread lists this process's descendants (each thread's
    ``children`` file, then theirs: a sandboxed bot runs under bwrap) and reads each one's
    user + system time; a process counts with the last value read before it ended, so up
    to ``interval`` of its CPU at its very end is missed (``unattributed`` in the figures:
    the exact sum less the two parts). The thread's own CPU is taken off the runner's.
    """

    def __init__(self, interval: float = 0.1) -> None:
        self.interval = interval
        self.last: dict[int, float] = {}
        self.kind: dict[int, str] = {}
        self.own = 0.0  # the reading thread's CPU
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="bench-child-cpu", daemon=True)
        self._tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100

    def __enter__(self) -> ChildCpu:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self._read()
        self._read()
        self.own = time.thread_time()

    def _children(self, pid: int | str) -> list[int]:
        out: list[int] = []
        try:
            for task in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/children") as f:
                    out += [int(c) for c in f.read().split()]
        except OSError:
            pass
        return out

    def _read(self) -> None:
        todo = self._children("self")
        while todo:
            pid = todo.pop()
            try:
                with open(f"/proc/{pid}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                # read again until it names a server or a bot: a child caught between
                # its fork and its exec still shows the runner's own command line
                if self.kind.get(pid, "other") == "other":
                    with open(f"/proc/{pid}/cmdline", "rb") as f:
                        cmd = f.read().replace(b"\0", b" ")
                    self.kind[pid] = (
                        "bots"
                        if b"cirulla.bots.loop" in cmd or b"cirulla bot " in cmd
                        else "server"
                        if b"cirulla server" in cmd
                        else "other"
                    )
            except (OSError, IndexError):
                continue
            self.last[pid] = (int(fields[11]) + int(fields[12])) / self._tick
            todo += self._children(pid)

    def by_kind(self) -> dict[str, float]:
        out = {"server": 0.0, "bots": 0.0, "other": 0.0}
        for pid, cpu in self.last.items():
            out[self.kind[pid]] += cpu
        return out


def measure(settings: Settings, concurrency: int) -> dict[str, Any]:
    """One mode's run. Besides the rates, where the CPU went: the runner itself, and the
    match server with every bot process (the run stops and waits for all of them, so
    their CPU is counted); ``cores_busy`` near the machine's cores means more games at a
    time cannot help, only cheaper games can."""
    with tempfile.TemporaryDirectory(prefix="cirulla-bench-") as tmp:
        run = RunOptions(out=Path(tmp), concurrency=concurrency)
        quiet = output_console(file=io.StringIO())  # discarded: the JSON is the output
        runner_cpu = cpu_seconds(resource.RUSAGE_SELF)
        children_cpu = cpu_seconds(resource.RUSAGE_CHILDREN)
        start = time.monotonic()
        with ChildCpu() as children:
            st = Tournament(settings, run, quiet).run()
        seconds = time.monotonic() - start
        runner_cpu = cpu_seconds(resource.RUSAGE_SELF) - runner_cpu - children.own
        children_cpu = cpu_seconds(resource.RUSAGE_CHILDREN) - children_cpu
        played = list(Tournament(settings, run, quiet).done.values())
    per_game = [r.seconds for r in played]
    cpu = runner_cpu + children_cpu
    parts = children.by_kind()
    split = {
        "runner": runner_cpu,
        "server": parts["server"],
        "bots": parts["bots"],
        "unattributed": children_cpu - parts["server"] - parts["bots"],
    }
    return {
        "games": st.games,
        "wall_seconds": round(seconds, 3),
        "games_per_second": round(st.games / seconds, 3) if seconds else None,
        "mean_game_seconds": round(sum(per_game) / max(len(per_game), 1), 3),
        "problems": sum(sum(b.problems.values()) for b in st.bots),
        "cpu_seconds": {"runner": round(runner_cpu, 3), "server_and_bots": round(children_cpu, 3)},
        "cpu_seconds_per_game": round(cpu / st.games, 4) if st.games else None,
        # where it went, per game (ChildCpu): the runner, the server, the bot processes
        "cpu_seconds_per_game_by_process": (
            {k: round(v / st.games, 4) for k, v in split.items()} if st.games else None
        ),
        "cores_busy": round(cpu / seconds, 2) if seconds else None,
    }


#: A tournament game's CPU may be at most this many times the in-process game's
#: (issue "fast where users touch it").
TARGET_RATIO = 5.0


def in_process(settings: Settings) -> dict[str, Any]:
    """The tournament's games (bots, seatings, deck seeds) through ``bench strength``'s
    in-process loop: CPU per game of this process."""
    options = Options.preset(settings.preset, players=settings.players, **settings.rules)
    games = schedule_of(settings)
    jobs = []
    for game in games:
        source = DeckSource(game.seed)
        decks = [source.next_deck(deal) for deal in range(1, DECKS_PER_GAME + 1)]
        seating = list(game.seats)  # the bots are named "a" and "b", as play_one's
        jobs.append(
            StrengthGame(
                game.index,
                seating,
                decks,
                options,
                settings.bots["a"],
                settings.bots["b"],
                game.seed,
            )
        )
    cpu = time.process_time()
    outcomes = [play_one(job) for job in jobs]
    cpu = time.process_time() - cpu
    return {
        "games": len(outcomes),
        "deals": sum(len(o.deal_diffs) for o in outcomes),
        "cpu_seconds": round(cpu, 3),
        "cpu_seconds_per_game": round(cpu / len(outcomes), 5) if outcomes else None,
        "what": "bench strength's loop (strength.play_one) on the tournament's bots, "
        "seatings and deck seeds, in this process",
    }


#: A deal's decisions, whatever the players: every card dealt to a hand is played once
#: (the deck less the four that open the table).
DECISIONS_PER_DEAL = NUM_CARDS - 4

#: The echo's reply: about what a seat receives per decision in ``bench server``'s matches
#: (its ``bytes_per_decision``: the decision request and the events before it).
FLOOR_REPLY_BYTES = 500


def transport_floor(
    games: int, deals: int, in_process: float | None, concurrency: int
) -> dict[str, object]:
    """The least CPU per game of these games played over gRPC with one round trip per
    decision, against the in-process game: the echo's server and clients (one process
    each, as the match server and a bot process are), ``2 * concurrency`` streams at once
    (every seat of the games at a time), the games' decisions in all; ``in_process``: the
    in-process game's CPU seconds."""
    decisions = deals * DECISIONS_PER_DEAL
    streams = 2 * max(1, concurrency)
    echo = run_echo(
        streams=streams,
        round_trips=max(1, decisions // streams),
        request_bytes=len(submit_index(1 << 20, 3).SerializeToString()),
        reply_bytes=FLOOR_REPLY_BYTES,
        processes=1,
    )
    server, client = echo["server_cpu_ms_per_round_trip"], echo["client_cpu_ms_per_round_trip"]
    both = server + client if server is not None and client is not None else None
    per_game = both * decisions / games / 1000 if both is not None and games else None
    ratio = per_game / in_process if per_game is not None and in_process else None
    return {
        "decisions_per_game": round(decisions / games, 1) if games else None,
        "echo": echo,
        "cpu_ms_per_round_trip": None if both is None else round(both, 4),
        "cpu_seconds_per_game": None if per_game is None else round(per_game, 4),
        "floor_ratio": None if ratio is None else round(ratio, 1),
        "target_reachable": ratio is not None and ratio <= TARGET_RATIO,
        "what": "a raw grpc.aio echo, one round trip per decision of these games: its "
        "server's and clients' CPU per round trip times the decisions per game, over the "
        "in-process game (no server and bots on this stack can cost less)",
    }


def run_bench(args: argparse.Namespace) -> int:
    result: dict[str, Any] = {
        "benchmark": "tournament",
        "bots": [args.a, args.b],
        "concurrency": args.concurrency,
        "target": args.target,
    }
    modes = ("served", "per-game") if args.mode == "both" else (args.mode,)
    texts = {"a": args.a, "b": args.b}
    specs = {name: BotSpec.parse(text) for name, text in texts.items()}  # where they enter
    for mode in modes:
        bots = specs
        if mode == "per-game":
            bots = {name: BotSpec.parse(per_game_spec(kind)) for name, kind in texts.items()}
        settings = Settings(bots=bots, games=args.games, seed=1, rules={"target": args.target})
        result[mode.replace("-", "_")] = measure(settings, args.concurrency)
    if args.mode == "both":
        fast, slow = result["served"]["games_per_second"], result["per_game"]["games_per_second"]
        result["speedup"] = round(fast / slow, 2) if fast and slow else None
    settings = Settings(bots=specs, games=args.games, seed=1, rules={"target": args.target})
    local = result["in_process"] = in_process(settings)
    first = result[modes[0].replace("-", "_")]
    ratio = (
        first["cpu_seconds_per_game"] / local["cpu_seconds_per_game"]
        if first["cpu_seconds_per_game"] and local["cpu_seconds_per_game"]
        else None
    )
    result["cpu_per_game_vs_in_process"] = {
        "mode": modes[0],
        "tournament_cpu_seconds_per_game": first["cpu_seconds_per_game"],
        "in_process_cpu_seconds_per_game": local["cpu_seconds_per_game"],
        "ratio": None if ratio is None else round(ratio, 1),
        "target": TARGET_RATIO,
        "met": ratio is not None and ratio <= TARGET_RATIO,
    }
    result["transport_floor"] = transport_floor(
        local["games"], local["deals"], local["cpu_seconds_per_game"], args.concurrency
    )
    result["machine"] = {"cpus": os.cpu_count(), "load_average": os.getloadavg()[0]}
    print(json.dumps(result))
    return 0
