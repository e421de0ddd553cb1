"""Issue 37, finding 1: the relay cannot be exhausted. One bot's flood of half-open
connections (tests/programs/relay_flood.py) is held to its endpoint's bound, adds no thread
and few open files to the process the relay runs in, and delays no other bot; the relay
survives running out of open files (EMFILE) and relays again afterwards; an endpoint
closes with its process. Real sockets, real processes, real sandboxes."""

from __future__ import annotations

import json
import os
import selectors
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from cirulla.clients.matches import relay as relay_module
from cirulla.clients.matches.relay import ServerRelay

FLOOD = Path(__file__).parents[1] / "programs" / "relay_flood.py"


@contextmanager
def echo_server() -> Iterator[str]:
    """A TCP server in one thread that echoes every byte (the match server's stand-in at
    the socket level); it holds every connection the relay opens and survives EMFILE."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1024)
    listener.setblocking(False)
    sel = selectors.DefaultSelector()
    sel.register(listener, selectors.EVENT_READ, None)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            for key, _ in sel.select(0.1):
                if key.data is None:
                    try:
                        conn, _ = listener.accept()
                    except OSError:
                        time.sleep(0.01)  # out of files: the relay's test, not ours
                        continue
                    conn.setblocking(False)
                    sel.register(conn, selectors.EVENT_READ, conn)
                    continue
                conn = key.data
                try:
                    data = conn.recv(65536)
                except BlockingIOError:
                    continue
                except OSError:
                    data = b""
                if data:
                    conn.setblocking(True)
                    conn.sendall(data)
                    conn.setblocking(False)
                else:
                    sel.unregister(conn)
                    conn.close()
        for key in list(sel.get_map().values()):
            key.fileobj.close()  # type: ignore[union-attr]
        sel.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(5)


def threads_and_files(pid: int | str = "self") -> tuple[int, int]:
    """The kernel's count of a process's threads and open files."""
    status = Path(f"/proc/{pid}/status").read_text()
    threads = int(next(line for line in status.splitlines() if line.startswith("Threads:"))[8:])
    return threads, len(os.listdir(f"/proc/{pid}/fd"))


def round_trip(path: Path, payload: bytes = b"move please") -> float:
    """Seconds for ``payload`` to come back through the relay's socket ``path``."""
    started = time.monotonic()
    with socket.socket(socket.AF_UNIX) as sock:
        sock.settimeout(10)
        sock.connect(str(path))
        sock.sendall(payload)
        got = b""
        while len(got) < len(payload):
            chunk = sock.recv(65536)
            assert chunk, "the relay closed an honest connection"
            got += chunk
    assert got == payload
    return time.monotonic() - started


