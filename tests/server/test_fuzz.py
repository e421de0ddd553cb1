"""Protocol fuzzing: hypothesis throws malformed, oversized and out-of-order messages at a
real server while a healthy match plays on it. Every call must end with a deliberate
status (never UNKNOWN or INTERNAL), every reply stays small, and the healthy match
finishes with a result."""

from __future__ import annotations

import asyncio
import random
import threading
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cirulla.server.app import start_server
from cirulla.server.client import Outbox, hello, submit_index
from cirulla.server.limits import Limits
from cirulla.v1 import match_pb2, match_service_pb2_grpc, match_settings_pb2, play_pb2, rules_pb2
from cirulla.v1 import match_service_pb2 as ms
from cirulla.version import PROTOCOL_VERSION

#: Statuses a hostile call may end with; UNKNOWN and INTERNAL would mean a server bug.
DELIBERATE = {
    grpc.StatusCode.OK,
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.UNAUTHENTICATED,
    grpc.StatusCode.PERMISSION_DENIED,
    grpc.StatusCode.NOT_FOUND,
    grpc.StatusCode.FAILED_PRECONDITION,
    grpc.StatusCode.ALREADY_EXISTS,
    grpc.StatusCode.RESOURCE_EXHAUSTED,
    grpc.StatusCode.DEADLINE_EXCEEDED,  # our own short client deadline
}
MAX_REPLY = 64 * 1024
UNARY = ("GetMatch", "ListMatches", "GetRoom", "ListRooms", "ListRecords", "GetRecord")


