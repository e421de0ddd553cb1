"""Hostile text engines against the bridge (`cirulla bot text`), on a real server.

Each engine is a small Python script that plays correctly except for one hostile act:
it busy-loops, leaves children behind (one in its process group, one that called
setsid, one double-forked orphan), answers after its deadline, writes binary garbage or
one 100 MB line, or allocates past its memory limit. The bridge runs as a tournament
runs it (a ``Child`` of the runner, in its own session, stopped with SIGTERM then
SIGKILL), against the random bot. What must hold (docs/text-protocol.md, "Hostile
engines"): the game goes on with default actions, the bridge's memory stays bounded,
and no process the engine started outlives its seat.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cirulla.clients.matches.supervise import Child, LocalServer
from tests.bots.test_text import CIRULLA, create, env_for, finished

#: The bridge's peak resident memory (VmHWM) must stay under this, whatever the engine
#: writes; the bridge itself (Python, gRPC, the rules core) peaks near 60 MiB.
PEAK_BOUND_MIB = 150
#: Seconds after a seat ends within which every process its engine started must be gone.
GONE_WITHIN = 5.0

ENGINE = r'''
import os, random, signal, sys, time

MODE, MARKS = sys.argv[1], sys.argv[2]
COMMANDS = ("protocol_version name version known_command list_commands quit "
            "rules newgame event hand state genmove").split()
out = sys.stdout.buffer


def mark(text):
    with open(MARKS, "a") as f:
        f.write(f"{text}\n")


def linger():
    """A helper that ignores SIGTERM and never exits by itself."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    mark(os.getpid())
    while True:
        time.sleep(0.2)


def spawn_children():
    if os.fork() == 0:          # stays in the engine's process group
        linger()
    if os.fork() == 0:          # its own session, still the engine's child
        os.setsid()
        linger()
    if os.fork() == 0:          # its own session, then orphaned (double fork)
        os.setsid()
        if os.fork() == 0:
            linger()
        os._exit(0)


def hostile(n, ms):
    if MODE == "busy" and n == 1:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        mark("busy")
        while True:
            pass
    if MODE == "late" and n in (1, 3):
        time.sleep(ms / 1000 + 1.0)            # well after the deadline (50 times its lag)
        mark(f"late {n}")
    if MODE == "garbage" and n == 1:
        noise = random.Random(7).randbytes(2 << 20)
        out.write(noise + b"\xff" * (2 << 20) + b"\n\n")   # 4 MiB, then a clean line
    if MODE == "hugeline" and n == 1:
        chunk = b"x" * (1 << 20)
        for _ in range(100):
            out.write(chunk)                   # 100 MiB, no newline ...
        out.write(b"\n")                       # ... until here
    if MODE == "memory" and n == 1:
        mark("allocating")
        block = bytearray(1 << 30)             # 1 GiB, past a 256 MiB limit
        mark(f"allocated {len(block)}")


mark(os.getpid())
if MODE == "children":
    spawn_children()
moves = 0
for line in sys.stdin:
    ident, _, rest = line.strip().partition(" ")
    command, _, args = rest.partition(" ")
    text = ""
    if command == "protocol_version":
        text = "1"
    elif command == "name":
        text = "hostile-" + MODE
    elif command == "version":
        text = "1"
    elif command == "list_commands":
        text = "\n".join(COMMANDS)
    elif command == "known_command":
        text = "true" if args in COMMANDS else "false"
    elif command == "genmove":
        moves += 1
        hostile(moves, int(args.split()[0]))
        text = "0"
    out.write(f"={ident} {text}".rstrip().encode() + b"\n\n")
    out.flush()
    if command == "quit":
        break
