"""Issue 21, the ladder's part: a stranger on the port changes nothing, the ladder is
secure by default, every field is bounded, its files are private and a bot's output is
shown as data. Real ``cirulla ladder serve`` processes, real gRPC, SQLite and PostgreSQL."""

from __future__ import annotations

import contextlib
import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

import grpc
import pytest

from cirulla.bots.botspec import BotSpec
from cirulla.v1 import ladder_pb2, ladder_pb2_grpc
from tests.ladder_harness import LadderProcess, open_store, settled, wait_for

STRANGER = (("authorization", "Bearer not-the-token"),)
DENIED = (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED)


def snapshot(db: str) -> list[dict[str, Any]]:
    """Every bot with its versions, state and key hash: what a stranger must not change."""
    from sqlalchemy import select

    from cirulla.ladder.schema import bot_versions, bots

    store = open_store(db)
    try:
        with store.engine.connect() as conn:
            rows = [dict(r) for r in conn.execute(select(bots).order_by(bots.c.id)).mappings()]
            rows += [
                dict(r)
                for r in conn.execute(select(bot_versions).order_by(bot_versions.c.id)).mappings()
            ]
        return rows
    finally:
        store.engine.dispose()


def refused(rpc: Any, request: Any, *codes: grpc.StatusCode, metadata: Any = ()) -> grpc.RpcError:
    """``rpc(request)`` fails with one of ``codes`` and a short message."""
    with pytest.raises(grpc.RpcError) as info:
        rpc(request, metadata=metadata)
    assert info.value.code() in (codes or DENIED), info.value
    details = info.value.details() or ""
    assert details and len(details) < 300, details
    return info.value


def test_a_stranger_without_the_token_changes_nothing(tmp_path: Path, db_url: str) -> None:
    """No --admin-token-file: the ladder makes a 0600 token the operator's commands find;
    every mutating rpc without it is refused, on loopback too, and the database is as it
    was. (Before the fix the ladder ran open: the stranger's cmd: bot was registered.)"""
    ladder = LadderProcess(tmp_path / "ladder", db_url, "--concurrency", "0")
    ladder.start()
    try:
        token = tmp_path / "ladder" / "cirulla-ladder-data" / "admin-token"
        assert stat.S_IMODE(token.stat().st_mode) == 0o600
        assert len(token.read_text().strip()) >= 32
        # the operator's own commands in the folder find the token by themselves
        assert "owner version 1" in ladder.cli("add", "owner", "random").stdout
        assert "bot key (shown once" in ladder.cli("add", "remote", "connect").stdout
        before = snapshot(db_url)
        stub = ladder.stub()
        evil = f"cmd:{sys.executable} -c \"open('{tmp_path}/pwned', 'w')\""
        for metadata in ((), STRANGER):
            refused(
                stub.AddBot, ladder_pb2.AddBotRequest(bot_name="evil", spec=evil), metadata=metadata
            )
            refused(
                stub.AddBot,
                ladder_pb2.AddBotRequest(bot_name="remote", spec="connect"),
                metadata=metadata,
            )
            refused(
                stub.AddBot,
                ladder_pb2.AddBotRequest(bot_name="owner", spec="connect"),
                metadata=metadata,
            )
            refused(stub.PauseBot, ladder_pb2.PauseBotRequest(bot_name="owner"), metadata=metadata)
            refused(
                stub.ResumeBot, ladder_pb2.ResumeBotRequest(bot_name="owner"), metadata=metadata
            )
            refused(
                stub.RemoveBot, ladder_pb2.RemoveBotRequest(bot_name="owner"), metadata=metadata
            )
        error = refused(stub.PauseBot, ladder_pb2.PauseBotRequest(bot_name="owner"))
        assert error.code() == grpc.StatusCode.UNAUTHENTICATED and "admin token" in error.details()
        assert snapshot(db_url) == before
        assert not (tmp_path / "pwned").exists()
        out = ladder.cli(
            "pause",
            "owner",
            "--server",
            ladder.address,
            "--admin-token-file",
            str(tmp_path / "nope"),
            check=False,
        )
        assert out.returncode == 2 and "Traceback" not in out.stderr
        assert "owner: paused" in ladder.cli("pause", "owner").stdout
    finally:
        ladder.stop()


