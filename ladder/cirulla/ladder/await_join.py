"""The stand-in process of a connect-in seat: waits for the remote bot to join.

The referee that plays a ladder game watches one process per seat and forfeits a seat
whose process exits before it joined. A connect-in bot runs on its owner's machine, so
for its seat the worker starts this small process instead (``python -m
cirulla.ladder.await_join``, with the referee's ``CIRULLA_SERVER``,
``CIRULLA_MATCH``, ``CIRULLA_SEAT`` and ``CIRULLA_TOKEN``, which reads the match of a
duplicate pair while its twin plays): it exits 0 as soon as the seat is taken (the
bot got its assignment through its Enroll stream and joined) or the match is over, and
exits 3, saying so, when the seat is still empty after ``--join-timeout`` seconds; the
referee then forfeits the seat and the ladder counts a ``no-join`` failure.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import grpc

from cirulla.v1 import match_pb2, match_service_pb2, match_service_pb2_grpc

#: Seconds a connect-in bot has to join its match after it was created.
JOIN_TIMEOUT = 30.0
POLL_SECONDS = 0.2
NEVER_JOINED = 3

_FINAL = (match_pb2.MATCH_STATUS_FINISHED, match_pb2.MATCH_STATUS_ABORTED)


def wait(server: str, match_id: str, seat: int, timeout: float, token: str = "") -> int:
    deadline = time.monotonic() + timeout
    # the seat's token: a duplicate twin's match is withheld from the public (GetMatch)
    metadata = (("authorization", f"Bearer {token}"),) if token else ()
    with grpc.insecure_channel(server) as channel:
        stub = match_service_pb2_grpc.MatchServiceStub(channel)
        while True:
            try:
                match = stub.GetMatch(
                    match_service_pb2.GetMatchRequest(match_id=match_id),
                    timeout=10,
                    metadata=metadata,
                ).match
            except grpc.RpcError as exc:
                print(f"await_join: GetMatch failed: {exc.code().name}", flush=True)
                match = None
            if match is not None:
                if match.status in _FINAL:
                    return 0
                if any(s.seat == seat and (s.name or s.connected) for s in match.seats):
                    print(f"connect-in bot joined seat {seat}", flush=True)
                    return 0
            if time.monotonic() > deadline:
                print(
                    f"connect-in bot never joined seat {seat} within {timeout:.0f}s "
                    "(not enrolled, or it did not take the assignment)",
                    flush=True,
                )
                return NEVER_JOINED
            time.sleep(POLL_SECONDS)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--join-timeout", type=float, default=JOIN_TIMEOUT)
    args = parser.parse_args(argv)
    return wait(
        os.environ["CIRULLA_SERVER"],
        os.environ["CIRULLA_MATCH"],
        int(os.environ["CIRULLA_SEAT"]),
        args.join_timeout,
        os.environ.get("CIRULLA_TOKEN", ""),
    )


if __name__ == "__main__":
    sys.exit(main())