def wait(check: Any, timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")


def start_flood(path: Path, connections: int, **kw: Any) -> subprocess.Popen[bytes]:
    env = {**os.environ, "CIRULLA_SERVER": f"unix:{path}"}
    argv = [sys.executable, str(FLOOD), "--no-play", "--connections", str(connections)]
    return subprocess.Popen(argv, env=env, stderr=subprocess.DEVNULL, **kw)


def test_a_flood_is_held_to_its_bound_and_costs_no_thread() -> None:
    """400 half-open connections against one endpoint: it holds 16 (its bound), the
    process gains one thread (the relay's) and about two files per held connection,
    another endpoint's round trips go through meanwhile, and the flood's connections are
    all closed once it dies. (Before: one thread and two files per connection, ~300 of
    each, and the next bot's sandbox could not start.)"""
    with echo_server() as address:
        before = threads_and_files()
        with ServerRelay(address) as relay:
            flooded = relay.endpoint()
            honest = relay.endpoint()
            flood = start_flood(flooded.path, 400)
            try:
                wait(
                    lambda: relay.stats().per_endpoint.get(flooded.number) == relay.per_endpoint,
                    30,
                    "the flood to reach its bound",
                )
                time.sleep(2.0)  # it keeps trying: the bound holds
                stats = relay.stats()
                during = threads_and_files()
                times = [round_trip(honest.path) for _ in range(20)]
            finally:
                flood.kill()
                flood.wait()
            assert stats.per_endpoint[flooded.number] == relay.per_endpoint == 16, stats
            assert stats.connections == 16 and stats.alive and stats.errors == 0, stats
            # one thread more (the relay's, and the echo server's own in `before`)
            assert during[0] <= before[0] + 1, (before, during)
            # each held connection: its socket, the relay's upstream one, the echo's side
            assert during[1] <= before[1] + 3 * 16 + 8, (before, during)
            assert max(times) < 2.0, times  # not queued behind the flood
            wait(lambda: relay.stats().connections == 0, 10, "the flood's connections closed")
            assert relay.stats().accepted >= 16 + 20
        after = threads_and_files()
        assert after[0] <= before[0] and after[1] <= before[1] + 2, (before, after)


def test_an_endpoint_closes_when_its_process_exits() -> None:
    """A sandbox's endpoint lives as long as its process: watched by a pidfd, it is
    closed (socket file gone) when the process exits, and its connections with it."""
    with echo_server() as address, ServerRelay(address) as relay:
        endpoint = relay.endpoint()
        flood = start_flood(endpoint.path, 5)
        endpoint.watch(flood.pid)
        wait(lambda: relay.stats().per_endpoint.get(endpoint.number) == 5, 20, "5 connections")
        flood.send_signal(signal.SIGKILL)
        flood.wait()
        wait(lambda: not endpoint.path.exists(), 10, "the endpoint to close")
        assert relay.stats().endpoints == 0 and relay.stats().connections == 0


EMFILE_SCRIPT = """
import json, os, resource, subprocess, sys, time
sys.path.insert(0, {tests!r})
from test_relay import echo_server, round_trip, start_flood, wait
from cirulla.clients.matches.relay import ServerRelay

resource.setrlimit(resource.RLIMIT_NOFILE, (96, 4096))
out = {{}}
with echo_server() as address, ServerRelay(address, per_endpoint=10_000, total=10_000) as relay:
    flooded, honest = relay.endpoint(), relay.endpoint()
    raise_limit = lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (4096, 4096))
    flood = start_flood(flooded.path, 300, preexec_fn=raise_limit)
    wait(lambda: relay.stats().exhausted > 0, 30, "EMFILE")
    time.sleep(1.5)  # out of files for a while: the loop backs off, and lives
    out["during"] = relay.stats().__dict__
    flood.kill()
    flood.wait()
    wait(lambda: relay.stats().connections == 0, 20, "the flood's connections closed")
    out["echo"] = round_trip(honest.path)
    again = relay.endpoint()
    out["echo_new_endpoint"] = round_trip(again.path)
    out["after"] = relay.stats().__dict__
print("RESULT " + json.dumps(out))
"""


def test_the_relay_survives_running_out_of_open_files() -> None:
    """With a 96-file limit (and its bounds out of the way) a flood runs the relay's
    process out of open files: the relay pauses accepting (EMFILE counted), its thread
    lives on, and once the flood is gone it relays again, on an old endpoint and a new
    one. (Before: the accept loop returned for good on its first OSError.)"""
    code = EMFILE_SCRIPT.format(tests=str(Path(__file__).parent))
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, done.stdout + done.stderr[-3000:]
    result = json.loads(lines[0][7:])
    assert result["during"]["exhausted"] > 0 and result["during"]["alive"], result
    assert result["after"]["alive"] and result["after"]["errors"] == 0, result
    assert result["echo"] < 5 and result["echo_new_endpoint"] < 5, result


def records_elapsed(out: Path) -> dict[str, list[int]]:
    """Every action's elapsed_ms by the bot that played it, from the tournament's records."""
    found: dict[str, list[int]] = {}
    for path in (out / "records").glob("*.json"):
        record = json.loads(path.read_text())
        names = {seat["seat"]: seat["name"] for seat in record["seats"]}
        for deal in record["deals"]:
            for action in deal["actions"]:
                found.setdefault(names[action["seat"]], []).append(int(action["elapsed_ms"]))
    return found


@pytest.mark.slow
def test_a_flooding_bot_in_a_sandboxed_tournament_delays_no_other_match(tmp_path: Path) -> None:
    """A sandboxed tournament with the flooding bot (from its first turn on it plays while
    holding every connection it can get, in every one of its matches) and two honest
    bots: every game finishes, the honest bots' moves (those against it made under its
    flood) take their usual milliseconds, and the runner's threads and open files stay
    bounded all along (read from /proc while it runs)."""
    out = tmp_path / "t"
    argv = [sys.executable, "-m", "cirulla", "tournament", "--out", str(out), "--sandbox"]
    argv += ["--bot", f"flood=cmd:{{python}} {FLOOD} --connections 400"]
    argv += ["--bot", "greedy", "--bot", "random", "--games", "4", "--target", "11"]
    argv += ["--concurrency", "3"]
    runner = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    peak = (0, 0)
    try:
        while runner.poll() is None:
            try:
                now = threads_and_files(runner.pid)
            except (OSError, StopIteration, ValueError):
                break
            peak = (max(peak[0], now[0]), max(peak[1], now[1]))
            time.sleep(0.1)
        output = runner.communicate(timeout=300)[0].decode(errors="replace")
    finally:
        if runner.poll() is None:
            runner.kill()
    assert runner.returncode == 0, output
    # each of its matches (its own log): it flooded on its first turn and was held to the
    # relay's bound and the kernel's backlog (+1) of it, all of which but the connection it
    # plays on it held while its match went on (after the match it may take that one too)
    bound = relay_module.PER_ENDPOINT + relay_module.BACKLOG + 1
    floods = []
    for path in (out / "logs").glob("m-*.log"):
        lines = path.read_text(errors="replace").splitlines()
        floods.append([json.loads(line[6:]) for line in lines if line.startswith("FLOOD {")])
    assert len(floods) == 8, [len(states) for states in floods]  # 2 pairings of 4 games
    for states in floods:
        assert max(state["held"] for state in states) <= bound, states
        assert any(s["held"] == bound - 1 and s["turns"] >= 2 for s in states), states
    standings = json.loads((out / "results.json").read_text())["standings"]
    assert standings["games"] == 12 and standings["void_games"] == 0, standings  # 3 pairings
    for entry in standings["bots"]:
        if entry["bot"] != "flood":
            assert entry["problems"] == {}, entry
    elapsed = records_elapsed(out)
    honest = elapsed["greedy"] + elapsed["random"]
    assert len(honest) > 50 and max(honest) < 2_000, sorted(honest)[-5:]
    # the runner: its game threads, one relay thread; files for its bots and the relay's
    # bounded connections (before: a thread and two files per flood connection)
    assert peak[0] < 80 and peak[1] < 400, peak
    print(f"runner peak threads={peak[0]} files={peak[1]}; honest max move ms={max(honest)}")
