"""Hostile bots for the tests: each attacks the machine's resources one way, then plays
``random`` (so its matches go on while what it started lives).

``cmd:{python} tests/programs/hostile.py MODE`` as a ladder or tournament bot, MODE one of:

* ``bomb``: threads, then processes, until the kernel refuses one; keeps them all;
* ``tmpfs``: fills its /tmp and /dev/shm with files until they are full; keeps them;
* ``balloon``: allocates and touches memory, 64 MiB at a time, without end;
* ``burn``: four processes spinning on the CPU for as long as it lives;
* ``flood``: prints to its stdout without end;
* ``logfill SIZE``: writes SIZE MiB (a number; 3 by default) to its stderr, its log,
  every game, then plays well: a log just under its limit each game, the disk filled
  by as much a game unless its logs are bounded in all (``--bot-logs``);
* ``rename``: joins its seat (its first Hello names it), and once it holds a hand opens
  the seat again as a resume whose ``Hello.name`` and ``version`` spell that hand, for
  its fresh process in the twin game (or anyone) to read in GetMatch or ListMatches
  (issue 37, finding 3). The server refuses such a resume (FAILED_PRECONDITION: a seat's
  name and version are its first Hello's); it says on stderr what it tried and got
  (``HOSTILE rename name ... refused FAILED_PRECONDITION``), then plays on.

Each says what it got on stderr (its log) as ``HOSTILE <mode> ...``.
"""

from __future__ import annotations

import os
import sys
import threading
import time


def say(text: str) -> None:
    print(f"HOSTILE {text}", file=sys.stderr, flush=True)


def bomb() -> None:
    threads = forks = 0
    try:
        while threads < 100_000:
            threading.Thread(target=time.sleep, args=(3600,), daemon=True).start()
            threads += 1
    except RuntimeError:
        pass
    try:
        while forks < 100_000:
            if os.fork() == 0:
                time.sleep(3600)
                os._exit(0)
            forks += 1
    except OSError:
        pass
    say(f"bomb threads={threads} forks={forks}")


def tmpfs() -> None:
    written = 0
    for folder in ("/tmp", "/dev/shm"):
        try:
            while written < 64 * 1024**3:
                with open(f"{folder}/fill-{written}", "wb") as out:
                    for _ in range(16):
                        out.write(b"x" * 1024**2)
                        written += 1024**2
        except OSError as exc:
            say(f"tmpfs {folder} full after {written // 1024**2} MiB ({exc.strerror})")


def balloon() -> None:
    held = []
    while True:
        chunk = bytearray(64 * 1024**2)
        for offset in range(0, len(chunk), 4096):
            chunk[offset] = 1
        held.append(chunk)
        if len(held) % 8 == 0:
            say(f"balloon {len(held) * 64} MiB")


def burn() -> None:
    for _ in range(4):
        if os.fork() == 0:
            while True:
                pass
    say("burn 4 spinning processes")


def flood() -> None:
    line = b"flood " * 20 + b"\n"
    while True:
        os.write(1, line * 1000)


def logfill() -> None:
    mib = float(sys.argv[2]) if len(sys.argv) > 2 else 3.0
    line = b"logfill " * 15 + b"\n"
    chunk = line * (64 * 1024 // len(line))
    written = 0
    say(f"logfill {mib:g} MiB")
    while written < mib * 1024**2:
        os.write(2, chunk)
        written += len(chunk)
    say(f"logfill wrote {written}")


#: What the renamer's leaking names start with: a test looks for it everywhere.
LEAK_PREFIX = "hand-"


def rename() -> None:
    import queue

    import grpc

    from cirulla.bots.kit import open_channel
    from cirulla.v1 import match_service_pb2, match_service_pb2_grpc, play_pb2
    from cirulla.version import PROTOCOL_VERSION, __version__

    env = os.environ
    stub = match_service_pb2_grpc.MatchServiceStub(open_channel(env["CIRULLA_SERVER"]))

    def hello(name: str, version: str, resume: bool) -> match_service_pb2.PlayRequest:
        return match_service_pb2.PlayRequest(
            hello=play_pb2.Hello(
                protocol_version=PROTOCOL_VERSION,
                name=name,
                version=version,
                match_id=env["CIRULLA_MATCH"],
                seat_token=env["CIRULLA_TOKEN"],
                resume=play_pb2.Resume(last_event_sequence=0) if resume else None,
            )
        )

    # the first Hello: the name and version `cirulla bot random` sends when it plays on;
    # a connection that fails before the seat is joined is tried again, as the bot kit
    # does (a sandboxed bot's first connection can fail on a busy machine)
    hand = ""
    for attempt in range(8):
        outbox: queue.Queue[match_service_pb2.PlayRequest | None] = queue.Queue()
        outbox.put(hello(env.get("CIRULLA_NAME", "rename"), __version__, attempt > 0))
        first = stub.Play(iter(outbox.get, None), timeout=120)
        try:
            for response in first:
                kind = response.WhichOneof("body")
                view = response.view if kind == "view" else response.decision_request.view
                if kind in ("view", "decision_request") and view.hand:
                    hand = "".join(card.code for card in view.hand)
                    break
            break
        except grpc.RpcError as exc:
            say(f"rename first stream ended {exc.code().name}")
            if exc.code() != grpc.StatusCode.UNAVAILABLE:
                break
            time.sleep(0.25 * (attempt + 1))
    # a resume that would rename the seat after its hand (each field alone, then both)
    leak = LEAK_PREFIX + (hand or "none")
    for name, version in ((leak, ""), ("", leak), (leak, leak)):
        try:
            for _ in stub.Play(iter([hello(name, version, True)]), timeout=30):
                break
            say(f"rename name={name!r} version={version!r} ACCEPTED")
        except grpc.RpcError as exc:
            say(f"rename name={name!r} version={version!r} refused {exc.code().name}")
    outbox.put(None)
    first.cancel()


MODES = {
    "bomb": bomb,
    "tmpfs": tmpfs,
    "balloon": balloon,
    "burn": burn,
    "flood": flood,
    "logfill": logfill,
    "rename": rename,
}


def main() -> None:
    mode = sys.argv[1]
    MODES[mode]()
    # then play: the seat's CIRULLA_* variables are in the environment; under the name
    # the runner gave it (the renamer's first Hello sent that one: a seat keeps it)
    name = os.environ.get("CIRULLA_NAME", "")
    named = [f"--name={name}"] if name else []
    if mode == "rename":
        # its seat was dropped when its first stream ended: it resumes from this process
        # (a new interpreter's start can outlast the runner's 1 s disconnect grace on a
        # busy machine, and the seat would be forfeited for that alone)
        from cirulla.cli import main as cirulla

        sys.exit(cirulla(["bot", "random", *named]))
    os.execv(sys.executable, [sys.executable, "-m", "cirulla", "bot", "random", *named])


if __name__ == "__main__":
    main()
