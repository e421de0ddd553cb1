"""The kit's Play stream as bytes: the server's messages read, the kit's answers written.

A bot is sent some six stream messages per decision of its own (the other seat's moves,
the acceptance of its own, a round dealt, the decision request), and reads of them only
the events' sequence numbers and the decision request. Parsed by gRPC into protobuf
objects (every event with its cards and notation), serialized again for the native
decision reader, and answered with a ``SubmitAction`` built field by field, the stream
cost a bot more than its policy's choices (docs/performance-log.md, "A tournament's CPU per
game"). So the kit's Play call hands over the stream's bytes (no deserializer) and
``read_entries`` reads a message in one native call (``_decode.play``): each event, view
or acceptance as its sequence (a run of them as the largest, all the kit keeps; an
acceptance has none), each decision request as its id, default, clock, view and legal
action codes, and every other message as where its bytes are, parsed by protobuf when
handled (``parse_response``). Answers are written as bytes (``submit_bytes``).

Whatever the native reader does not read as the server writes it (a second body, a
repeated field, a card by its code alone, a nested batch, malformed bytes) gives None,
and the kit reads that message through protobuf as it always did; so does a kit without
the native module (no C compiler at install), with a debug log or with an ``observe``
hook (``BotClient``), which get every message as a ``PlayResponse`` object. An event's,
view's or acceptance's body is read only as far as the kit needs it (its fields' framing
and its sequence): what protobuf would refuse deeper inside, which made the kit fail
before, now goes unnoticed.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

import grpc
from google.protobuf.message import DecodeError

from cirulla.bots import convert
from cirulla.bots.policy import RawAnswer
from cirulla.v1 import match_service_pb2, play_pb2

if TYPE_CHECKING:  # the native reader's entries (its stub)
    from cirulla.bots._decode import PlayEntry

#: What this file calls of the native reader: a build older than it (an editable install
#: not rebuilt after a pull) lacks them, and is then not used here at all.
NATIVE_NAMES = ("play", "submit")


def current(module: object) -> bool:
    """Whether the native reader ``module`` (None: not built) has ``NATIVE_NAMES``."""
    return module is not None and all(hasattr(module, name) for name in NATIVE_NAMES)


#: The stream reader in C (bots/cirulla/bots/_decode.c), set up by convert; None when it
#: was not built (no C compiler) or is older than this file: every message is then read
#: by protobuf.
_native = convert.native_reader
if not current(_native):
    _native = None  # type: ignore[assignment]  # every use tests `_native is None`

log = logging.getLogger("cirulla.bots.kit")

#: The Play rpc's full method name (proto/cirulla/v1/match_service.proto).
PLAY_METHOD = "/cirulla.v1.MatchService/Play"


class UnreadableMessage(ValueError):
    """A stream message protobuf cannot parse: the server is not speaking the protocol."""


def _left_to_protobuf(data: bytes) -> list[PlayEntry] | None:
    return None


#: A stream message's entries (a batch's in order), or None: read it with
#: ``parse_response`` (the native reader left it to protobuf, or is not built). The
#: native function itself when built: no Python frame per message.
read_entries: Callable[[bytes], list[PlayEntry] | None] = (
    _left_to_protobuf if _native is None else _native.play
)


def parse_response(data: bytes) -> match_service_pb2.PlayResponse:
    """A stream message (or a batch entry's bytes) as protobuf reads it."""
    try:
        return match_service_pb2.PlayResponse.FromString(data)
    except DecodeError as exc:
        raise UnreadableMessage(
            f"the server sent a message the kit cannot read ({len(data)} bytes: {exc})"
        ) from None


def submit_bytes(decision_id: int, choice: int | RawAnswer) -> bytes:
    """The ``PlayRequest`` answering decision ``decision_id`` with ``choice``."""
    if _native is not None and not isinstance(choice, RawAnswer):
        return _native.submit(decision_id, choice)
    action = play_pb2.SubmitAction(decision_id=decision_id)
    if isinstance(choice, RawAnswer):
        # an answer the policy could not turn into a legal action (a text engine's
        # malformed reply): the server judges it, counts it, and the kit falls back
        if choice.index is not None:
            action.legal_action_index = choice.index
        else:
            action.notation = choice.text
    else:
        action.legal_action_index = choice
    return match_service_pb2.PlayRequest(submit_action=action).SerializeToString()


class PlayStream:
    """One Play call on the kit's event loop, in bytes both ways: messages are written in
    order, one at a time.

    The kit speaks gRPC's asyncio API: a synchronous stream costs two helper threads and
    a hand-over between threads for every message sent or received.
    """

    def __init__(self, channel: grpc.aio.Channel) -> None:
        play: grpc.aio.StreamStreamMultiCallable[bytes, bytes] = channel.stream_stream(PLAY_METHOD)
        self.call = play()
        #: debug lines wanted (looked up once a stream: each message's line is skipped
        #: without a call when not)
        self.debug = log.isEnabledFor(logging.DEBUG)

    def send(self, data: bytes) -> Awaitable[None]:
        """Write ``data`` (await the result: the call's own write, no frame of ours)."""
        if self.debug:
            log.debug("send %s", Brief(data, match_service_pb2.PlayRequest))
        return self.call.write(data)

    def close(self) -> None:
        self.call.cancel()


class Brief:
    """A message shortened for a debug line, formatted (and parsed, when given as bytes
    of ``kind``) only if the line is written: formatting every message costs more than
    the game's rules do."""

    __slots__ = ("kind", "message")

    def __init__(
        self, message: object, kind: type[match_service_pb2.PlayRequest] | None = None
    ) -> None:
        self.message = message
        self.kind = kind

    def __str__(self) -> str:
        message = self.message
        if self.kind is not None and isinstance(message, bytes):
            message = self.kind.FromString(message)
        return " ".join(str(message).split())[:400]
