"""The kit's Play stream read from its bytes (``cirulla.bots.kit_stream``, ``_decode.play``)
keeps what protobuf's objects gave the kit, and leaves to protobuf what it does not read.

Whole matches against a real server play the same: every decision's view, legal actions
and choice, the outcome and the last event sequence are equal whether the kit reads the
stream natively, through protobuf (an ``observe`` hook), or without the native module.
Stream messages written by the server's framing and batches of every kind of message are
read as a reference built from protobuf's parse says the kit keeps them. A scripted server
sends decision requests that cannot be read (the kit plays the default action and logs one
line, on either path) and a message protobuf cannot parse (the kit stops with a BotError).
"""

from __future__ import annotations

import asyncio
import logging
import random
import types
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any

import grpc
import pytest

from cirulla.bots import convert, kit, kit_stream
from cirulla.bots.convert import clock_seconds, decision_from_fields, decision_from_proto
from cirulla.bots.kit import BotClient, BotError, MatchOutcome
from cirulla.bots.kit_stream import read_entries, submit_bytes
from cirulla.bots.policy import RawAnswer
from cirulla.bots.simple import GreedyPolicy, RandomPolicy
from cirulla.rules import Game, Options
from cirulla.rules.actions import Action
from cirulla.rules.views import View
from cirulla.server.convert import framing
from cirulla.server.messages import ClockState, SeatPublic
from cirulla.v1 import (
    events_pb2,
    match_pb2,
    match_service_pb2,
    match_settings_pb2,
    play_pb2,
    rules_pb2,
)
from cirulla.version import PROTOCOL_VERSION
from cirulla.wire import options_to_proto
from tests.server_harness import serving

if TYPE_CHECKING:
    from cirulla.bots._decode import PlayEntry

PlayResponse = match_service_pb2.PlayResponse


def _native() -> None:
    if kit_stream._native is None:
        pytest.skip("cirulla.bots._decode is not built (no C compiler at install)")


class Recorder:
    """A policy that notes every decision it is asked (instant, server plays forced moves,
    as the built-in bots); with ``observe`` the kit reads every message through protobuf."""

    instant = True
    auto_play_forced = True

    def __init__(self, inner: RandomPolicy | GreedyPolicy, observe: bool = False) -> None:
        self.inner = inner
        self.name = inner.name
        self.seen: list[tuple[View, tuple[Action, ...], int]] = []
        self.observed = 0
        if observe:
            self.observe = self._observe

    def _observe(self, response: PlayResponse) -> None:
        assert isinstance(response, PlayResponse)
        self.observed += 1

    def choose(self, view: View, legal: Sequence[Action], time_left: float | None) -> int:
        choice = self.inner.choose(view, legal, time_left)
        self.seen.append((view, tuple(legal), choice))
        return choice


Played = tuple[list[list[tuple[View, tuple[Action, ...], int]]], list[MatchOutcome], list[int]]


async def _match(
    stub: Any, channel: grpc.aio.Channel, players: int, seed: int, observe: bool
) -> Played:
    settings = match_settings_pb2.MatchSettings(
        rules=rules_pb2.Rules(overrides=rules_pb2.RuleOptions(players=players, target=21)),
        seed=seed,
        best_of=1,
    )
    made = await stub.CreateMatch(match_service_pb2.CreateMatchRequest(settings=settings))
    policies = [
        Recorder(RandomPolicy(seed + s) if s % 2 else GreedyPolicy(), observe)
        for s in range(players)
    ]
    clients = [
        BotClient(p, server="", match_id=made.match.match_id, token=t.token)
        for p, t in zip(policies, made.seat_tokens, strict=True)
    ]
    outcomes = await asyncio.gather(*(c.run_async(channel) for c in clients))
    if observe:
        assert all(p.observed > 0 for p in policies)
    return [p.seen for p in policies], list(outcomes), [c.last_sequence for c in clients]


def _play(players: int, seeds: Sequence[int], observe: bool) -> list[Played]:
    async def main() -> list[Played]:
        async with serving() as (stub, _, channel):
            return [await _match(stub, channel, players, seed, observe) for seed in seeds]

    return asyncio.run(main())


