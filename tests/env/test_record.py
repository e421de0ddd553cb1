"""A game recorded by a real match server replays through the environment to the same scores.

A real server (in process, ephemeral port) deals from explicit deck orders: the decks the
environment deals for its seed (``SplitmixDecks``). Real bots play every seat through the kit
over gRPC (greedy, random, and a ``policy:`` bot over the environments' encoding, whose every
observation and mask, built by the kit from the server's decision requests, must be the
environment's own at the same point of the replay). The game's record
is fetched with ``GetRecord`` and read the way ``cirulla replay`` reads it
(``records.replay_input``); then the environment, on each core, is stepped with the record's
actions from the same seed. At every action the seat to move is the recorded one; at every
new deal the observation's ``totals`` are the recorded deal totals; at the end the winner,
the rewards and the final totals are the record's. On the Python core, where the
environment keeps the rules core's ``Game``, every deal's score breakdown (cards, coins,
settebello, primiera, scope, grande, piccola, cappotto) and the decks used are compared too.
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import numpy as np
import pytest

from cirulla.bots.kit import run_bot
from cirulla.bots.specs import make_policy
from cirulla.env.vector import ENV_CORE, Env, SplitmixDecks, episode_seed, make_options
from cirulla.rules import CARD_NAMES
from cirulla.rules.encoding import OBS_FIELDS
from cirulla.server import records
from cirulla.v1 import cards_pb2, match_settings_pb2, rules_pb2
from cirulla.v1 import match_service_pb2 as ms
from tests.server_harness import serving

CORES = ["python", "native"] if ENV_CORE == "native" else ["python"]
SEED = 11
TARGET = 31
TOTALS, _ = OBS_FIELDS["totals"]
DEAL, _ = OBS_FIELDS["deal"]


#: What the policy bot was given at each of its decisions, over the protocol.
SEEN: list[tuple[np.ndarray, np.ndarray]] = []
POLICY_SEAT = 1


def first_legal(obs: np.ndarray, mask: np.ndarray) -> int:
    """A ``policy:model=MODULE:FUNC`` policy for the test: the lowest legal index."""
    SEEN.append((obs.copy(), mask.copy()))
    return int(np.flatnonzero(mask)[0])


def env_decks(players: int, count: int = 60) -> list[list[int]]:
    source = SplitmixDecks(episode_seed(SEED, 0))
    return [source.next_deck(n) for n in range(1, count + 1)]


def recorded_game(players: int) -> Any:
    """Play one game on a real server with real bots; return its ``Record``."""
    decks = [
        match_settings_pb2.DeckOrder(cards=[cards_pb2.Card(code=CARD_NAMES[c]) for c in deck])
        for deck in env_decks(players)
    ]
    settings = match_settings_pb2.MatchSettings(
        rules=rules_pb2.Rules(
            preset=rules_pb2.PRESET_STANDARD,
            overrides=rules_pb2.RuleOptions(players=players, target=TARGET),
        ),
        deck_orders=match_settings_pb2.DeckOrders(decks=decks),
        first_dealer=players - 1,  # the environment's first dealer
    )
    specs = itertools.cycle(
        [("greedy", {}), ("policy", {"model": f"{__name__}:first_legal"}), ("random", {})]
    )

    async def main() -> Any:
        async with serving(":memory:") as (stub, srv, _ch):
            reply = await stub.CreateMatch(ms.CreateMatchRequest(settings=settings))
            address = f"127.0.0.1:{srv.port}"
            seats = sorted(reply.seat_tokens, key=lambda t: t.seat)
            outcomes = await asyncio.gather(
                *[
                    asyncio.to_thread(
                        run_bot,
                        make_policy(kind, options, seed=t.seat),
                        server=address,
                        match_id=reply.match.match_id,
                        token=t.token,
                        name=f"{kind}-{t.seat}",
                        log_level="warning",
                    )
                    for t, (kind, options) in zip(seats, specs, strict=False)
                ]
            )
            # every seat played its decisions itself: nothing defaulted, nothing rejected
            assert all(o.decisions > 0 for o in outcomes), outcomes
            assert all(o.defaults_played == o.rejected == 0 for o in outcomes), outcomes
            assert len({o.winner_side for o in outcomes}) == 1, outcomes
            listed = await stub.ListRecords(ms.ListRecordsRequest(match_id=reply.match.match_id))
            (summary,) = listed.records
            got = await stub.GetRecord(ms.GetRecordRequest(record_id=summary.record_id))
            return got.record

    return asyncio.run(main())


@pytest.mark.parametrize("players", [2, 4])
def test_a_server_record_replays_through_the_environment(players: int) -> None:
    SEEN.clear()
    record = recorded_game(players)
    seen = list(SEEN)
    game = records.replay_input(record)  # what `cirulla replay` checks
    options = make_options(players, target=TARGET)
    assert game["options"] == options.to_dict()
    assert game["first_dealer"] == players - 1
    assert game["decks"] == env_decks(players)[: len(game["decks"])]
    deal_totals = [d["totals"] for d in game["deals"]]
    assert len(deal_totals) >= 2 and game["result"]["winner"] is not None  # several deals
    for core in CORES:
        env = Env(options, seed=SEED, core=core)
        seen_totals: list[list[int]] = []
        scores: list[dict[str, Any]] = []
        last_score = None
        deal = 1
        asked = iter(seen)
        for n, act in enumerate(game["actions"]):
            assert env.to_move == act["seat"], (core, n)
            if act["seat"] == POLICY_SEAT and len(env.legal.codes) > 1:
                # the kit built, from the server's decision request, the environment's own
                # observation and mask (forced moves are played by the server unasked)
                obs, mask = next(asked)
                assert np.array_equal(obs, env.observe(POLICY_SEAT)), (core, n)
                assert np.array_equal(mask.astype(np.uint8), env.mask()), (core, n)
            obs = env.observe(0)
            if int(obs[DEAL]) != deal:  # a new deal: the last one's totals are in
                deal = int(obs[DEAL])
                seen_totals.append([int(v) for v in obs[TOTALS : TOTALS + options.sides]])
            legal = env.legal
            index = legal.indices[legal.codes.index(act["code"])]
            if index >= 0:
                env.step(index)  # the fixed index, as a learner plays
            else:
                env.step_code(act["code"])
            if env.game is not None and env.game.last_score is not last_score:
                last_score = env.game.last_score
                assert last_score is not None
                scores.append(last_score.to_dict())
        assert env.to_move is None, core  # the record's actions end the game
        assert next(asked, None) is None and len(seen) > 10  # every decision compared
        final = env.observe(0)
        seen_totals.append([int(v) for v in final[TOTALS : TOTALS + options.sides]])
        assert seen_totals == deal_totals, core
        assert seen_totals[-1] == game["result"]["totals"], core
        assert env.winner == game["result"]["winner"], core
        side_of = options.side_of
        assert env.rewards() == [
            1.0 if side_of(s) == env.winner else -1.0 for s in range(players)
        ], core
        if env.game is not None:  # the Python core keeps the rules core's Game
            assert env.game.decks_used == game["decks"]
            assert [a["code"] for a in game["actions"]] == [c for _, c in env.game.history]
            assert env.game.totals == game["result"]["totals"]
            assert scores == [d["score"] for d in game["deals"]]