def test_insecure_open_registers_only_new_connect_in_bots(tmp_path: Path, db_url: str) -> None:
    """--insecure-open is loudly warned and lets a stranger register a NEW connect-in bot,
    nothing else: no command to run, no existing name, no pause or remove."""
    ladder = LadderProcess(tmp_path / "ladder", db_url, "--concurrency", "0", "--insecure-open")
    ladder.start()
    try:
        assert "WARNING: --insecure-open" in ladder.log.read_text()
        ladder.add("owner", "random")
        stub = ladder.stub()
        mine = stub.AddBot(ladder_pb2.AddBotRequest(bot_name="mine", spec="connect"))
        assert mine.bot_key and mine.bot.connect_in
        before = snapshot(db_url)
        for spec in (f"cmd:{sys.executable} -c pass", "serve:true", "text:true", "random"):
            error = refused(stub.AddBot, ladder_pb2.AddBotRequest(bot_name="new", spec=spec))
            assert error.code() == grpc.StatusCode.PERMISSION_DENIED
        for name in ("mine", "owner"):  # no fresh key for someone else's name
            error = refused(stub.AddBot, ladder_pb2.AddBotRequest(bot_name=name, spec="connect"))
            assert (
                error.code() == grpc.StatusCode.PERMISSION_DENIED and "bot_name" in error.details()
            )
        refused(stub.PauseBot, ladder_pb2.PauseBotRequest(bot_name="mine"))
        refused(stub.RemoveBot, ladder_pb2.RemoveBotRequest(bot_name="owner"))
        assert snapshot(db_url) == before
    finally:
        ladder.stop()


def test_every_field_is_bounded(tmp_path: Path, db_url: str) -> None:
    """Huge or look-alike values are INVALID_ARGUMENT naming the field, with a short
    message; nothing is stored and the standings still answer."""
    ladder = LadderProcess(tmp_path / "ladder", db_url, "--concurrency", "0")
    ladder.start()
    try:
        stub = ladder.stub()
        admin = ladder.admin()
        ladder.add("owner", "random")
        huge = "x" * (200 * 1024)
        bad: list[tuple[str, Any]] = [
            ("spec", ladder_pb2.AddBotRequest(bot_name="big", spec="cmd:" + huge)),
            ("bot_name", ladder_pb2.AddBotRequest(bot_name=huge, spec="random")),
            ("bot_name", ladder_pb2.AddBotRequest(bot_name="owner\n", spec="random")),
            ("bot_name", ladder_pb2.AddBotRequest(bot_name="owner ", spec="random")),
            ("bot_name", ladder_pb2.AddBotRequest(bot_name="ow\x1bner", spec="random")),
            ("spec", ladder_pb2.AddBotRequest(bot_name="ctl", spec="random\x1b[2J")),
            (
                "max_concurrency",
                ladder_pb2.AddBotRequest(bot_name="many", spec="random", max_concurrency=2**32 - 1),
            ),
        ]
        for field, request in bad:
            error = refused(stub.AddBot, request, grpc.StatusCode.INVALID_ARGUMENT, metadata=admin)
            assert field in error.details(), (field, error.details())
        for reason in (huge, "fine\x1b]8;;http://x\x07"):
            error = refused(
                stub.PauseBot,
                ladder_pb2.PauseBotRequest(bot_name="owner", reason=reason),
                grpc.StatusCode.INVALID_ARGUMENT,
                metadata=admin,
            )
            assert "reason" in error.details()
            refused(
                stub.RemoveBot,
                ladder_pb2.RemoveBotRequest(bot_name="owner", reason=reason),
                grpc.StatusCode.INVALID_ARGUMENT,
                metadata=admin,
            )
        refused(
            stub.GetBotHistory,
            ladder_pb2.GetBotHistoryRequest(bot_name=huge),
            grpc.StatusCode.NOT_FOUND,
        )
        refused(
            stub.GetLadderMatch,
            ladder_pb2.GetLadderMatchRequest(match_id=huge),
            grpc.StatusCode.NOT_FOUND,
        )
        names = [
            e.bot.name
            for e in stub.GetStandings(
                ladder_pb2.GetStandingsRequest(include_inactive=True)
            ).entries
        ]
        assert names == ["owner"]
    finally:
        ladder.stop()