@pytest.mark.parametrize("players", [2, 4])
def test_whole_matches_play_the_same_read_natively_or_by_protobuf(
    players: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    _native()
    seeds = [11, 12]
    read: list[bool] = []
    reader = [read_entries]

    def counted(data: bytes) -> list[PlayEntry] | None:
        found = reader[0](data)
        read.append(found is not None)
        return found

    monkeypatch.setattr(kit, "read_entries", counted)
    native = _play(players, seeds, observe=False)
    assert len(read) > 100 and all(read)  # every message the server sent, read natively
    read.clear()
    through_protobuf = _play(players, seeds, observe=True)
    # as without the native module: messages, decisions and answers through protobuf
    monkeypatch.setattr(kit_stream, "_native", None)
    monkeypatch.setattr(convert, "_native", None)
    reader[0] = kit_stream._left_to_protobuf
    without_module = _play(players, seeds, observe=False)
    assert read == [False] * len(read) and len(read) > 100  # none read natively
    assert native == through_protobuf == without_module
    for seen, outcomes, sequences in native:
        assert all(len(s) > 10 for s in seen)  # every seat decided, through the policy
        assert sum(o.decisions for o in outcomes) == sum(len(s) for s in seen)
        assert all(o.defaults_played == o.rejected == 0 for o in outcomes)
        assert min(sequences) > 0


# ---- stream messages against protobuf's parse --------------------------------------


def _expected(data: bytes) -> list[object]:
    """What the kit keeps of a stream message, from protobuf's parse: a run of events,
    views and acceptances as its largest sequence, a decision as the native reader's
    entry (its view and actions compared through ``decision_from_proto``), any other
    message as its field number and its bytes."""
    message = PlayResponse.FromString(data)
    items = message.batch.responses if message.WhichOneof("body") == "batch" else [message]
    out: list[object] = []
    run: int | None = None
    for item in items:
        kind = item.WhichOneof("body")
        if kind in ("event", "view", "action_accepted"):
            seq = (
                item.event.sequence
                if kind == "event"
                else item.view.event_sequence
                if kind == "view"
                else 0
            )
            run = seq if run is None else max(run, seq)
            continue
        if run is not None:
            out.append(run)
            run = None
        number = PlayResponse.DESCRIPTOR.fields_by_name[kind].number
        if kind == "decision_request":
            r = item.decision_request
            move, bank = clock_seconds(r.clock)
            out.append(("decision", r.decision_id, r.default_action_index, move, bank,
                        r.clock.increment_ms, r, item.SerializeToString()))  # fmt: skip
        else:
            out.append((number, item.SerializeToString()))
    if run is not None:
        out.append(run)
    return out


def _read(data: bytes, options: Options) -> list[object]:
    found = read_entries(data)
    assert found is not None
    out: list[object] = []
    for entry in found:
        if isinstance(entry, int):
            out.append(entry)
        elif len(entry) == 3:
            out.append((entry[0], data[entry[1] : entry[2]]))
        else:
            _, start, end, decision_id, default, move, bank, inc, fields, codes = entry
            request = PlayResponse.FromString(data[start:end]).decision_request
            assert decision_from_fields(fields, codes, options) == decision_from_proto(
                request, options
            )
            out.append(("decision", decision_id, default,
                        None if move is None else move / 1000,
                        None if bank is None else bank / 1000, inc, request,
                        data[start:end]))  # fmt: skip
    return out


def _game_messages(players: int, seed: int) -> tuple[Options, list[PlayResponse]]:
    """A game's decision requests as the server writes them, with events between."""
    options = Options.preset("standard", players=players, target=16)
    seats = tuple(SeatPublic(s, options.side_of(s), f"p{s}", "1", True) for s in range(players))
    wire = framing.seat_wire(seats)
    rng = random.Random(seed)
    game = Game(options, seed=seed)
    out: list[PlayResponse] = []
    number = sequence = 0
    while not game.is_over:
        seat = game.to_move
        codes = game.legal_codes()
        number += 1
        sequence += rng.randrange(1, 4)
        clock = [ClockState(5000, None), ClockState(None, 9000, 100), ClockState(None, None)][
            number % 3
        ]
        data = framing.decision_frame(game, seat, number, codes, 1, sequence, seats, wire, clock)
        out.append(PlayResponse.FromString(data))
        event = events_pb2.Event(sequence=sequence, game_number=1, deal_number=game.deal_no)
        event.card_played.notation = "x"
        out.append(PlayResponse(event=event))
        out.append(
            PlayResponse(
                action_accepted=play_pb2.ActionAccepted(decision_id=number, legal_action_index=0)
            )
        )
        game.apply_code(rng.choice(codes))
    return options, out


@pytest.mark.parametrize("players", [2, 3, 4])
def test_stream_messages_and_batches_are_read_as_protobuf_reads_them(players: int) -> None:
    _native()
    options, messages = _game_messages(players, seed=players)
    others = [
        PlayResponse(welcome=play_pb2.Welcome(protocol_version=PROTOCOL_VERSION, seat=0)),
        PlayResponse(new_game=play_pb2.NewGame(game_number=2, rules=options_to_proto(options))),
        PlayResponse(view=messages[0].decision_request.view),
        PlayResponse(match_result=match_pb2.MatchResult(match_id="m", games_won=[1, 0])),
        PlayResponse(
            goodbye=play_pb2.Goodbye(reason=play_pb2.GOODBYE_REASON_MATCH_FINISHED, message="x")
        ),
        PlayResponse(
            action_rejected=play_pb2.ActionRejected(reason=play_pb2.REJECT_REASON_STALE_DECISION)
        ),
        PlayResponse(event=events_pb2.Event()),  # sequence 0, as protobuf reads it
    ]
    rng = random.Random(players)
    singles = [m.SerializeToString() for m in messages + others]
    batches = []
    for _ in range(60):
        items = rng.sample(messages, rng.randrange(1, 6)) + rng.sample(others, rng.randrange(0, 2))
        rng.shuffle(items)
        batch = PlayResponse(batch=match_service_pb2.PlayResponseBatch(responses=items))
        batches.append(batch.SerializeToString())
    batches.append(PlayResponse(batch=match_service_pb2.PlayResponseBatch()).SerializeToString())
    for data in singles + batches:
        assert _read(data, options) == _expected(data)
    # an unknown field (a later protocol's) is skipped, as protobuf does: beside a body,
    # beside a batch's responses, inside a batch's response
    unknown = bytes([15 << 3 | 0, 7])
    item = messages[0].SerializeToString() + unknown
    inner = framing.message_field(1, item) + unknown
    for later in (singles[0] + unknown, framing.message_field(11, inner)):
        assert _read(later, options) == _expected(later)


def test_what_the_native_reader_leaves_goes_to_protobuf() -> None:
    _native()
    _, messages = _game_messages(2, seed=5)
    decision = messages[6].SerializeToString()
    event = messages[7].SerializeToString()
    request = messages[6].decision_request
    by_code = play_pb2.DecisionRequest()
    by_code.CopyFrom(request)
    card = by_code.legal_actions[0].action.card
    card.ClearField("suit")  # a card by its code alone: valid, not as the server writes it
    nested = PlayResponse(
        batch=match_service_pb2.PlayResponseBatch(
            responses=[PlayResponse(batch=match_service_pb2.PlayResponseBatch())]
        )
    )
    refused = {
        "two bodies": decision + event,  # protobuf keeps the last: left to it
        "a repeated decision id": PlayResponse(decision_request=request).SerializeToString()
        + bytes([6 << 3 | 2, 2, 1 << 3, 9]),
        "a card by its code": PlayResponse(decision_request=by_code).SerializeToString(),
        "a nested batch": nested.SerializeToString(),
        "cut short": decision[:-3],
        "no body": bytes([15 << 3 | 0, 7]),
        "an empty message": b"",
        "a body of the wrong wire type": bytes([4 << 3 | 0, 7]),
        "an acceptance cut inside": bytes([7 << 3 | 2, 1, 1 << 3]),
        "an event cut inside": bytes([4 << 3 | 2, 2, 10 << 3 | 2, 5]),
    }
    for why, data in refused.items():
        assert read_entries(data) is None, why


def test_a_native_reader_older_than_the_kit_is_not_used() -> None:
    """An editable install not rebuilt after a pull has a _decode without play and
    submit: the kit must read its stream through protobuf, not fail at import."""
    _native()
    assert kit_stream.current(convert.native_reader)
    old = types.SimpleNamespace(setup=print, decision=print)  # the module before play
    assert not kit_stream.current(old) and not kit_stream.current(None)


def test_answers_are_written_as_protobuf_writes_them() -> None:
    def reference(decision_id: int, choice: int | RawAnswer) -> bytes:
        action = play_pb2.SubmitAction(decision_id=decision_id)
        if isinstance(choice, RawAnswer):
            if choice.index is not None:
                action.legal_action_index = choice.index
            else:
                action.notation = choice.text
        else:
            action.legal_action_index = choice
        return match_service_pb2.PlayRequest(submit_action=action).SerializeToString()

    ids = [0, 1, 127, 128, 300, 2**32, 2**64 - 1]
    choices: list[int | RawAnswer] = [0, 1, 127, 128, 4095, 2**32 - 1, RawAnswer("5H", 3)]
    choices.append(RawAnswer("zz"))
    for decision_id in ids:
        for choice in choices:
            assert submit_bytes(decision_id, choice) == reference(decision_id, choice)


# ---- a scripted server ----------------------------------------------------------------


def _script(players_in_view: int) -> tuple[Options, list[bytes], list[int]]:
    """Three decision requests: one whose view says ``players_in_view`` players (read
    natively, refused by the view's check), one with a card listed twice in the hand (left
    to protobuf, refused by the Python reader), inside a batch with events, and a good one;
    and their default indices."""
    options, messages = _game_messages(2, seed=9)
    requests = [m.decision_request for m in messages if m.WhichOneof("body") == "decision_request"]
    wrong_players, twice, good = (play_pb2.DecisionRequest() for _ in range(3))
    wrong_players.CopyFrom(requests[3])
    wrong_players.view.players = players_in_view
    twice.CopyFrom(requests[4])
    twice.view.hand.append(twice.view.hand[0])
    good.CopyFrom(requests[5])
    for r in (wrong_players, twice, good):
        r.default_action_index = len(r.legal_actions) - 1
    batch = PlayResponse(
        batch=match_service_pb2.PlayResponseBatch(
            responses=[
                PlayResponse(event=events_pb2.Event(sequence=40)),
                PlayResponse(decision_request=twice),
                PlayResponse(event=events_pb2.Event(sequence=41)),
            ]
        )
    )
    frames = [
        PlayResponse(decision_request=wrong_players).SerializeToString(),
        batch.SerializeToString(),
        PlayResponse(decision_request=good).SerializeToString(),
    ]
    return options, frames, [r.default_action_index for r in (wrong_players, twice, good)]


async def _scripted(
    frames: list[bytes], options: Options, answers: list[play_pb2.SubmitAction], policy: Recorder
) -> MatchOutcome:
    """A server that plays ``frames`` to one bot and notes its answers."""

    async def play(requests: AsyncIterator[bytes], context: object) -> AsyncIterator[bytes]:
        incoming = requests.__aiter__()
        hello = match_service_pb2.PlayRequest.FromString(await incoming.__anext__())
        assert hello.WhichOneof("body") == "hello"
        welcome = play_pb2.Welcome(protocol_version=PROTOCOL_VERSION, seat=0, match_id="m")
        yield PlayResponse(welcome=welcome).SerializeToString()
        new_game = play_pb2.NewGame(game_number=1, rules=options_to_proto(options))
        yield PlayResponse(new_game=new_game).SerializeToString()
        for frame in frames:
            yield frame
            if frame.startswith(b"\x32") or frame.startswith(b"\x5a"):  # a decision, a batch
                answer = await anext(incoming, None)
                if answer is None:  # the bot left
                    return
                answers.append(match_service_pb2.PlayRequest.FromString(answer).submit_action)
        result = match_pb2.MatchResult(match_id="m", winner_side=0, games_won=[1, 0])
        yield PlayResponse(match_result=result).SerializeToString()
        goodbye = play_pb2.Goodbye(reason=play_pb2.GOODBYE_REASON_MATCH_FINISHED)
        yield PlayResponse(goodbye=goodbye).SerializeToString()

    server = grpc.aio.server()
    handler = grpc.method_handlers_generic_handler(
        "cirulla.v1.MatchService", {"Play": grpc.stream_stream_rpc_method_handler(play)}
    )
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        client = BotClient(policy, server=f"127.0.0.1:{port}", match_id="m", token="t", retries=0)
        return await client.run_async()
    finally:
        await server.stop(None)


def kit_log(record: logging.LogRecord) -> bool:
    return record.name == "cirulla.bots.kit"  # (not the scripted server's gRPC)


@pytest.mark.parametrize("observe", [False, True])
def test_a_decision_that_cannot_be_read_gets_the_default_action_and_one_line(
    observe: bool, caplog: pytest.LogCaptureFixture
) -> None:
    options, frames, defaults = _script(players_in_view=3)
    answers: list[play_pb2.SubmitAction] = []
    policy = Recorder(RandomPolicy(3), observe)
    with caplog.at_level(logging.INFO, "cirulla.bots.kit"):
        outcome = asyncio.run(_scripted(frames, options, answers, policy))
    assert [a.legal_action_index for a in answers[:2]] == defaults[:2]
    assert len(policy.seen) == 1 and answers[2].legal_action_index == policy.seen[0][2]
    assert outcome.decisions == 1 and outcome.winner_side == 0
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR and kit_log(r)]
    assert len(errors) == 2 and all("\n" not in e for e in errors)
    assert "view.players: 3, but the rules say 2" in errors[0]
    assert "playing the default action" in errors[0]
    assert "view.hand" in errors[1] and "listed twice" in errors[1]


@pytest.mark.parametrize("observe", [False, True])
def test_a_message_protobuf_cannot_parse_stops_the_bot_with_a_clear_error(
    observe: bool, caplog: pytest.LogCaptureFixture
) -> None:
    options, frames, _ = _script(players_in_view=2)
    answers: list[play_pb2.SubmitAction] = []
    garbage = bytes([6 << 3 | 2, 3, 0xFF, 0xFF, 0xFF])  # a decision request cut inside a varint
    with (
        caplog.at_level(logging.INFO, "cirulla.bots.kit"),
        pytest.raises(BotError, match="the server sent a message the kit cannot read"),
    ):
        asyncio.run(
            _scripted([frames[2], garbage], options, answers, Recorder(GreedyPolicy(), observe))
        )
    assert len(answers) == 1
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR and kit_log(r)]
    assert len(errors) == 1 and "cannot read" in errors[0] and "\n" not in errors[0]
