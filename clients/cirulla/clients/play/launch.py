"""``cirulla play`` without a server: a local match server, the match, the bot processes.

The same machinery as the tournament (``clients.supervise``): the server and every bot
are child processes in their own process groups, with their output in log files, so
nothing but the table appears in the terminal and everything stops with the game.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import grpc

from cirulla.bots.botspec import BotSpec
from cirulla.clients.matches.schedule import bot_seed, new_bot_seed_base
from cirulla.clients.matches.seat_argv import bot_argv, seat_env, seat_values
from cirulla.clients.matches.supervise import Child, LocalServer
from cirulla.rules import Options
from cirulla.v1 import match_service_pb2, match_service_pb2_grpc, match_settings_pb2
from cirulla.wire import rules_to_proto


def seat_specs(vs: list[str], seats: int) -> list[str]:
    """One bot spec per bot seat: the ``--vs`` list, its last entry repeated."""
    specs = list(vs) or ["greedy"]
    if len(specs) > seats:
        raise ValueError(f"--vs: {len(specs)} bots given but the game has {seats} other seats")
    return specs + [specs[-1]] * (seats - len(specs))


@dataclass
class LocalGame:
    """A local server with one match: the human's seat open, a bot process on the others.

    With ``seat=None`` every seat is a bot (a game to watch).
    """

    vs: list[str]
    preset: str = "standard"
    overrides: dict[str, object] = field(default_factory=dict)
    seat: int | None = 0
    seed: int | None = None
    workdir: Path | None = None
    address: str = ""
    match_id: str = ""
    token: str = ""
    children: list[Child] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.options = Options.preset(self.preset, **self.overrides)  # checks them
        players = self.options.players
        if self.seat is not None and not 0 <= self.seat < players:
            raise ValueError(f"--seat: {self.seat} is not a seat 0..{players - 1}")
        # each spec parsed once, here where it enters (a ValueError names a bad one)
        self.specs = [
            BotSpec.parse(spec) for spec in seat_specs(self.vs, players - (self.seat is not None))
        ]
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self.server: LocalServer | None = None

    def start(self) -> LocalGame:
        if self.workdir is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="cirulla-play-")
            self.workdir = Path(self._tmp.name)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.server = LocalServer(self.workdir / "play.sqlite3", self.workdir / "server.log")
        try:
            self.address = self.server.start()
            settings = match_settings_pb2.MatchSettings(
                rules=rules_to_proto(self.preset, {**self.overrides}),
                timeout_policy=match_settings_pb2.TIMEOUT_POLICY_PLAY_DEFAULT_ACTION,
            )
            if self.seed is not None:
                settings.seed = self.seed
            with grpc.insecure_channel(self.address) as channel:
                stub = match_service_pb2_grpc.MatchServiceStub(channel)
                created = stub.CreateMatch(
                    match_service_pb2.CreateMatchRequest(settings=settings), timeout=10
                )
            self.match_id = created.match.match_id
            tokens = {t.seat: t.token for t in created.seat_tokens}
            self.token = tokens[self.seat] if self.seat is not None else ""
            others = [s for s in range(self.options.players) if s != self.seat]
            for seat, spec in zip(others, self.specs, strict=True):
                name = spec.text.split(":", 1)[0]
                values = seat_values(
                    server=self.address,
                    match=self.match_id,
                    token=tokens[seat],
                    seat=seat,
                    name=name,
                    seed=bot_seed(new_bot_seed_base(), 0, seat),  # never from the deal
                )
                log = self.workdir / f"bot-{seat}.log"
                self.children.append(Child(bot_argv(spec, values), log, seat_env(values)))
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        for child in self.children:
            child.stop(grace=1.0)
        self.children.clear()
        if self.server is not None:
            self.server.stop()
            self.server = None
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self) -> LocalGame:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