@pytest.mark.slow
def test_files_are_private(tmp_path: Path) -> None:
    """The database (with WAL and SHM), the data folder, its records and logs: 0600 files
    in 0700 folders, also when an older ladder left them readable."""
    folder = tmp_path / "ladder"
    data = folder / "cirulla-ladder-data"
    (data / "records").mkdir(parents=True)
    old = data / "records" / "old.json"
    old.write_text("{}")
    os.chmod(data, 0o755)
    os.chmod(old, 0o644)
    db = folder / "cirulla-ladder.sqlite3"
    ladder = LadderProcess(folder, f"sqlite:///{db}")
    ladder.start()
    try:
        ladder.add("random", "random")
        ladder.add("greedy", "greedy")
        wait_for(lambda: list((data / "logs").glob("*.log")), 120, "a bot log", every=0.1)
        wait_for(
            lambda: len(list((data / "records").glob("*.json.gz"))) > 1,
            240,
            "a game record",
            every=0.1,
        )
        files = [db, Path(f"{db}-wal"), Path(f"{db}-shm"), folder / "cirulla-ladder.json"]
        folders = [data]
        for root, dirs, names in os.walk(data):
            folders += [Path(root, d) for d in dirs]
            files += [Path(root, n) for n in names]
        assert data / "logs" in folders and data / "records" in folders
        for path in files:
            assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
        for path in folders:
            assert stat.S_IMODE(path.stat().st_mode) == 0o700, path
    finally:
        ladder.stop()


HOSTILE_OUTPUT = (
    "print('[red]x[/red] [link=http://evil.example]click[/link] "
    "\\x1b]8;;http://evil.example\\x1b\\\\here\\x1b]8;;\\x1b\\\\ \\x1b[2J [bold]'); "
    "raise SystemExit(3)"
)


def test_a_bots_output_is_shown_as_data(tmp_path: Path) -> None:
    """A bot that prints markup and escape sequences, then crashes until deactivated:
    `standings --all` shows its last log literally, no ESC byte reaches the terminal.
    (Before the fix rich parsed it as markup: MarkupError, or links and colours.)"""
    ladder = LadderProcess(tmp_path / "ladder", f"sqlite:///{tmp_path / 'l.sqlite3'}")
    ladder.start()
    try:
        ladder.add("random", "random")
        ladder.add("evil", f'cmd:{sys.executable} -c "{HOSTILE_OUTPUT}"')
        stub = ladder.stub()

        def deactivated() -> bool:
            entries = stub.GetStandings(
                ladder_pb2.GetStandingsRequest(include_inactive=True)
            ).entries
            bot = next(e.bot for e in entries if e.bot.name == "evil")
            return bot.state == ladder_pb2.BOT_STATE_DEACTIVATED and "[red]" in bot.last_log

        wait_for(deactivated, 240, "the hostile bot's deactivation", every=0.2)
        for command in (("standings", "--all"), ("history", "evil")):
            out = ladder.cli(*command)
            assert "\x1b" not in out.stdout and "\x9b" not in out.stdout, repr(out.stdout)
            assert "Traceback" not in out.stderr

        # the last log of a game whose duplicate twin is still in play is withheld (its
        # twin is cancelled or ends soon after the deactivation): read it once shown
        def shown() -> str:
            table = ladder.cli("standings", "--all").stdout
            return table if "[red]" in table else ""

        table = wait_for(shown, 120, "the hostile bot's last log in the standings")
        assert "[red]x[/red]" in table and "[link=http://evil.example]click[/link]" in table
    finally:
        ladder.stop()


def test_a_twin_is_rated_only_when_its_pair_is_over(db_url: str) -> None:
    """The first game of a duplicate pair moves no rating, no game count and no rated-game
    total until its twin ends (finished or cancelled), then it is rated exactly once.
    (Before the fix the standings counted it at once while its result was withheld.)"""
    from cirulla.ladder.db import open_database
    from cirulla.ladder.store import (
        LadderStore,
        MatchConfig,
        MatchOutcome,
        MatchPlan,
        SeatOutcome,
        SeatPlan,
    )

    def plan(a: int, b: int, pair: str, index: int) -> MatchPlan:
        return MatchPlan(
            "2p", (SeatPlan(0, 0, a), SeatPlan(1, 1, b)), 7, MatchConfig(), pair, index
        )

    def win(side: int) -> MatchOutcome:
        return MatchOutcome(
            side, (51, 20) if side == 0 else (20, 51), (SeatOutcome(0), SeatOutcome(1)), 3
        )

    store = LadderStore(open_database(db_url))
    try:
        store.add_bot("a", "random")
        store.add_bot("b", "random")
        settled(store)
        a, b = (store.get_bot(n)["version_id"] for n in "ab")
        for pair, end_twin in (("p-1", "finish"), ("p-2", "cancel")):
            before = {e["bot"]["name"]: (e["games"], e["mu"]) for e in store.standings("2p")}
            rated = store.rated_games("2p")
            first, second = store.schedule([plan(a, b, pair, 0), plan(b, a, pair, 1)])
            store.claim("w", "x:1")
            store.claim("w", "x:1")
            assert store.finish(first, win(0))
            after = {e["bot"]["name"]: (e["games"], e["mu"]) for e in store.standings("2p")}
            assert after == before, "the standings show a withheld twin"
            assert store.rated_games("2p") == rated
            assert first not in {p["match_id"] for p in store.bot_history("a")["rating_history"]}
            if end_twin == "finish":
                assert store.finish(second, win(1))
                expected = 2
            else:
                assert store.cancel(second, "its worker died")
                expected = 1
            games = {e["bot"]["name"]: e["games"] for e in store.standings("2p")}
            old = {name: g for name, (g, _mu) in before.items()}
            assert games == {n: old.get(n, 0) + expected for n in "ab"}
            assert store.rated_games("2p") == rated + expected
            assert not store.finish(first, win(1))  # never twice
        history = store.bot_history("a")["rating_history"]
        assert len(history) == 3 and len({p["match_id"] for p in history}) == 3
    finally:
        store.engine.dispose()


