"""The chaos test: a ladder of four honest bots and hostile ones, run as an unprivileged
user in a control group folder an operator gave it (``cirulla ladder cgroup-setup``),
once on SQLite and once on PostgreSQL.

The hostile bots each attack the machine one way (a relay flood, a thread and fork
bomb, a tmpfs fill, a memory balloon, a CPU burn, a stdout flood, a rename of its seat on
resume: tests/programs/). The ladder plays them all, each hostile one first against an
honest one, until every attack has been seen and honest games have ended meanwhile (at
most 4 minutes). Then:

* every finished match of an honest bot was played normally by it (its seats all
  ``ok``: no forfeit, no timeout) and every one of its moves in the games' records took
  less than the move clock (none played by the server on a timeout), and no honest bot
  was deactivated or has a failure counted;
* the hostile bots that a limit stops are stopped, the limit named in their failure
  (``killed: memory limit 2 GiB``, ``killed: process limit 256``, ``killed: output
  limit 64 MiB``); the tmpfs filler's files stopped at their size;
* the CPU burner, held to its quota of one core, is named in its games' notes
  (``throttled: cpu limit 1 core``), and if its moves overran its clock the forfeit
  names the clock;
* the renamer's resumes under a name spelling its hand were refused (FAILED_PRECONDITION)
  and its seat's name, in GetMatch and ListMatches of every one of its matches and in
  the standings, is the one of its first Hello: nothing of its hand is shown;
* the ladder process's threads, open files and resident memory, sampled from /proc all
  along, stay bounded.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from cirulla.bots.cgroups import undelegate
from cirulla.v1 import ladder_pb2, match_service_pb2, match_service_pb2_grpc
from tests.ladder_harness import LadderProcess, open_store, wait_for

pytestmark = pytest.mark.slow

#: The unprivileged user the ladder runs as (nobody: every Debian machine has it).
LADDER_UID = 65534
BOTS = Path(__file__).parents[1] / "programs"
HONEST = {"random-a": "random", "random-b": "random", "greedy-a": "greedy", "greedy-b": "greedy"}
HOSTILE = {
    "bomb": f"cmd:{{python}} {BOTS / 'hostile.py'} bomb",
    "balloon": f"cmd:{{python}} {BOTS / 'hostile.py'} balloon",
    "stdout": f"cmd:{{python}} {BOTS / 'hostile.py'} flood",
    "tmpfs": f"cmd:{{python}} {BOTS / 'hostile.py'} tmpfs",
    "burner": f"cmd:{{python}} {BOTS / 'hostile.py'} burn",
    # holds as many half-open connections to its relay endpoint as it can (issue 37,
    # finding 1: against the relay of one thread per connection, innocent matches failed)
    "relay": f"cmd:{{python}} {BOTS / 'relay_flood.py'}",
    # resumes its seat under a name spelling its hand (issue 37, finding 3)
    "rename": f"cmd:{{python}} {BOTS / 'hostile.py'} rename",
}
#: What names the limit in a hostile bot's failure, for those a limit stops.
STOPPED_BY = {
    "bomb": "killed: process limit 256",
    "balloon": "killed: memory limit 2 GiB",
    "stdout": "killed: output limit 64 MiB",
}
#: What names the quota that held a hostile bot back, in its games' notes.
THROTTLED = {"burner": "throttled: cpu limit 1 core"}
#: What the renamer's leaking names start with (tests/programs/hostile.py, LEAK_PREFIX).
LEAK = "hand-"
#: Seconds the ladder plays at most until what is checked has happened (a loaded machine
#: plays slower: the test waits for the attacks and the games, not for a clock).
MAX_SECONDS = 240.0


class HostileLines:
    """The lines of the bots' logs that say ``HOSTILE`` or ``FLOOD`` (the relay flooder's
    counts, tests/programs/relay_flood.py), read as the logs grow: each
    read goes on from where the last one stopped. (The stdout flooder's log alone holds
    its 64 MiB: read whole at every poll, the logs cost seconds of the machine each time,
    and the test's polls came seconds apart.)"""

    def __init__(self, folder: Path) -> None:
        self.logs = folder / "ladder" / "cirulla-ladder-data" / "logs"
        self.read_to: dict[Path, int] = {}
        self.unfinished: dict[Path, bytes] = {}
        self.lines: list[str] = []

    def all(self, to_the_end: bool = False) -> list[str]:
        """Every such line so far (``to_the_end``: a last line without its newline too)."""
        for path in sorted(self.logs.glob("*.log")):
            with path.open("rb") as log:
                log.seek(self.read_to.get(path, 0))
                data = self.unfinished.pop(path, b"") + log.read()
                self.read_to[path] = log.tell()
            complete, _, rest = data.rpartition(b"\n")
            if to_the_end:
                complete, rest = data, b""
            self.unfinished[path] = rest  # a line still being written: read it whole later
            if b"HOSTILE" in complete or b"FLOOD" in complete:
                text = complete.decode(errors="replace")
                self.lines += [
                    line for line in text.splitlines() if "HOSTILE" in line or "FLOOD" in line
                ]
        return self.lines

    def tmpfs_reported(self) -> bool:
        return any("HOSTILE tmpfs" in line for line in self.all())

    def of(self, mode: str) -> list[str]:
        prefix = f"HOSTILE {mode}"
        return [line for line in self.all() if line.startswith(prefix)]

    def flood_held(self) -> int:
        """The most connections the relay flooder said it held at once."""
        most = 0
        for line in self.all():
            if line.startswith("FLOOD {"):
                # a line another thread's output ran into is not a count: the next one is
                with contextlib.suppress(ValueError, KeyError, TypeError):
                    most = max(most, int(json.loads(line.split("FLOOD ", 1)[1])["held"]))
        return most


def shown_matches(stub: Any, name: str) -> list[Any]:
    """``name``'s ladder matches that are over and not withheld."""
    history = stub.GetBotHistory(ladder_pb2.GetBotHistoryRequest(bot_name=name, page_size=200))
    return [
        m
        for m in history.matches
        if m.status == ladder_pb2.LADDER_MATCH_STATUS_FINISHED and not m.withheld
    ]


def notes_of(stub: Any, name: str) -> list[str]:
    """Every note of ``name``'s finished, shown matches."""
    return [note for m in shown_matches(stub, name) for note in m.notes]


def finished_honest(stub: Any) -> int:
    """Finished, shown (not withheld) matches with an honest seat."""
    seen = set()
    for name in HONEST:
        history = stub.GetBotHistory(ladder_pb2.GetBotHistoryRequest(bot_name=name, page_size=200))
        for match in history.matches:
            if match.status == ladder_pb2.LADDER_MATCH_STATUS_FINISHED and not match.withheld:
                seen.add(match.match_id)
    return len(seen)


def move_times(
    matches: Any, histories: dict[str, Any], admin: Any
) -> list[tuple[str, int, list[int], int]]:
    """(bot, its seat's timeouts, every move's milliseconds, the move clock) of each game
    an honest bot finished and that is shown, from the match server's records."""
    out = []
    for name, history in histories.items():
        for match in history:
            if match.status != ladder_pb2.LADDER_MATCH_STATUS_FINISHED or match.withheld:
                continue
            seats = {s.seat for s in match.seats if s.bot_name == name}
            got = matches.GetMatch(
                match_service_pb2.GetMatchRequest(match_id=match.server_match_id),
                metadata=admin,
                timeout=30,
            ).match
            limit = got.settings.time_control.move_limit_ms
            timeouts = sum(s.timeouts for s in got.seats if s.seat in seats)
            listed = matches.ListRecords(
                match_service_pb2.ListRecordsRequest(match_id=match.server_match_id),
                metadata=admin,
                timeout=30,
            )
            elapsed = []
            for summary in listed.records:
                record = matches.GetRecord(
                    match_service_pb2.GetRecordRequest(record_id=summary.record_id),
                    metadata=admin,
                    timeout=30,
                ).record
                for deal in record.deals:
                    for action in deal.actions:
                        if action.seat in seats:
                            elapsed.append(action.elapsed_ms)
                            timeouts += action.by_timeout
            out.append((name, timeouts, elapsed, limit))
    return out


def seat_names(matches: Any, stub: Any, bot: str) -> list[str]:
    """The name ``bot``'s seat shows, as anyone reads it (no token), in GetMatch and
    ListMatches of each of its matches on the ladder's match server."""
    history = stub.GetBotHistory(ladder_pb2.GetBotHistoryRequest(bot_name=bot, page_size=200))
    listed = {
        m.match_id: m
        for m in matches.ListMatches(
            match_service_pb2.ListMatchesRequest(page_size=1000), timeout=30
        ).matches
    }
    shown = []
    for match in history.matches:
        if not match.server_match_id:
            continue
        seats = {s.seat for s in match.seats if s.bot_name == bot}
        try:
            got = matches.GetMatch(
                match_service_pb2.GetMatchRequest(match_id=match.server_match_id), timeout=30
            ).match
        except grpc.RpcError as exc:
            # a twin whose pair is still in play is refused whole: nothing shown to leak
            assert exc.code() == grpc.StatusCode.FAILED_PRECONDITION, exc
            assert "withheld" in str(exc.details()), exc
            got = None
        for view in (got, listed.get(match.server_match_id)):
            if view is not None:
                # a withheld twin shows no name at all: nothing to leak either
                shown += [s.name for s in view.seats if s.seat in seats and s.name]
    return shown


@pytest.fixture
def delegated() -> Iterator[str]:
    """A control group folder of this test's own, given to the ladder's user."""
    base = f"cirulla-chaos-{secrets.token_hex(4)}"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "cirulla",
            "ladder",
            "cgroup-setup",
            "--user",
            "nobody",
            "--base",
            base,
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr  # as root on CI and this machine
    try:
        yield base
    finally:
        undelegate(base)


@pytest.fixture
def folder() -> Iterator[Path]:
    """The ladder's folder, owned by its user (pytest's tmp_path is root's only)."""
    path = Path(tempfile.mkdtemp(prefix="cirulla-chaos-"))
    os.chown(path, LADDER_UID, LADDER_UID)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


class Sampler:
    """The ladder process's threads, open files and resident memory, every half second."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.samples: list[tuple[int, int, int]] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop.wait(0.5):
            with contextlib.suppress(OSError, ValueError):
                status = Path(f"/proc/{self.pid}/status").read_text()
                fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
                threads = int(fields["Threads"])
                rss_kib = int(fields["VmRSS"].split()[0])
                files = len(os.listdir(f"/proc/{self.pid}/fd"))
                self.samples.append((threads, files, rss_kib))

    def peaks(self) -> tuple[int, int, int]:
        self.stop.set()
        self.thread.join(5)
        assert self.samples
        return (
            max(s[0] for s in self.samples),
            max(s[1] for s in self.samples),
            max(s[2] for s in self.samples) // 1024,
        )


def hidden_ancestor(path: Path) -> tuple[Path, Path] | None:
    """(A, A's child on the way to ``path``) for the first folder A above ``path`` that
    other users cannot enter (CI's Python lives under root's 0700 home), or None."""
    for parent in reversed(path.parents):
        if parent != Path("/") and not parent.stat().st_mode & 0o001:
            return parent, path.parents[len(path.parents) - len(parent.parts) - 1]
    return None


def user_argv(argv: list[str]) -> list[str]:
    """``argv`` run as the unprivileged user. Where this interpreter lives under a folder
    that user cannot enter, a private mount namespace puts a world-readable tmpfs over
    that folder with only the interpreter's subfolder bound into it: the user reaches
    the interpreter and nothing else of the folder, and gets no privilege at all."""
    user = ["setpriv", f"--reuid={LADDER_UID}", f"--regid={LADDER_UID}", "--clear-groups", "--"]
    hidden = hidden_ancestor(Path(sys.base_prefix))
    if hidden is None:
        return [*user, *argv]
    folder, child = hidden
    script = (
        'set -e; keep=$(mktemp -d); mount --bind "$1" "$keep"; '
        'mount -t tmpfs -o mode=755 tmpfs "$1"; mkdir -p "$2"; '
        'mount --bind "$keep/${2#$1/}" "$2"; shift 2; exec "$@"'
    )
    return [
        "unshare",
        "--mount",
        "--propagation",
        "private",
        "--",
        "sh",
        "-c",
        script,
        "sh",
        str(folder),
        str(child),
        *user,
        *argv,
    ]


def as_ladder_user(ladder: LadderProcess, base: str) -> None:
    """Start ``ladder`` as the unprivileged user, in the delegated folder's groups."""
    ladder.folder.mkdir(parents=True, exist_ok=True)
    os.chown(ladder.folder, LADDER_UID, LADDER_UID)
    real_popen = subprocess.Popen

    def popen(argv: list[str], **kw: Any) -> subprocess.Popen[bytes]:
        env = {**os.environ, "CIRULLA_CGROUP": base, "HOME": str(ladder.folder)}
        return real_popen(user_argv(argv), env=env, **kw)

    subprocess.Popen = popen  # type: ignore[assignment,misc]
    try:
        ladder.start()
    finally:
        subprocess.Popen = real_popen  # type: ignore[misc]


@pytest.mark.parametrize("db_kind", ["sqlite", "postgresql"])
def test_honest_bots_play_on_while_hostile_ones_are_stopped(
    db_kind: str, delegated: str, folder: Path, request: pytest.FixtureRequest
) -> None:
    if db_kind == "sqlite":
        db = f"sqlite:///{folder / 'ladder.sqlite3'}"
    else:
        db = str(request.getfixturevalue("postgres_url"))
    # the ladder runs as its own user: it makes (and migrates) its SQLite file itself, which
    # a file made by this process (root's, private) would refuse it
    ladder = LadderProcess(folder / "ladder", db, "--concurrency", "4", migrate_first=False)
    as_ladder_user(ladder, delegated)
    try:
        assert ladder.proc is not None
        said = (folder / "ladder" / "serve.log").read_text()
        assert "per-bot limits: control groups v" in said and delegated in said, said[-2000:]
        sampler = Sampler(ladder.proc.pid)
        stub = ladder.stub()
        for name, spec in {**HONEST, **HOSTILE}.items():  # by rpc: a command each is slow
            stub.AddBot(ladder_pb2.AddBotRequest(bot_name=name, spec=spec), metadata=ladder.admin())
        # each hostile bot plays an honest one first (requested games go first); those
        # whose attack shows only as their games go on (the burner's throttled games, the
        # renamer's resumes, the flood held through a game) are requested first, the ones
        # a limit stops within seconds after them
        slow_to_show = ["burner", "rename", "relay"]
        order = slow_to_show + [name for name in HOSTILE if name not in slow_to_show]
        for name, honest in zip(order, list(HONEST) * 2, strict=False):
            stub.RequestMatch(
                ladder_pb2.RequestMatchRequest(bot_names=[name, honest], games=2),
                metadata=ladder.admin(),
            )
        store = open_store(db)
        hostile = HostileLines(folder)

        matches = match_service_pb2_grpc.MatchServiceStub(grpc.insecure_channel(ladder.address))
        #: honest matches finished when the relay flooder was first seen holding connections
        at_flood: list[int] = []

        def enough() -> bool:
            """Every attack was seen, and honest games ended meanwhile: each limit-stopped
            bot named its limit, the burner was throttled, the renamer tried three names
            and a match of it is shown, the tmpfs filler reported, the relay flooder held
            connections and an honest match finished after that, six in all. (The test
            played at least 20 s before: that time was for these attacks to happen; once
            seen, more of the same proves nothing new.)"""
            named = all(
                limit in store.bots.get_bot(name)["last_failure"]
                for name, limit in STOPPED_BY.items()
            )
            throttled = all(
                any(words in note for note in notes_of(stub, name))
                for name, words in THROTTLED.items()
            )
            renamed = len(hostile.of("rename name=")) >= 3
            honest = finished_honest(stub)
            if not at_flood and hostile.flood_held() > 0:
                at_flood.append(honest)
            return (
                named
                and throttled
                and renamed
                and hostile.tmpfs_reported()
                and bool(at_flood)
                and honest >= 6
                and honest > at_flood[0]
                and bool(seat_names(matches, stub, "rename"))
            )

        wait_for(enough, MAX_SECONDS, "every attack, and honest games to end meanwhile")
        threads, files, rss_mib = sampler.peaks()
        histories = {
            name: stub.GetBotHistory(
                ladder_pb2.GetBotHistoryRequest(bot_name=name, page_size=200)
            ).matches
            for name in HONEST
        }
        bots = {name: store.bots.get_bot(name) for name in {**HONEST, **HOSTILE}}
        logs = hostile.all(to_the_end=True)  # every HOSTILE line of every log
        honest_moves = move_times(matches, histories, ladder.admin())
        hostile_notes = {name: notes_of(stub, name) for name in THROTTLED}
        renamer = seat_names(matches, stub, "rename")
        standings = stub.GetStandings(ladder_pb2.GetStandingsRequest(include_inactive=True)).entries
    finally:
        ladder.stop()
    report = {
        name: (b["state"], b["consecutive_failures"], b["last_failure"][-300:])
        for name, b in bots.items()
    }
    # honest bots: every finished match played normally, nothing counted against them
    finished = 0
    for name, matches in histories.items():
        for match in matches:
            # a withheld twin shows no outcome until its pair is over: not counted
            if match.status != ladder_pb2.LADDER_MATCH_STATUS_FINISHED or match.withheld:
                continue
            finished += 1
            mine = [s for s in match.seats if s.bot_name == name]
            assert all(s.outcome == "ok" for s in mine), (
                name,
                [(s.bot_name, s.outcome, s.fault) for s in match.seats],
                list(match.notes),
            )
        assert bots[name]["state"] == "active", report
        assert bots[name]["consecutive_failures"] == 0, report
    assert finished >= 4, (finished, report)
    # every honest move within the clock, none settled by the server on a timeout
    assert honest_moves, "no honest move read from the records"
    for name, seat_timeouts, elapsed, limit_ms in honest_moves:
        assert seat_timeouts == 0 and all(ms < limit_ms for ms in elapsed), (
            name,
            seat_timeouts,
            max(elapsed, default=0),
            limit_ms,
        )
    # hostile bots a limit stops: stopped with the limit named
    for name, named in STOPPED_BY.items():
        text = bots[name]["last_failure"] + " " + bots[name]["state_reason"]
        assert named in text, str(report)
    # the CPU burner: held to its quota and named; a forfeit on time names the clock
    for name, words in THROTTLED.items():
        assert any(words in note for note in hostile_notes[name]), (name, hostile_notes[name])
        for note in hostile_notes[name]:
            if f"({name}) forfeited: timeout" in note:
                assert "(move clock " in note, note
    # the renamer: every rename refused, and its seat shows its first Hello's name only
    tried = [line for line in logs if "HOSTILE rename name=" in line]
    assert tried and all("refused FAILED_PRECONDITION" in line for line in tried), tried
    assert all(LEAK in line for line in tried), tried
    assert renamer, "no match of the renamer read"
    for shown in renamer:
        assert shown == "rename", renamer
    assert all(LEAK not in e.bot.name for e in standings)
    assert "rename" in {e.bot.name for e in standings}
    # the tmpfs filler's files stopped at their size (512 MiB /tmp, 64 MiB /dev/shm)
    full = [line for line in logs if "HOSTILE tmpfs" in line]
    assert full, "the tmpfs filler never reported"
    for line in full:
        assert int(line.split(" after ")[1].split()[0]) <= 512 + 64, line
    moves = [ms for _, _, elapsed, _ in honest_moves for ms in elapsed]
    print(
        f"chaos {db_kind}: {finished} honest matches, {len(moves)} honest moves, slowest "
        f"{max(moves)} ms of {honest_moves[0][3]} ms; burner: {hostile_notes['burner'][:1]}; "
        f"renamer shown as {sorted(set(renamer))}, {len(tried)} renames refused; ladder peaks: "
        f"{threads} threads, {files} files, {rss_mib} MiB"
    )
    # the ladder itself stayed bounded
    assert threads < 120, (threads, files, rss_mib)
    assert files < 400, (threads, files, rss_mib)
    assert rss_mib < 800, (threads, files, rss_mib)