'''


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tmp = tmp_path_factory.mktemp("hostile-server")
    with LocalServer(tmp / "server.sqlite3", tmp / "server.log") as local:
        yield local.address


class Seat:
    """The bridge with one hostile engine, started and stopped as a runner does."""

    def __init__(self, tmp: Path, server: str, mode: str, *match: str, limits=()) -> None:
        script = tmp / "engine.py"
        script.write_text(textwrap.dedent(ENGINE))
        self.marks = tmp / "marks"
        self.marks.touch()
        self.match_id, tokens = create(server, *match)
        engine = [sys.executable, str(script), mode, str(self.marks)]
        bridge = [*CIRULLA, "bot", "text", *limits, "--", *engine]
        self.log = tmp / "bridge.log"
        self.bridge = Child(bridge, self.log, env_for(server, self.match_id, tokens[0]))
        opponent = [*CIRULLA, "bot", "random", "--seed", "5"]
        self.opponent = Child(
            opponent, tmp / "random.log", env_for(server, self.match_id, tokens[1])
        )
        self.peak_kib = 0
        self._watch = threading.Thread(target=self._watch_memory, daemon=True)
        self._watch.start()

    def _watch_memory(self) -> None:
        """The bridge's VmHWM (peak resident set), read until it exits."""
        status = Path(f"/proc/{self.bridge.pid}/status")
        while self.bridge.poll() is None:
            try:
                for line in status.read_text().splitlines():
                    if line.startswith("VmHWM:"):
                        self.peak_kib = max(self.peak_kib, int(line.split()[1]))
            except (OSError, ValueError):
                return
            time.sleep(0.1)

    def marked(self) -> list[str]:
        return self.marks.read_text().splitlines()

    def pids(self) -> list[int]:
        return [int(m) for m in self.marked() if m.isdigit()]

    def wait_for_mark(self, text: str, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while text not in self.marks.read_text():
            assert time.monotonic() < deadline, f"the engine never marked {text!r}"
            assert self.bridge.poll() is None, self.bridge_log()
            time.sleep(0.05)

    def finish(self, timeout: float = 60.0) -> int | None:
        """Wait for both seats to end; the bridge's exit code."""
        code = self.bridge.wait(timeout)
        self.opponent.wait(timeout)
        self.stop()
        return code

    def stop(self) -> None:
        self.bridge.stop()
        self.opponent.stop()
        self._watch.join(2)

    def bridge_log(self) -> str:
        return self.log.read_text(errors="replace")[-4000:]


def running(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie (a zombie runs nothing)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def assert_all_gone(pids: list[int], within: float = GONE_WITHIN) -> None:
    deadline = time.monotonic() + within
    while any(running(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    alive = [p for p in pids if running(p)]
    try:
        assert not alive, f"still running {within:g}s after the seat ended: {alive}"
    finally:
        for pid in alive:  # never leave them to the rest of the test run
            os.kill(pid, signal.SIGKILL)


@pytest.fixture
def seats() -> Iterator[list[Seat]]:
    """Seats of one test, stopped (and their marked processes killed) whatever happens."""
    started: list[Seat] = []
    yield started
    for seat in started:
        seat.stop()
        for pid in seat.pids():
            if running(pid):
                os.kill(pid, signal.SIGKILL)


def test_a_busy_engine_is_gone_when_the_runner_stops_its_seat(
    server: str, tmp_path: Path, seats: list[Seat]
) -> None:
    """The runner stops a seat with SIGTERM to the bridge's group (then SIGKILL): the
    engine, busy in a loop that ignores SIGTERM, must go with it (on main it ran on)."""
    seat = Seat(tmp_path, server, "busy", "--target", "1", "--move-limit", "1000", "--forfeit")
    seats.append(seat)
    seat.wait_for_mark("busy")
    started = time.monotonic()
    seat.bridge.stop()
    assert time.monotonic() - started < 3.0, "the bridge did not stop within the grace"
    assert_all_gone(seat.pids())


def test_the_engine_dies_with_a_killed_bridge(
    server: str, tmp_path: Path, seats: list[Seat]
) -> None:
    """A bridge killed by SIGKILL cannot clean up; the kernel still kills its engine
    (PR_SET_PDEATHSIG). (The engine's own children need the tournament's --sandbox.)"""
    seat = Seat(tmp_path, server, "busy", "--target", "1", "--move-limit", "1000", "--forfeit")
    seats.append(seat)
    seat.wait_for_mark("busy")
    os.kill(seat.bridge.pid, signal.SIGKILL)
    assert seat.bridge.wait(5) == -signal.SIGKILL
    assert_all_gone(seat.pids())


def test_a_busy_engine_past_its_cpu_limit_is_stopped(
    server: str, tmp_path: Path, seats: list[Seat]
) -> None:
    """With --cpu-limit 1 the busy engine is killed by the kernel (SIGXCPU) about a
    second into its loop; the bridge says so and ends the seat, which forfeits on time."""
    seat = Seat(
        tmp_path,
        server,
        "busy",
        "--target",
        "1",
        "--move-limit",
        "1000",
        "--forfeit",
        limits=("--cpu-limit", "1"),
    )
    seats.append(seat)
    seat.wait_for_mark("busy")
    assert seat.finish(30) == 1, seat.bridge_log()
    assert "was killed by SIGXCPU (its CPU-time limit)" in seat.log.read_text(), seat.bridge_log()
    match, _ = finished(server, seat.match_id)
    assert match.seats[0].forfeits == 1
    assert_all_gone(seat.pids())


@pytest.mark.parametrize(
    ("option", "value"),
    [("--memory-limit", "lots"), ("--cpu-limit", "-1"), ("--command-timeout", "0")],
)
def test_a_bad_limit_is_one_line_naming_the_option(option: str, value: str) -> None:
    done = subprocess.run(
        [*CIRULLA, "bot", "text", f"{option}={value}", "--", "true"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith(f"cirulla bot: error: argument {option}")
    assert repr(value) in done.stderr


def test_no_child_of_the_engine_outlives_the_seat(
    server: str, tmp_path: Path, seats: list[Seat]
) -> None:
    """Children in the engine's group, in a session of their own and orphaned by a double
    fork all ignore SIGTERM and keep the engine's stdout open; when the game ends they
    are all gone (on main the setsid ones ran on)."""
    seat = Seat(tmp_path, server, "children", "--target", "1", "--move-limit", "3000")
    seats.append(seat)
    assert seat.finish() == 0, seat.bridge_log()
    pids = seat.pids()
    assert len(pids) == 4, seat.marked()  # the engine and its three helpers
    assert_all_gone(pids)


def test_late_answers_are_dropped_and_the_default_played(
    server: str, tmp_path: Path, seats: list[Seat]
) -> None:
    """Two genmoves are answered 1 s after their 1 s deadline, with the server set to
    forfeit a seat that runs out of time: the bridge plays the default action in time,
    drops the late answers, and the game ends by points (on main the stream failed with
    INTERNAL, decisions went stale and the seat lost on time)."""
    seat = Seat(
        tmp_path,
        server,
        "late",
        "--target",
        "1",
        "--move-limit",
        "1000",
        "--forfeit",
        "--seed",
        "11",
    )
    seats.append(seat)
    assert seat.finish() == 0, seat.bridge_log()
    log = seat.log.read_text()
    assert "late 3" in seat.marked()
    assert "no answer to genmove within" in log
    assert "dropped the engine's late answer" in log
    assert "INTERNAL" not in log and "STALE_DECISION" not in log, seat.bridge_log()
    match, _ = finished(server, seat.match_id)
    assert match.seats[0].timeouts == 0 and match.seats[0].forfeits == 0
    assert match.result.HasField("winner_side")
    assert_all_gone(seat.pids())


@pytest.mark.parametrize("mode", ["garbage", "hugeline"])
def test_memory_stays_bounded_whatever_the_engine_writes(
    server: str, tmp_path: Path, seats: list[Seat], mode: str
) -> None:
    """4 MiB of binary garbage, or one 100 MB line without a newline, then valid answers:
    the game finishes and the bridge's peak memory stays under PEAK_BOUND_MIB (on main
    garbage took it to hundreds of MiB, and the long line, read one byte at a time,
    stalled it until the seat lost on time)."""
    seat = Seat(
        tmp_path, server, mode, "--target", "1", "--move-limit", "5000", "--forfeit", "--seed", "3"
    )
    seats.append(seat)
    assert seat.finish() == 0, seat.bridge_log()
    peak_mib = seat.peak_kib / 1024
    print(f"{mode}: the bridge's peak memory (VmHWM) {peak_mib:.0f} MiB")
    assert 0 < peak_mib < PEAK_BOUND_MIB
    match, _ = finished(server, seat.match_id)
    assert match.seats[0].timeouts == 0 and match.seats[0].forfeits == 0
    log = seat.log.read_text(errors="replace")
    assert "protocol violation" in log
    assert len(log) < 2 << 20, "the bridge's log is not bounded"
    assert_all_gone(seat.pids())


def test_an_engine_past_its_memory_limit_is_stopped(
    server: str, tmp_path: Path, seats: list[Seat]
) -> None:
    """With --memory-limit 256 an engine's 1 GiB allocation fails and the engine dies:
    the bridge exits 1 with the engine's exit code in its log and the seat forfeits on
    time, as documented (on main nothing limited it)."""
    seat = Seat(
        tmp_path,
        server,
        "memory",
        "--target",
        "1",
        "--move-limit",
        "1000",
        "--forfeit",
        limits=("--memory-limit", "256"),
    )
    seats.append(seat)
    assert seat.finish() == 1, seat.bridge_log()
    assert "allocating" in seat.marked()
    assert not any(m.startswith("allocated") for m in seat.marked()), seat.marked()
    log = seat.log.read_text()
    assert "MemoryError" in log and "exited with code 1" in log, seat.bridge_log()
    match, _ = finished(server, seat.match_id)
    assert match.seats[0].forfeits == 1
    assert_all_gone(seat.pids())


def test_bot_check_reports_garbage_in_bounded_form(tmp_path: Path) -> None:
    """`cirulla bot check` on the garbage engine: FAIL, the first violations with their
    exchange, then how many more there were; its output stays small."""
    script = tmp_path / "engine.py"
    script.write_text(textwrap.dedent(ENGINE))
    done = subprocess.run(
        [
            *CIRULLA,
            "bot",
            "check",
            "--games=1",
            f"text:{sys.executable} {script} garbage {tmp_path / 'marks'}",
        ],
        capture_output=True,
        text=True,
        errors="replace",
        timeout=120,
    )
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    out = done.stdout
    assert "violation 50: " in out and "violation 51: " not in out
    more = [line for line in out.splitlines() if line.endswith("more violations, not shown")]
    assert len(more) == 1 and int(more[0].split()[2]) > 1000, more
    assert out.splitlines()[-1].startswith("FAIL: 1 games")
    assert len(out) < 1 << 20
    # the engine's bytes are shown as data: no control character reaches the terminal
    assert not [c for c in out if not c.isprintable() and c != "\n"]


def test_read_lines_cuts_a_long_line_and_keeps_the_next() -> None:
    """A 10 MB line through a real pipe: its head comes out cut, the rest is discarded in
    chunks, and the line after it is intact."""
    from cirulla.bots.text.lines import read_lines

    read_fd, write_fd = os.pipe()

    def write() -> None:
        with os.fdopen(write_fd, "wb") as pipe:
            pipe.write(b"y" * 10_000_000 + b"\nok\ntail")

    writer = threading.Thread(target=write)
    writer.start()
    with os.fdopen(read_fd, "rb") as pipe:
        lines = list(read_lines(pipe.fileno(), 16))
    writer.join()
    assert lines == [(b"y" * 16, True), (b"ok", False), (b"tail", False)]