@pytest.mark.slow
def test_standings_never_show_a_game_its_history_withholds(tmp_path: Path) -> None:
    """Polled while pairs are played by a real ladder: no bot's standings ever count more
    games than its history shows as rated and not withheld."""
    ladder = LadderProcess(tmp_path / "ladder", f"sqlite:///{tmp_path / 'l.sqlite3'}")
    ladder.start()
    try:
        ladder.add("random", "random")
        ladder.add("greedy", "greedy")
        stub = ladder.stub()
        polls = withheld_seen = 0
        deadline_games = 8
        import time

        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            standings = stub.GetStandings(ladder_pb2.GetStandingsRequest())
            for entry in standings.entries:
                history = stub.GetBotHistory(
                    ladder_pb2.GetBotHistoryRequest(bot_name=entry.bot.name, page_size=1000)
                )
                visible = [
                    m
                    for m in history.matches
                    if m.rated
                    and m.status == ladder_pb2.LADDER_MATCH_STATUS_FINISHED
                    and not m.withheld
                ]
                withheld_seen += sum(1 for m in history.matches if m.withheld)
                assert entry.rating.games <= len(visible), (entry, polls)
            polls += 1
            if standings.rated_games >= deadline_games and withheld_seen:
                break
            time.sleep(0.05)
        assert standings.rated_games >= deadline_games, "the ladder played too few games"
        assert withheld_seen, "no withheld twin was ever seen: the test proved nothing"
    finally:
        ladder.stop()


def test_a_connect_in_bot_never_plays_both_twins() -> None:
    """A connect-in bot (a remote process the ladder cannot restart) would remember the
    first twin's hands, its opponent's in the second: its matches are single games."""
    import random

    from cirulla.ladder.matchmaking import plan
    from cirulla.ladder.store import Candidate, MatchConfig

    def cand(i: int, spec: str) -> Candidate:
        return Candidate(i, f"b{i}", 100 + i, 1, spec, 25.0, 2.0, 5, 100.0, 0, 2)

    rng = random.Random(1)
    for queue, players in (("2p", 2), ("4p", 4)):
        managed = plan(queue, [cand(i, "random") for i in range(players)], MatchConfig(), rng)
        assert len(managed) == 2 and managed[0].pair_id  # managed bots: duplicate pairs
        for remote in range(players):
            bots = [cand(i, "connect" if i == remote else "random") for i in range(players)]
            plans = plan(queue, bots, MatchConfig(), rng)
            assert len(plans) == 1 and plans[0].pair_id is None, plans
            assert sorted(s.side for s in plans[0].seats) == sorted(
                i % 2 if players == 4 else i for i in range(players)
            )


def test_a_kept_alive_process_never_plays_both_twins(tmp_path: Path) -> None:
    """The ladder's pool keeps bot processes across matches; for the second twin of a
    pair it starts a fresh one instead of the process that played the first, which plays
    nothing until the pair is over (tests/confinement/test_pair_quarantine.py)."""
    from cirulla.ladder.runner import LadderBotPool

    pool = LadderBotPool(tmp_path / "logs")
    random = BotSpec.parse("random")
    (tmp_path / "logs").mkdir()
    try:
        first = pool.acquire("r", spec=random, pair_id="lp-1")
        pool.release("r", first)
        other = pool.acquire("r", spec=random)  # not a twin, but lp-1 is open: not first
        assert other.pid != first.pid
        pool.release("r", other)
        second = pool.acquire("r", spec=random, pair_id="lp-1")
        assert second.pid != first.pid
        pool.release("r", second)
        pool.game_over("lp-1", "first", 2)  # the pair is over: both may play again
        pool.game_over("lp-1", "second", 2)
        assert pool.acquire("r", spec=random, pair_id="lp-2").pid == second.pid
    finally:
        pool.close()