class ServerThread:
    """A real server on its own event loop thread, and a healthy match playing on it."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.srv = self.call(start_server("127.0.0.1:0", limits=Limits(hello_timeout_s=2.0)))
        self.address = f"127.0.0.1:{self.srv.port}"

    def call(self, coro: Any, timeout: float = 60.0) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def start_healthy_match(self) -> Any:
        """A best-of-3 match whose seats think 10 ms a move: it plays while the fuzzing
        runs; the returned future gives its final state."""

        async def seat(stub: Any, match_id: str, token: str, rng: random.Random) -> None:
            out = Outbox()
            out.send(hello(match_id, token, "healthy"))
            async for msg in stub.Play(out):
                kind = msg.WhichOneof("body")
                if kind == "decision_request":
                    await asyncio.sleep(0.01)
                    req = msg.decision_request
                    out.send(submit_index(req.decision_id, rng.randrange(len(req.legal_actions))))
                elif kind == "goodbye":
                    break
            out.send(None)

        async def play() -> match_pb2.Match:
            async with grpc.aio.insecure_channel(self.address) as channel:
                stub = match_service_pb2_grpc.MatchServiceStub(channel)
                m = await stub.CreateMatch(ms.CreateMatchRequest(settings=settings_pb(3)))
                rng = random.Random(7)
                await asyncio.gather(
                    *(seat(stub, m.match.match_id, t.token, rng) for t in m.seat_tokens)
                )
                got = await stub.GetMatch(ms.GetMatchRequest(match_id=m.match.match_id))
                return got.match

        return asyncio.run_coroutine_threadsafe(play(), self.loop)

    def stop(self) -> None:
        self.call(self.srv.stop())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


def settings_pb(best_of: int = 1) -> match_settings_pb2.MatchSettings:
    return match_settings_pb2.MatchSettings(
        rules=rules_pb2.Rules(overrides=rules_pb2.RuleOptions(players=2, target=11)),
        best_of=best_of,
    )


@pytest.fixture(scope="module")
def server() -> Iterator[ServerThread]:
    srv = ServerThread()
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture(scope="module")
def healthy(server: ServerThread) -> Any:
    """Started before the fuzzing, checked after it."""
    return server.start_healthy_match()


@pytest.fixture(scope="module")
def target(server: ServerThread) -> dict[str, Any]:
    """A match for the fuzzed streams to aim at (its real tokens are among the choices)."""
    with grpc.insecure_channel(server.address) as channel:
        stub = match_service_pb2_grpc.MatchServiceStub(channel)
        m = stub.CreateMatch(ms.CreateMatchRequest(settings=settings_pb()))
    return {"match_id": m.match.match_id, "tokens": [t.token for t in m.seat_tokens]}


texts = st.one_of(
    st.text(max_size=20),
    st.text(alphabet=st.characters(codec="utf-8"), min_size=60, max_size=300),
    st.just("\0" * 5000),
    st.just("x" * 70_000),
)


def hello_strategy(target: dict[str, Any]) -> st.SearchStrategy[ms.PlayRequest]:
    return st.builds(
        lambda version, mid, token, name, resume: ms.PlayRequest(
            hello=play_pb2.Hello(
                protocol_version=version,
                match_id=mid,
                seat_token=token,
                name=name,
                resume=play_pb2.Resume(last_event_sequence=resume) if resume else None,
            )
        ),
        st.sampled_from([PROTOCOL_VERSION, "", "cirulla.v9/1"]) | texts,
        st.sampled_from([target["match_id"], "", "m-0-none"]) | texts,
        st.sampled_from([*target["tokens"], ""]) | texts,
        texts,
        st.sampled_from([0, 0, 1, 2**63]),
    )


def frames_strategy(target: dict[str, Any]) -> st.SearchStrategy[list[bytes]]:
    submit = st.builds(
        lambda did, choice: ms.PlayRequest(
            submit_action=play_pb2.SubmitAction(decision_id=did, **choice)
        ),
        st.integers(0, 2**64 - 1),
        st.one_of(
            st.builds(lambda i: {"legal_action_index": i}, st.integers(0, 2**32 - 1)),
            st.builds(lambda t: {"notation": t}, texts),
            st.just({}),
        ),
    )
    message = st.one_of(
        hello_strategy(target),
        submit,
        st.just(ms.PlayRequest(list_commands=play_pb2.ListCommands())),
        st.just(ms.PlayRequest(quit=play_pb2.Quit(reason="early"))),
        st.just(ms.PlayRequest()),
    ).map(lambda m: m.SerializeToString())
    garbage = st.binary(min_size=1, max_size=2000)
    return st.lists(st.one_of(message, message, garbage), max_size=8)


@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_fuzzed_play_streams_and_unary_calls(
    server: ServerThread, healthy: Any, target: dict[str, Any], data: st.DataObject
) -> None:
    frames = data.draw(frames_strategy(target))
    # a stream still open after its frames quits (if it is still read at all)
    frames.append(ms.PlayRequest(quit=play_pb2.Quit(reason="fuzz")).SerializeToString())
    with grpc.insecure_channel(server.address) as channel:
        play = channel.stream_stream(
            "/cirulla.v1.MatchService/Play",
            request_serializer=lambda b: b,
            response_deserializer=ms.PlayResponse.FromString,
        )
        call = play(iter(frames), timeout=3.0)
        try:
            for reply in call:
                assert reply.ByteSize() < MAX_REPLY
            code = call.code()
        except grpc.RpcError as exc:
            code = exc.code()
        assert code in DELIBERATE, (code, call.details())
        method = data.draw(st.sampled_from(UNARY))
        raw = channel.unary_unary(
            f"/cirulla.v1.MatchService/{method}",
            request_serializer=lambda b: b,
            response_deserializer=lambda b: b,
        )
        payload = data.draw(st.binary(max_size=3000))
        try:
            reply = raw(payload, timeout=3.0)
            assert len(reply) < 4 * 1024 * 1024
        except grpc.RpcError as exc:
            assert exc.code() in DELIBERATE, (method, exc.code(), exc.details())


def test_a_healthy_match_finishes_beside_the_fuzzing(server: ServerThread, healthy: Any) -> None:
    """Runs after the fuzz test (file order): the match that played meanwhile finished."""
    match = healthy.result(120)
    assert match.status == match_pb2.MATCH_STATUS_FINISHED
    assert match.result.HasField("winner_side")
    assert server.srv.hub.stats.get("slow_consumers", 0) == 0
