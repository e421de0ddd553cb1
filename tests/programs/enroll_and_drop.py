"""A connect-in bot that dies between its assignment and its match, for the tests.

Run: python tests/programs/enroll_and_drop.py LADDER_HOST:PORT BOT_NAME (key in
``$CIRULLA_BOT_KEY``). It enrolls, waits for its first assignment, prints
``assigned MATCH_ID SEAT`` and exits at once without joining the match or closing its
stream (as a process that crashed or lost its machine would): the ladder must hand that
seat to the bot's next enrollment while the match still waits for it.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator

import grpc

from cirulla.v1 import ladder_pb2, ladder_pb2_grpc


def main() -> None:
    ladder, name = sys.argv[1], sys.argv[2]
    forever = threading.Event()

    def requests() -> Iterator[ladder_pb2.EnrollRequest]:
        yield ladder_pb2.EnrollRequest(
            hello=ladder_pb2.EnrollHello(
                bot_name=name, bot_key=os.environ["CIRULLA_BOT_KEY"], capacity=1
            )
        )
        forever.wait()

    channel = grpc.insecure_channel(ladder)
    for response in ladder_pb2_grpc.LadderServiceStub(channel).Enroll(requests()):
        if response.WhichOneof("body") == "assignment":
            print(f"assigned {response.assignment.match_id} {response.assignment.seat}", flush=True)
            os._exit(9)  # no goodbye, no join: the process is simply gone


if __name__ == "__main__":
    main()