@pytest.mark.slow
def test_an_enrolled_bot_that_never_joins_frees_its_slots_within_a_lease(
    tmp_path: Path,
) -> None:
    """A connect-in bot enrolls with capacity 4 and never joins a match: after its first
    no-join its enrollment is gone (no slot of it is offered to the scheduler), well
    within one lease (60 s), instead of every match on its word waiting out its join."""
    import threading
    import time

    from sqlalchemy import func, select

    from cirulla.ladder.schema import enrollments

    db = f"sqlite:///{tmp_path / 'l.sqlite3'}"
    ladder = LadderProcess(tmp_path / "ladder", db, "--concurrency", "4")
    ladder.start()
    stop = threading.Event()
    store = open_store(db)
    try:
        ladder.add("random", "random", max_concurrency=4)
        key = ladder.add("ghost", "connect", max_concurrency=4).bot_key

        def requests() -> Any:
            hello = ladder_pb2.EnrollHello(bot_name="ghost", bot_key=key, capacity=4)
            yield ladder_pb2.EnrollRequest(hello=hello)
            while not stop.wait(2):
                yield ladder_pb2.EnrollRequest(heartbeat=ladder_pb2.EnrollHeartbeat())

        stream = ladder.stub().Enroll(requests())
        threading.Thread(target=lambda: [None for _ in stream], daemon=True).start()

        def enrolled() -> int:
            with store.engine.connect() as conn:
                return int(conn.execute(select(func.count()).select_from(enrollments)).scalar_one())

        wait_for(enrolled, 60, "the ghost's enrollment", every=0.2)
        start = time.monotonic()
        wait_for(lambda: not enrolled(), 60, "the ghost's slots to be freed", every=0.2)
        freed = time.monotonic() - start
        assert freed < 60, freed
        bot = store.get_bot("ghost")
        assert "no-join" in bot["last_failure"], bot
    finally:
        stop.set()
        store.engine.dispose()
        ladder.stop()


#: A managed bot that knows where the ladder keeps everything (the paths are written
#: into it), tries each, reports what it saw in its log, leaves a setsid child marked
#: with ``MARK`` and then plays as ``cirulla bot random``.
SNOOPER = r"""
import os, socket, subprocess, sys
PATHS = {paths!r}
LADDER_PID = {ladder_pid}
PORT = {port}
MARK = {mark!r}


def saw(what):
    print("SAW", what, flush=True)


for label, path in PATHS.items():
    try:
        if os.path.isdir(path):
            saw(f"{{label}}: {{sorted(os.listdir(path))[:5]}}")
        else:
            with open(path, "rb") as f:
                saw(f"{{label}}: {{len(f.read(4096))}} bytes")
    except OSError as exc:
        print("blocked", label, type(exc).__name__, flush=True)
for name in ("environ", "cmdline"):
    try:
        with open(f"/proc/{{LADDER_PID}}/{{name}}", "rb") as f:
            saw(f"the ladder's {{name}}: {{f.read(200)!r}}")
    except OSError:
        pass
pids = [entry for entry in os.listdir("/proc") if entry.isdigit()]
if len(pids) > 5:  # in its sandbox: its own process, bwrap's and a child at most
    saw(f"{{len(pids)}} processes")
for entry in pids:
    try:
        with open(f"/proc/{{entry}}/cmdline", "rb") as f:
            argv = f.read().split(b"\0")
        with open(f"/proc/{{entry}}/environ", "rb") as f:
            environ = f.read()
    except OSError:
        continue
    if b"serve" in argv or any(a.endswith(b"pytest") for a in argv) or b"ADMIN" in environ:
        saw(f"process {{entry}}: {{b' '.join(argv)[:80]!r}}")
try:
    socket.create_connection(("127.0.0.1", PORT), timeout=3).close()
    saw(f"the network: 127.0.0.1:{{PORT}}")
except OSError as exc:
    print("blocked network", type(exc).__name__, flush=True)
subprocess.Popen(
    [sys.executable, "-c", "import time; time.sleep(120)", MARK],
    start_new_session=True,
    stdin=subprocess.DEVNULL,
    stdout=subprocess.DEVNULL,
    stderr=subprocess.DEVNULL,
)
print("REPORT done", flush=True)
os.execv(sys.executable, [sys.executable, "-m", "cirulla", "bot", "random"])
"""


def marked(mark: str) -> list[int]:
    """The processes of this machine whose command line carries ``mark``."""
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                cmdline = (proc / "cmdline").read_bytes()
                state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
            except (OSError, IndexError):
                continue
            if mark.encode() in cmdline and state != "Z":
                found.append(int(proc.name))
    return found


def tokens_on_command_lines(pid: int) -> list[str]:
    """The command lines of ``pid``'s descendants that hold a seat token variable."""
    found = []
    for child in children_of(pid):
        with contextlib.suppress(OSError):
            cmdline = Path(f"/proc/{child}/cmdline").read_bytes().replace(b"\0", b" ")
            if b"CIRULLA_TOKEN" in cmdline:
                found.append(cmdline[:200].decode(errors="replace"))
    return found


@pytest.mark.slow
def test_a_managed_bot_sees_nothing_of_the_ladder(tmp_path: Path) -> None:
    """A hostile `cmd:` bot names the ladder's database and data folder on its command
    line and has every other path written into it: the ladder database, its data folder
    (records, logs, admin token), the match server's database, the ladder's process
    under /proc (and anything else there), a listener beside the match server. In the
    sandbox it sees none of them, still plays its games, and its setsid child is gone
    once the match is over. (Without the sandbox it read them all and the child lived on.)"""
    import secrets
    import signal
    import socket
    import time

    folder = tmp_path / "ladder"
    data = folder / "cirulla-ladder-data"
    db = folder / "l.sqlite3"
    ladder = LadderProcess(folder, f"sqlite:///{db}")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(0.1)
    mark = f"cirulla-snooper-{secrets.token_hex(6)}"
    try:
        ladder.start()
        assert ladder.proc is not None
        paths = {
            "the ladder database": str(db),
            "its WAL": f"{db}-wal",
            "the data folder": str(data),
            "the records": str(data / "records"),
            "the logs": str(data / "logs"),
            "the admin token": str(data / "admin-token"),
            "the match server's database": str(data / "matches.sqlite3"),
            "the state file": str(folder / "cirulla-ladder.json"),
        }
        script = tmp_path / "bots" / "snooper.py"
        script.parent.mkdir()
        script.write_text(
            SNOOPER.format(
                paths=paths, ladder_pid=ladder.proc.pid, port=listener.getsockname()[1], mark=mark
            )
        )
        ladder.add("random", "random")
        # it names the private paths on its command line too: they are never bound
        ladder.add("snooper", f"cmd:{sys.executable} {script} {db} --data={data}")
        stub = ladder.stub()

        on_command_lines: list[str] = []
        ladder_pid = ladder.proc.pid

        def played() -> list[Any]:
            # a seat token is never on a command line (`ps`), bwrap's included
            on_command_lines.extend(tokens_on_command_lines(ladder_pid))
            history = stub.GetBotHistory(
                ladder_pb2.GetBotHistoryRequest(bot_name="snooper", page_size=100)
            )
            return [
                m
                for m in history.matches
                if m.status == ladder_pb2.LADDER_MATCH_STATUS_FINISHED
                and not m.withheld
                and all(s.outcome == "ok" for s in m.seats)
            ]

        wait_for(played, 240, "a finished game of the snooper", every=0.1)
        ladder.stub().PauseBot(
            ladder_pb2.PauseBotRequest(bot_name="snooper"), metadata=ladder.admin(), timeout=30
        )
        wait_for(
            lambda: all(
                m.status
                in (
                    ladder_pb2.LADDER_MATCH_STATUS_FINISHED,
                    ladder_pb2.LADDER_MATCH_STATUS_CANCELLED,
                )
                for m in stub.GetBotHistory(
                    ladder_pb2.GetBotHistoryRequest(bot_name="snooper", page_size=100)
                ).matches
            ),
            240,
            "the snooper's matches to end",
            every=0.2,
        )
        reports = [
            p.read_text(errors="replace")
            for p in (data / "logs").glob("*.log")
            if "REPORT done" in p.read_text(errors="replace")
        ]
        assert reports, "the snooper never reported"
        seen = [line for text in reports for line in text.splitlines() if line.startswith("SAW")]
        assert not seen, seen
        assert all("blocked network" in text for text in reports)
        with contextlib.suppress(TimeoutError):
            connection, _ = listener.accept()
            connection.close()
            raise AssertionError("a bot reached a listener beside the match server")
        # every marked child died with its sandbox when its seat was over
        deadline = time.monotonic() + 5
        while marked(mark) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not marked(mark), "the snooper's setsid child outlived its match"
        assert len(played()) >= 1
        assert not on_command_lines, on_command_lines
    finally:
        listener.close()
        ladder.stop()
        for pid in marked(mark):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def test_no_ladder_starts_where_its_bots_cannot_be_sandboxed(tmp_path: Path) -> None:
    """Without bubblewrap `ladder serve` and `ladder worker` refuse to start, one line and
    exit 2; --no-sandbox starts and says loudly what it means."""
    import subprocess

    empty = tmp_path / "no-bwrap"
    empty.mkdir()
    for command in ("serve", "worker"):
        out = subprocess.run(
            [sys.executable, "-m", "cirulla", "ladder", command, "--listen", "127.0.0.1:0"],
            cwd=tmp_path,
            env={**os.environ, "PATH": str(empty)},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert out.returncode == 2, out
        lines = out.stderr.strip().splitlines()
        assert len(lines) == 1 and "bubblewrap" in lines[0] and "--no-sandbox" in lines[0], lines
        assert not (tmp_path / "cirulla-ladder.json").exists()
    ladder = LadderProcess(
        tmp_path / "ladder", f"sqlite:///{tmp_path / 'l.sqlite3'}", "--no-sandbox"
    )
    ladder.start()
    try:
        assert "WARNING: --no-sandbox" in ladder.log.read_text()
    finally:
        ladder.stop()


def children_of(pid: int) -> set[int]:
    """Every live descendant of ``pid`` (by /proc parent links)."""
    parents: dict[int, int] = {}
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] != "Z":
                parents[int(proc.name)] = int(fields[1])
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {p for p, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


#: A bot that says it is ready, then ignores SIGTERM, its stdin and its match.
STUBBORN = (
    "import json, signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
    "print(json.dumps({'ready': True}), flush=True); time.sleep(600)"
)


@pytest.mark.parametrize("sandbox", [(), ("--no-sandbox",)], ids=["sandbox", "no-sandbox"])
def test_no_bot_outlives_a_sigkilled_ladder(tmp_path: Path, sandbox: tuple[str, ...]) -> None:
    """SIGKILL of `ladder serve` mid-match: its bot processes are gone within 5 s, also
    a kept-alive and a per-seat bot that ignore SIGTERM and their stdin (polite bots
    leave at the end of their stdin anyway; these only die if tied to the ladder: by
    bwrap's --die-with-parent in the sandbox, by PR_SET_PDEATHSIG without it)."""
    import secrets
    import shlex
    import signal
    import time

    mark = f"cirulla-stubborn-{secrets.token_hex(6)}"
    ladder = LadderProcess(tmp_path / "ladder", f"sqlite:///{tmp_path / 'l.sqlite3'}", *sandbox)
    ladder.start()
    assert ladder.proc is not None
    try:
        ladder.add("random", "random", max_concurrency=4)
        ladder.add("greedy", "greedy", max_concurrency=4)
        for name, prefix in (("kept", "serve:"), ("seat", "cmd:")):
            argv = [sys.executable, "-c", STUBBORN, f"{mark}-{name}"]
            ladder.add(name, prefix + shlex.join(argv), max_concurrency=1)
        pid = ladder.proc.pid

        def both_stubborn() -> set[int]:
            children = children_of(pid)
            found = set()
            for child in children:
                with contextlib.suppress(OSError):
                    argv = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")
                    if argv[0] == sys.executable.encode():
                        found |= {a for a in argv if a.startswith(mark.encode())}
            return children if len(found) == 2 else set()

        wait_for(both_stubborn, 120, "both stubborn bots", every=0.2)
        time.sleep(1.0)
        bots = children_of(pid)
        ladder.proc.send_signal(signal.SIGKILL)
        ladder.proc.wait(30)
        deadline = time.monotonic() + 5
        alive = bots
        while alive and time.monotonic() < deadline:
            time.sleep(0.2)
            alive = {
                p
                for p in alive
                if Path(f"/proc/{p}").exists()
                and "Z" not in Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()[0]
            }
        assert not alive, f"{len(alive)} of {len(bots)} bot processes outlived the ladder by 5 s"
        assert not marked(mark)
    finally:
        ladder.kill()  # the harness's own clean-up of anything left
        for left in marked(mark):
            with contextlib.suppress(OSError):
                os.kill(left, signal.SIGKILL)


@pytest.mark.slow
def test_the_ladder_speaks_tls_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`ladder serve --tls-cert/--tls-key`: the operator's commands (the CA from
    $CIRULLA_TLS_CA, --tls-ca, or the state file) and a connect-in bot work over TLS,
    managed bots still play; a client without the CA, or with another one, fails with
    one line; a plaintext call to the port gets nothing. (Before, the ladder had no TLS:
    bot keys, seat tokens and the admin token crossed the network in clear.)"""
    import socket
    import ssl
    import subprocess
    import threading

    from cirulla.bots.enroll import LadderBot
    from cirulla.bots.simple import RandomPolicy
    from tests.server.test_tls import self_signed

    (tmp_path / "ca").mkdir()
    (tmp_path / "other").mkdir()
    cert, key = self_signed(tmp_path / "ca")
    other, _ = self_signed(tmp_path / "other")
    monkeypatch.setenv("CIRULLA_TLS_CA", str(cert))  # the ladder's bots must not use it
    ladder = LadderProcess(
        tmp_path / "ladder",
        f"sqlite:///{tmp_path / 'ladder' / 'l.sqlite3'}",
        "--tls-cert",
        str(cert),
        "--tls-key",
        str(key),
    )
    ladder.start()
    stop = threading.Event()
    try:
        # the managed bots by rpc over TLS (the commands are checked below: one process
        # start each is enough of them)
        secure = ladder_pb2_grpc.LadderServiceStub(
            grpc.secure_channel(ladder.address, grpc.ssl_channel_credentials(cert.read_bytes()))
        )
        for name in ("random", "greedy"):
            request = ladder_pb2.AddBotRequest(bot_name=name, spec=name)
            secure.AddBot(request, metadata=ladder.admin(), timeout=30)
        bot_key = ladder.cli("add", "mine", "connect").stdout.strip().splitlines()[-1]

        def cli(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
            clean = {k: v for k, v in os.environ.items() if k != "CIRULLA_TLS_CA"}
            return subprocess.run(
                [sys.executable, "-m", "cirulla", "ladder", *args],
                cwd=tmp_path,  # no state file here: --server only
                env={**clean, **env},
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )

        standings = ("standings", "--server", ladder.address)
        assert cli(*standings, "--tls-ca", str(cert)).returncode == 0
        assert cli(*standings, CIRULLA_TLS_CA=str(cert)).returncode == 0
        for refused_call in (cli(*standings), cli(*standings, "--tls-ca", str(other))):
            lines = refused_call.stderr.strip().splitlines()
            assert refused_call.returncode == 2 and len(lines) == 1, refused_call
            assert "--tls-ca" in lines[0] and "Traceback" not in refused_call.stderr
        # nothing in clear text on the port: a plaintext gRPC call gets UNAVAILABLE
        with pytest.raises(grpc.RpcError) as info:
            ladder.stub().GetStandings(ladder_pb2.GetStandingsRequest(), timeout=10)
        assert info.value.code() == grpc.StatusCode.UNAVAILABLE
        host, port = ladder.address.rsplit(":", 1)
        context = ssl.create_default_context(cafile=str(cert))
        context.set_alpn_protocols(["h2"])
        raw = socket.create_connection((host, int(port)), timeout=10)
        with context.wrap_socket(raw, server_hostname=host) as tls:
            assert tls.version() is not None and tls.selected_alpn_protocol() == "h2"
        # a connect-in bot over TLS: its Enroll stream and its games
        bot = LadderBot(
            RandomPolicy, ladder=ladder.address, bot_name="mine", bot_key=bot_key, tls_ca=str(cert)
        )
        threading.Thread(target=bot.run, args=(stop,), daemon=True).start()
        wait_for(
            lambda: any(p.outcome is not None and not p.error for p in bot.played),
            240,
            "a game of the connect-in bot over TLS",
        )
        wait_for(
            lambda: (
                secure.GetStandings(ladder_pb2.GetStandingsRequest(), timeout=10).rated_games >= 4
            ),
            240,
            "rated games of the managed bots",
            every=0.2,
        )
        # the operator's command reads them over TLS too, the CA from the state file
        rated = json.loads(ladder.cli("standings", "--json").stdout).get("rated_games", 0)
        assert int(rated) >= 4
    finally:
        stop.set()
        ladder.stop()
